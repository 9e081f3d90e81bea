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
earlier unit), so the same tools always give the same groups. It keeps one
units × units matrix of dot products and updates one row per merge: 2,300
units (4,000 tools) take a second or two and 40 MB. Only numpy is needed.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from typing import TYPE_CHECKING, Any

from .features import normalise

if TYPE_CHECKING:
    import numpy.typing as npt

__all__ = ["automatic_k", "default_max_size", "merge_units"]


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
    merging = _Merging(
        (sums @ sums.T).astype(np.float64), np.asarray([len(g) for g in groups]), max_size
    )
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


def _enough_units(members: Sequence[Sequence[int]], k: int) -> list[list[int]]:
    """The units as lists, the largest split into single tools while there are fewer than k."""
    units = [list(m) for m in members]
    while len(units) < k:
        largest = max(range(len(units)), key=lambda u: (len(units[u]), -u))
        units[largest : largest + 1] = [[p] for p in units[largest]]
    return units


class _Merging:
    """Groups being merged: their dot products, sizes, and each one's closest group that fits.

    `dots[a, b]` is the dot product of the summed vectors of groups a and b, so
    the cosine of two groups is `dots[a, b] / √(dots[a, a] dots[b, b])` and a
    merge adds one row (and column) to another.
    """

    def __init__(self, dots: npt.NDArray[Any], sizes: npt.NDArray[Any], max_size: int) -> None:
        import numpy as np

        self.dots = dots
        self.sizes = sizes.astype(np.int64)
        self.max_size = max_size
        self.alive = np.ones(len(sizes), dtype=bool)
        self.alive_count = len(sizes)
        everyone = np.arange(len(sizes))
        self.best, self.score = self._closest(everyone)

    def _cosines(self, rows: npt.NDArray[Any]) -> npt.NDArray[Any]:
        import numpy as np

        norms = np.sqrt(np.maximum(np.diag(self.dots), 1e-12))
        result: npt.NDArray[Any] = self.dots[rows] / (norms[rows, None] * norms[None, :])
        return result

    def _closest(self, rows: npt.NDArray[Any]) -> tuple[npt.NDArray[Any], npt.NDArray[Any]]:
        """For each row, the closest other live group it fits with, and their cosine.

        Rows are taken 256 at a time, so the work space stays 256 × groups.
        """
        import numpy as np

        best = np.zeros(len(rows), dtype=np.int64)
        score = np.zeros(len(rows))
        for start in range(0, len(rows), 256):
            chunk = rows[start : start + 256]
            cosines = self._cosines(chunk)
            sizes = self.sizes[chunk, None] + self.sizes[None, :]
            cosines[(sizes > self.max_size) | ~self.alive] = -np.inf
            cosines[np.arange(len(chunk)), chunk] = -np.inf
            best[start : start + 256] = np.argmax(cosines, axis=1)
            score[start : start + 256] = cosines[np.arange(len(chunk)), best[start : start + 256]]
        return best, score

    def closest_pair(self) -> tuple[int, int] | None:
        """The two live groups with the highest cosine that fit together (earlier first)."""
        import numpy as np

        scores = np.where(self.alive, self.score, -np.inf)
        first = int(np.argmax(scores))
        if not np.isfinite(scores[first]):
            return None
        second = int(self.best[first])
        return min(first, second), max(first, second)

    def merge(self, into: int, other: int) -> None:
        """Group `other` joins group `into`; every group's closest fit is brought up to date."""
        import numpy as np

        self.dots[into] += self.dots[other]
        self.dots[:, into] += self.dots[:, other]
        self.sizes[into] += self.sizes[other]
        self.alive[other] = False
        self.alive_count -= 1
        row = self._cosines(np.asarray([into]))[0]
        fits = self.alive & (self.sizes + self.sizes[into] <= self.max_size)
        fits[into] = False
        closer = np.flatnonzero(fits & (row > self.score))
        self.best[closer], self.score[closer] = into, row[closer]
        stale = np.flatnonzero(self.alive & ((self.best == into) | (self.best == other)))
        stale = np.union1d(stale, [into])
        self.best[stale], self.score[stale] = self._closest(stale)


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
