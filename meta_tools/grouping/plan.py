"""From tools to proposed categories and the config that holds them."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import replace
from typing import Any, Literal

from ..tools.base import BaseTool
from .name import Draft, draft_from_words, unique_names
from .propose import by_server, by_topic

__all__ = ["config_with", "draft_categories"]

PYTHON_SOURCE = "Python tools"


def draft_categories(
    tools: Sequence[BaseTool],
    sources: Sequence[str],
    *,
    by: Literal["topic", "server"] = "topic",
    k: int | None = None,
    max_size: int | None = None,
) -> list[Draft]:
    """Categories for `tools` (`sources[i]` is tool i's MCP server, "" for a Python tool).

    `by="server"`: one category per server (Python tools and built-ins together),
    named after it. `by="topic"`: see `by_topic`; named from the tools' words.
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
    names = unique_names([d.name for d in drafts])
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
