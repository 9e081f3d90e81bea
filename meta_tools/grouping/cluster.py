"""Size-bounded agglomerative clustering over *units*: k groups of tools, none above a size bound.

A unit is a set of tools that should stay together: the tools of one MCP
server (a category run can chain only the tools of its own category, and a
server's tools share state: a browser's `navigate` and `click`). A server too
big for one group comes as one unit per tool.

How: every unit starts as a group; the two most similar groups whose tools
fit under the bound are merged, again and again, until k groups remain. Two
groups are as similar as the cosine of their summed TF-IDF vectors (centroid
linkage): a group's direction is the words its tools share, whatever its size.

Why merging rather than k-means: the closest neighbours (two weather APIs,
two PDF servers) are merged first, so they end up together, where a k-means
boundary can fall between them; group sizes follow the topics (many small
tight groups, a few large broad ones) within the bound, instead of being
pulled towards equal sizes. Measured against size-bounded k-means on three
public catalogs, it routes better on all three (`python -m benchmarks
grouping`); average linkage and Ward routed worse than centroid linkage. A tool like no other (an empty or
foreign-language description) would stay a group of one: it joins its
closest group instead. It needs no random start (ties go to the
earlier unit), so the same tools always give the same groups. Only numpy is needed.

Cost: one units × units matrix of dot products (8 bytes each: 42 MB for 2,300
units, 200 MB for 5,000), and per merge one row and column updated and only
the rows that lost their closest group searched again, when they come to the
top (`Merging`): about 1.5 × units² cosines in all, also when every pair is a
tie. Seal-Tools' 4,076 tools (2,276 servers) are grouped in seconds; 5,000
tools that all read alike, the worst case, in about 12 s on two busy cores
(`python -m benchmarks grouping`, its scale table).
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from typing import TYPE_CHECKING, Any

from .features import normalise

if TYPE_CHECKING:
    import numpy.typing as npt

__all__ = ["Merging", "automatic_k", "default_max_size", "dot_products", "merge_units"]


def automatic_k(count: int) -> int:
    """About √n groups of about √n tools: the main agent and each category choose among as many."""
    return max(1, min(count, math.ceil(math.sqrt(count))))


def default_max_size(count: int, k: int) -> int:
    """Half again the mean group size: room for uneven topics, no giant catch-all."""
    return max(1, math.ceil(1.5 * count / max(k, 1)))


def merge_units(
    tools: npt.NDArray[Any], members: Sequence[Sequence[int]], k: int, *, max_size: int
) -> list[int]:
    """A group label in `range(k)` per tool; no group gets more than `max_size` tools.

    `tools` are unit-length TF-IDF rows; `members[u]` lists the tools (row
    numbers) of unit `u`, every tool in exactly one unit and no unit above
    `max_size`. A tool left alone once k groups remain resembles no group
    enough to be merged: it does not earn a category of its own, so the
    grouping is made again without it (at most `_OUTLIER_ROUNDS` times) and it
    then joins the group closest to it.

    Raises:
        ValueError: `k * max_size` cannot hold every tool, or k is not in 1..tools.
    """
    count = len(tools)
    if not 1 <= k <= max(count, 1):
        raise ValueError(f"k must be between 1 and the number of tools ({count}), got {k}")
    if k * max_size < count:
        raise ValueError(f"{k} groups of at most {max_size} cannot hold {count} tools")
    units = [list(m) for m in members]
    groups = _merged(tools, units, k, max_size)
    outliers: list[int] = []
    for _round in range(_OUTLIER_ROUNDS):
        single = {u[0] for u in units if len(u) == 1}  # not a tool of a split server
        alone = {g[0] for g in groups if len(g) == 1} & single
        if not alone or count - len(outliers) - len(alone) < 2 * k:
            break  # none, or too few tools left for k groups of two
        outliers.extend(sorted(alone))
        units = [u for u in units if not (len(u) == 1 and u[0] in alone)]
        groups = _merged(tools, units, k, max_size)
    labels = [0] * count
    for label, group in enumerate(
        sorted(sorted(g) for g in _place(tools, groups, outliers, max_size))
    ):
        for position in group:
            labels[position] = label
    return labels


_OUTLIER_ROUNDS = 3
"""Enough for the catalogs measured (the second round finds one or none); bounds the time."""


def _merged(
    tools: npt.NDArray[Any], units: list[list[int]], k: int, max_size: int
) -> list[list[int]]:
    """Exactly k groups of the units' tools: merged closest first, then, if no two groups
    fit together, the smallest spread tool by tool (with fewer units than k, the
    largest units are split into single tools first)."""
    import numpy as np

    groups = _enough_units(units, k)
    sums = np.stack([tools[g].sum(axis=0) for g in groups])
    merging = Merging(dot_products(sums), np.asarray([len(g) for g in groups]), max_size)
    while merging.alive_count > k:
        pair = merging.closest_pair()
        if pair is None:
            break
        merging.merge(*pair)
        groups[pair[0]] = [*groups[pair[0]], *groups[pair[1]]]
    kept = [sorted(groups[u]) for u in np.flatnonzero(merging.alive).tolist()]
    while len(kept) > k:  # no two groups fit together: spread the smallest one
        smallest = min(range(len(kept)), key=lambda g: (len(kept[g]), g))
        rest = [g for i, g in enumerate(kept) if i != smallest]
        kept = _place(tools, rest, kept[smallest], max_size)
    return kept


def dot_products(sums: npt.NDArray[Any]) -> npt.NDArray[Any]:
    """The dot products of the rows of `sums` (float32) as float64: 8 bytes an entry at the
    peak, not 12.

    They are the float32 products, bit for bit those of `(sums @ sums.T).astype(float64)`
    (so the groups are the same), written into the first half of the float64
    matrix's own memory and widened in place from the end, each step at most half
    of what is left: no step writes over a product it has not widened yet.
    """
    import numpy as np

    count = len(sums)
    dots = np.empty((count, count))
    flat = dots.reshape(-1)
    narrow = flat.view(np.float32)
    np.matmul(sums, sums.T, out=narrow[: count * count].reshape(count, count))
    stop = count * count
    while stop > 0:
        start = max(stop - _CHUNK * count, stop // 2)
        flat[start:stop] = narrow[start:stop]
        stop = start
    return dots


def _enough_units(members: Sequence[Sequence[int]], k: int) -> list[list[int]]:
    """The units as lists, the largest split into single tools while there are fewer than k."""
    units = [list(m) for m in members]
    while len(units) < k:
        largest = max(range(len(units)), key=lambda u: (len(units[u]), -u))
        units[largest : largest + 1] = [[p] for p in units[largest]]
    return units


class Merging:
    """Groups being merged: their dot products and sizes, and for each group its closest later one.

    `dots[a, b]` is the dot product of the summed vectors of groups a and b, so
    the cosine of two groups is `dots[a, b] / √(dots[a, a] dots[b, b])` and a
    merge adds one row (and column) to another.

    Each pair is looked at from its earlier group only: `best[a]` is the closest
    group after `a` that fits with it, `score[a]` their cosine. A merge changes
    the cosines of one group, so only the rows that pointed at the two merged
    groups lose their closest; they are not searched again at once (when many
    tools read alike, most rows point at the same growing group) but marked
    stale, their old score kept as an upper bound, and searched again only if
    that bound comes to the top. The pair merged is still the one a full search
    would find (ties go to the earlier pair). Searching every row that lost its
    closest after each merge made the work grow as units³ (about units³ / 2
    cosines when every pair is a tie); this way it took 1.5 to 2 × units² on
    every catalog and worst case tried (`cosines` counts them). Memory: the
    matrix and a few numbers per group.
    """

    def __init__(self, dots: npt.NDArray[Any], sizes: npt.NDArray[Any], max_size: int) -> None:
        import numpy as np

        count = len(sizes)
        self.dots = dots
        self.norms = np.sqrt(np.maximum(np.diag(dots), 1e-12))
        self.sizes = sizes.astype(np.int64)
        self.max_size = max_size
        self.alive = np.ones(count, dtype=bool)
        self.alive_count = count
        self.best = np.zeros(count, dtype=np.int64)
        self.score = np.full(count, -np.inf)
        self.stale = np.zeros(count, dtype=bool)
        self.cosines = 0
        """How many cosines were computed (the work done, for benchmarks and tests)."""
        for start in range(0, count, _CHUNK):
            self._search(start, min(start + _CHUNK, count))

    def _search(self, start: int, stop: int) -> None:
        """For each group in `start:stop`, its closest later group that fits."""
        import numpy as np

        rows = np.arange(start, stop)
        cosines = self.dots[start:stop, start:] / (
            self.norms[start:stop, None] * self.norms[None, start:]
        )
        sizes = self.sizes[start:stop, None] + self.sizes[None, start:]
        barred = (sizes > self.max_size) | ~self.alive[None, start:]
        barred |= np.arange(start, len(self.sizes))[None, :] <= rows[:, None]
        cosines[barred] = -np.inf
        self.cosines += cosines.size
        best = np.argmax(cosines, axis=1)
        self.best[start:stop] = best + start
        self.score[start:stop] = cosines[rows - start, best]
        self.stale[start:stop] = False

    def closest_pair(self) -> tuple[int, int] | None:
        """The two live groups with the highest cosine that fit together (earlier first).

        Of equal cosines, the pair whose earlier group comes first, then whose later one does.
        """
        import numpy as np

        while True:
            first = int(np.argmax(self.score))
            if not np.isfinite(self.score[first]):
                return None
            if not self.stale[first]:
                return first, int(self.best[first])
            self._search(first, first + 1)

    def merge(self, into: int, other: int) -> None:
        """Group `other` joins group `into` (`into < other`, as `closest_pair` gives them)."""
        import numpy as np

        dots = self.dots
        dots[into] += dots[other]
        # The matrix stays symmetric bit for bit (addition commutes), so the new column is
        # the new row but for the diagonal, which gets both: copying it passes over the
        # column once, where adding the other column passed over two.
        diagonal = dots[into, into] + dots[into, other]
        dots[:, into] = dots[into]
        dots[into, into] = diagonal
        self.sizes[into] += self.sizes[other]
        self.norms[into] = np.sqrt(max(diagonal, 1e-12))
        self.alive[other] = False
        self.alive_count -= 1
        self.score[other] = -np.inf
        # The rows before `into` see its new cosine in their column `into` (read along its row).
        column = dots[into, :into] / (self.norms[:into] * self.norms[into])
        self.cosines += into
        barred = (self.sizes[:into] + self.sizes[into] > self.max_size) | ~self.alive[:into]
        column[barred] = -np.inf
        best, score, stale = self.best[:into], self.score[:into], self.stale[:into]
        # Closer than their closest, or as close as an exact closest that is not before `into`.
        closer = (column > score) | (
            (column == score) & np.isfinite(column) & ~stale & (best >= into)
        )
        lost = ((best == into) | (best == other)) & ~closer
        best[closer], score[closer], stale[closer] = into, column[closer], False
        stale[lost] = True
        # The rows between the two lose `other`; `into` itself is searched again.
        self.stale[into + 1 : other] |= self.best[into + 1 : other] == other
        self._search(into, into + 1)


_CHUNK = 256
"""Rows searched at once when the merging starts: the work space stays 256 × groups."""


def _place(
    tools: npt.NDArray[Any], groups: list[list[int]], positions: Sequence[int], max_size: int
) -> list[list[int]]:
    """The groups with each of `positions` added to the most similar group with room.

    There is room while `k * max_size` holds every tool and there are at least k groups.
    """
    import numpy as np

    if not positions:
        return groups
    placed = [list(g) for g in groups]
    centres = normalise(np.stack([tools[g].sum(axis=0) for g in placed]))
    for position in positions:
        order = np.argsort(-(centres @ tools[position]), kind="stable").tolist()
        target = next(g for g in order if len(placed[g]) < max_size)
        placed[target].append(position)
    return placed
