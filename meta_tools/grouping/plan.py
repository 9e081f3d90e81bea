"""From tools to proposed categories and the config that holds them."""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from dataclasses import replace
from typing import TYPE_CHECKING, Any, Literal

from ..tools.base import BaseTool
from .features import TermSpace, tool_terms, without_actions
from .name import Draft, draft_from_words, unique_names
from .propose import by_server, by_topic

__all__ = ["closer_to_kept", "config_with", "draft_categories", "named_apart"]

if TYPE_CHECKING:
    import numpy.typing as npt

PYTHON_SOURCE = "Python tools"


def draft_categories(
    tools: Sequence[BaseTool],
    sources: Sequence[str],
    *,
    by: Literal["topic", "server"] = "topic",
    k: int | None = None,
    max_size: int | None = None,
    taken: Iterable[str] = (),
) -> list[Draft]:
    """Categories for `tools` (`sources[i]` is tool i's MCP server, "" for a Python tool).

    `by="server"`: one category per server (Python tools and built-ins together),
    named after it. `by="topic"`: see `by_topic`; named from the tools' words.
    `taken`: category names already in use (the config's own, kept beside the
    drafts); no draft's name slugs like one of them.
    """
    if by == "server":
        grouping = by_server(tools, [s or PYTHON_SOURCE for s in sources])
        drafts = []
        for index, members in enumerate(grouping.groups):
            draft = draft_from_words(grouping, index, tools, sources)
            source = sources[members[0]] or PYTHON_SOURCE
            drafts.append(replace(draft, name=source))
    else:
        grouping = by_topic(tools, sources, k=k, max_size=max_size)
        drafts = [
            draft_from_words(grouping, i, tools, sources) for i in range(len(grouping.groups))
        ]
    return named_apart(drafts, taken=taken)


def named_apart(drafts: Sequence[Draft], *, taken: Iterable[str] = ()) -> list[Draft]:
    """The drafts with names distinct from each other and from `taken` (`Weather 2`).

    Also for drafts renamed since (by a model), which knows nothing of `taken`.
    """
    names = unique_names([d.name for d in drafts], taken=taken)
    return [replace(d, name=n) for d, n in zip(drafts, names, strict=True)]


def config_with(drafts: Sequence[Draft], sections: Mapping[str, Any]) -> dict[str, Any]:
    """A config file: the given sections as they were written, then one entry per category."""
    config = dict(sections)
    for draft in drafts:
        entry: dict[str, Any] = {"description": draft.description}
        if draft.tool_usage_notes:
            entry["tool_usage_notes"] = draft.tool_usage_notes
        entry["tools"] = list(draft.tools)
        config[draft.name] = entry
    return config


def closer_to_kept(
    drafts: Sequence[Draft],
    kept: Mapping[str, Sequence[BaseTool]],
    tools: Sequence[BaseTool],
) -> list[tuple[str, str]]:
    """(tool, kept category) for each drafted tool whose text is closer to that category.

    Closer: the cosine of the tool's TF-IDF vector (over all `tools`, without the actions
    any tool performs: `describe_numbers` is not like `describe_date`) with the summed
    vectors of the kept category's tools beats the one with the summed vectors of the
    other tools of its draft (none: any positive likeness counts). The user's own
    categories are kept as written, so `meta-tools group --only-ungrouped` says this
    rather than moving the tool there.
    """
    if not kept or not drafts:
        return []
    terms = [without_actions(tool_terms(t)) for t in tools]  # what they act on
    rows = TermSpace.fit(terms).vectors(terms)
    row = {t.name: rows[i] for i, t in enumerate(tools)}
    centres = {
        name: total
        for name, members in kept.items()
        if (total := _summed([row[t.name] for t in members if t.name in row])) is not None
    }
    found: list[tuple[str, str]] = []
    for draft in drafts:
        if (whole := _summed([row[n] for n in draft.tools])) is None:
            continue
        for name in draft.tools:
            # the draft's other tools are its sum less this one; a lone tool has none (its
            # sum less itself would be rounding noise, not zero)
            own = _cosine(row[name], whole - row[name]) if len(draft.tools) > 1 else 0.0
            scores = {c: _cosine(row[name], v) for c, v in centres.items()}
            best = max(scores, key=lambda c: scores[c], default=None)
            if best is not None and scores[best] > own and scores[best] > 0:
                found.append((name, best))
    return found


def _summed(vectors: Sequence[npt.NDArray[Any]]) -> npt.NDArray[Any] | None:
    """The sum of `vectors`, or None when there are none."""
    if not vectors:
        return None
    total: npt.NDArray[Any] = sum(vectors[1:], vectors[0])
    return total


def _cosine(row: npt.NDArray[Any], centre: npt.NDArray[Any]) -> float:
    """The cosine of a unit (or zero) row with a summed vector (0 when either is zero)."""
    import numpy as np

    norm = float(np.linalg.norm(centre))
    return float(row @ centre) / norm if norm else 0.0
