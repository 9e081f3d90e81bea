"""Size-bounded spherical k-means over *units*: k groups of tools, none above a size bound.

A unit is a set of tools that should stay together: the tools of one MCP
server (a category run can chain only the tools of its own category, and a
server's tools share state: a browser's `navigate` and `click`). A server too
big for one group comes as one unit per tool. Units are placed whole when a
group has room, else tool by tool.

Why k-means with capacities: it is given the number of groups (`--categories
K`) and keeps every group under the bound by construction, where a
hierarchical clustering cut at K has no size bound and must be split and
merged afterwards. It is deterministic for a seed (k-means++ seeding from a
seeded numpy generator, ties broken by position), and a round is two matrix
products (tools × terms by terms × k): thousands of tools take a few seconds.
Only numpy is needed.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from typing import TYPE_CHECKING, Any

from .features import normalise

if TYPE_CHECKING:
    import numpy as np
    import numpy.typing as npt

__all__ = ["automatic_k", "bounded_kmeans", "default_max_size"]


def automatic_k(count: int) -> int:
    """About √n groups of about √n tools: the main agent and each category choose among as many."""
    return max(1, min(count, math.ceil(math.sqrt(count))))


def default_max_size(count: int, k: int) -> int:
    """Half again the mean group size: room for uneven topics, no giant catch-all."""
    return max(1, math.ceil(1.5 * count / max(k, 1)))


def bounded_kmeans(
    tools: npt.NDArray[Any],
    units: npt.NDArray[Any],
    members: Sequence[Sequence[int]],
    k: int,
    *,
    max_size: int,
    seed: int = 0,
    restarts: int = 3,
    rounds: int = 30,
) -> list[int]:
    """A group label in `range(k)` per tool; no group gets more than `max_size` tools.

    `tools` and `units` are unit-length TF-IDF rows; `members[u]` lists the
    tools (row numbers) of unit `u`, every tool in exactly one unit. The best of
    `restarts` seeded runs, by total cosine similarity of tools to their group
    centre, is returned.

    Raises:
        ValueError: `k * max_size` cannot hold every tool, or k is not in 1..tools.
    """
    import numpy as np

    count = len(tools)
    if not 1 <= k <= max(count, 1):
        raise ValueError(f"k must be between 1 and the number of tools ({count}), got {k}")
    if k * max_size < count:
        raise ValueError(f"{k} groups of at most {max_size} cannot hold {count} tools")
    sizes = np.asarray([len(m) for m in members])
    rng = np.random.default_rng(seed)
    best: tuple[float, npt.NDArray[Any]] | None = None
    for _ in range(max(1, restarts)):
        centres = _seed_centres(units, sizes, k, rng)
        labels = np.full(count, -1)
        for _round in range(rounds):
            new = _assign(tools @ centres.T, units @ centres.T, members, max_size)
            settled = np.count_nonzero(new != labels) <= count // 500  # 0.2% still moving
            labels = new
            centres = _centres(tools, labels, k, centres)
            if settled:
                break
        score = float((tools * centres[labels]).sum())
        if best is None or score > best[0] + 1e-4:
            best = (score, labels)
    assert best is not None
    return _renumber([int(x) for x in best[1]])


def _seed_centres(
    units: npt.NDArray[Any], sizes: npt.NDArray[Any], k: int, rng: np.random.Generator
) -> npt.NDArray[Any]:
    """k-means++ on cosine distance, weighted by unit size: next centres far from the chosen."""
    import numpy as np

    count = len(units)
    dense = units
    k_units = min(k, count)
    chosen = [int(rng.choice(count, p=sizes / sizes.sum()))]
    distance = 1.0 - dense @ dense[chosen[0]]
    for _ in range(1, k_units):
        weights = sizes * np.clip(distance, 0.0, None) ** 2
        weights[chosen] = 0.0
        total = float(weights.sum())
        if total <= 0:  # every unit equals a centre already: take the first unused one
            pick = next(i for i in range(count) if i not in chosen)
        else:
            pick = int(rng.choice(count, p=weights / total))
        chosen.append(pick)
        distance = np.minimum(distance, 1.0 - dense @ dense[pick])
    centres = np.zeros((k, units.shape[1]), dtype=np.float32)
    centres[:k_units] = dense[chosen]
    return centres


def _claim_order(similarity: npt.NDArray[Any]) -> tuple[npt.NDArray[Any], npt.NDArray[Any]]:
    """Each row's groups best first, and the rows in order of how much their first choice matters.

    A row's claim is how much better its first choice is than its second, so
    when a group fills up, the rows that lose least by moving are the ones moved.
    """
    import numpy as np

    count, k = similarity.shape
    ordered = np.argsort(-similarity, axis=1, kind="stable")
    if k == 1:
        return ordered, np.arange(count)
    rows = np.arange(count)
    margin = similarity[rows, ordered[:, 0]] - similarity[rows, ordered[:, 1]]
    return ordered, np.lexsort((rows, -margin))


def _assign(
    tool_similarity: npt.NDArray[Any],
    unit_similarity: npt.NDArray[Any],
    members: Sequence[Sequence[int]],
    max_size: int,
) -> npt.NDArray[Any]:
    """Units to their most similar group with room for them all; a unit that fits nowhere
    is placed tool by tool (single tools always fit while `k * max_size` covers them)."""
    import numpy as np

    k = tool_similarity.shape[1]
    room = [max_size] * k
    labels = np.full(tool_similarity.shape[0], -1, dtype=np.int64)
    unit_groups, unit_turn = _claim_order(unit_similarity)
    leftovers: list[int] = []
    for unit in unit_turn.tolist():
        size = len(members[unit])
        group = next((g for g in unit_groups[unit].tolist() if room[g] >= size), None)
        if group is None:
            leftovers.extend(members[unit])
            continue
        room[group] -= size
        labels[list(members[unit])] = group
    if leftovers:
        chosen = np.asarray(sorted(leftovers))
        tool_groups, tool_turn = _claim_order(tool_similarity[chosen])
        for position in tool_turn.tolist():
            group = next(g for g in tool_groups[position].tolist() if room[g] > 0)
            room[group] -= 1
            labels[chosen[position]] = group
    return labels


def _centres(
    tools: npt.NDArray[Any], labels: npt.NDArray[Any], k: int, previous: npt.NDArray[Any]
) -> npt.NDArray[Any]:
    """Normalised means of each group's tools; an empty group takes the worst-placed tool."""
    import numpy as np

    centres = np.zeros_like(previous)
    onehot = np.zeros((k, len(labels)), dtype=np.float32)
    onehot[labels, np.arange(len(labels))] = 1.0
    centres = onehot @ tools
    sizes = np.bincount(labels, minlength=k)
    empty = np.flatnonzero(sizes == 0)
    if len(empty):
        fit = (tools * previous[labels]).sum(axis=1)
        for group in empty:
            worst = int(np.argmin(fit))
            centres[group] = tools[worst]
            fit[worst] = np.inf
    return normalise(centres)


def _renumber(labels: list[int]) -> list[int]:
    """Labels in order of first appearance, so equal groupings print the same."""
    mapping: dict[int, int] = {}
    return [mapping.setdefault(label, len(mapping)) for label in labels]
