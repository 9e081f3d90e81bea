"""Propose groups of tools: one per source (`by_server`), or by what the tools do (`by_topic`)."""

from __future__ import annotations

import math
from collections import Counter
from collections.abc import Sequence
from dataclasses import dataclass, field

from ..category.shortlist import analyze
from ..tools.base import BaseTool
from .cluster import automatic_k, default_max_size, merge_units
from .features import TermSpace, tool_terms, without_actions

__all__ = ["Grouping", "by_server", "by_topic"]


@dataclass(frozen=True)
class Grouping:
    """Tool positions per group, and the term space the tools were read in (for naming)."""

    groups: list[list[int]]
    space: TermSpace
    terms: list[list[str]]
    """Each tool's terms: name, description and parameter names (what it is grouped by)."""
    said: list[frozenset[str]]
    """Each tool's terms from its name and description only (what it is named by)."""
    loose: frozenset[int] = frozenset()
    """The tools placed one by one though their source has others (`_one_by_one`)."""
    said_by: Counter[str] = field(default_factory=Counter)
    """How many tools say each term (filled from `said`)."""

    def __post_init__(self) -> None:
        for terms in self.said:
            self.said_by.update(terms)


def by_server(tools: Sequence[BaseTool], sources: Sequence[str]) -> Grouping:
    """One group per source, in the order sources first appear (what MCP gateways do)."""
    groups: dict[str, list[int]] = {}
    for position, source in enumerate(sources):
        groups.setdefault(source, []).append(position)
    terms = [tool_terms(t) for t in tools]
    return Grouping(list(groups.values()), _space(tools, terms), terms, _said(tools))


def by_topic(
    tools: Sequence[BaseTool],
    sources: Sequence[str],
    *,
    k: int | None = None,
    max_size: int | None = None,
) -> Grouping:
    """About `k` groups (automatic: about √n) of at most `max_size` tools, by what they do.

    Tools of one source (`sources[i]`, the MCP server; "" for a tool of its
    own) stay together unless the source alone is larger than `max_size`;
    then each of its tools is placed on its own. The same tools, in the same
    order, always give the same groups. `k` is raised when `k` groups of
    `max_size` cannot hold every tool.
    """
    count = len(tools)
    if count == 0:
        return Grouping([], TermSpace({}, (), {}), [], [])
    k = min(count, k or automatic_k(count))
    max_size = max_size or default_max_size(count, k)
    k = max(k, math.ceil(count / max_size))
    terms = [tool_terms(t) for t in tools]
    space = _space(tools, terms)
    units = _units(sources, max_size)
    loose = _one_by_one(units, sources)
    rows = space.vectors([without_actions(t) if p in loose else t for p, t in enumerate(terms)])
    labels = merge_units(rows, units, k, max_size=max_size)
    groups: dict[int, list[int]] = {}
    for position, label in enumerate(labels):
        groups.setdefault(label, []).append(position)
    return Grouping(list(groups.values()), space, terms, _said(tools), frozenset(loose))


def _one_by_one(units: list[list[int]], sources: Sequence[str]) -> set[int]:
    """The tools placed one by one although their source has others: Python tools (source "")
    and the tools of a server too large for one group.

    They are compared by what they act on, without the generic actions (`without_actions`):
    tools of one source share its domain's words, and then a shared verb (`search_text`,
    `search_files`) would decide their groups. A whole server keeps its verbs, which may
    be its purpose (a search engine searches).
    """
    per_source = Counter(sources)
    return {
        u[0] for u in units if len(u) == 1 and (not sources[u[0]] or per_source[sources[u[0]]] > 1)
    }


def _said(tools: Sequence[BaseTool]) -> list[frozenset[str]]:
    return [frozenset(analyze(f"{t.name.replace('_', ' ')} {t.description}")) for t in tools]


def _space(tools: Sequence[BaseTool], terms: list[list[str]]) -> TermSpace:
    texts = [f"{t.name} {t.description}" for t in tools]
    return TermSpace.fit(terms, texts=texts)


def _units(sources: Sequence[str], max_size: int) -> list[list[int]]:
    """Tools that stay together: each source's tools; a source above `max_size` tool by tool."""
    by_source: dict[str, list[int]] = {}
    units: list[list[int]] = []
    for position, source in enumerate(sources):
        if source:
            by_source.setdefault(source, []).append(position)
        else:
            units.append([position])
    for positions in by_source.values():
        if len(positions) <= max_size:
            units.append(positions)
        else:
            units.extend([p] for p in positions)
    return sorted(units)
