"""How a config's tool lists (names and globs) map to the tools the sources provide."""

from __future__ import annotations

import fnmatch
from collections.abc import Callable, Mapping

from .._suggest import did_you_mean
from ..config import MetaToolsConfig
from ..exceptions import ConfigError
from ..tools.base import BaseTool
from ..tools.schema import RESERVED_TOOL_NAMES

__all__ = ["resolve_tools"]


def resolve_tools(
    config: MetaToolsConfig,
    available: Mapping[str, BaseTool],
    *,
    placeholder: Callable[[str], BaseTool | None] | None = None,
    strict: bool = True,
) -> tuple[dict[str, list[BaseTool]], list[str]]:
    """Map each category's tool names and globs to tools.

    Returns the tools per category and warnings (tools listed in no category).
    `placeholder(name)` may stand in for a listed name that is not available
    yet (an MCP server not listed so far); while it is given, a glob that
    matches nothing is not a problem. With `strict=False` problems become
    warnings and the names are left out.

    Raises:
        ConfigError: (strict) a listed name or glob that no source provides, with close names.
    """
    problems: list[str] = []
    standing_in: dict[str, BaseTool] = {}
    chosen: dict[str, list[BaseTool]] = {}
    used: set[str] = set()
    for category, spec in config.categories.items():
        names: list[str] = []
        for index, pattern in enumerate(spec.tools):
            where = f'$."{category}".tools[{index}]'
            if any(ch in pattern for ch in "*?["):
                matched = [n for n in available if fnmatch.fnmatchcase(n, pattern)]
                if not matched and placeholder is None:
                    problems.append(f"{where}: pattern {pattern!r} matches no tool")
                names.extend(n for n in matched if n not in names)
            elif pattern in available or pattern in standing_in:
                if pattern not in names:
                    names.append(pattern)
            elif placeholder is not None and (stand_in := placeholder(pattern)) is not None:
                standing_in[pattern] = stand_in
                names.append(pattern)
            else:
                hint = did_you_mean(pattern, available)
                hint = f"; {hint}" if hint else ""
                problems.append(
                    f"{where}: tool {pattern!r} is listed but no source provides it{hint}"
                )
        for index, pinned in enumerate(spec.pinned):
            if pinned not in names:
                problems.append(
                    f'$."{category}".pinned[{index}]: {pinned!r} is not one of this category\'s tools'
                )
        problems.extend(_reserved(category, spec.tools, names))
        names = [n for n in names if n not in RESERVED_TOOL_NAMES]
        chosen[category] = [available[n] if n in available else standing_in[n] for n in names]
        used.update(names)
    if problems and strict:
        raise ConfigError(config.source, problems)
    warnings = [
        f"tool {name!r} is provided but listed in no category"
        for name in available
        if name not in used
    ]
    return chosen, problems + warnings


def _reserved(category: str, listed: list[str], names: list[str]) -> list[str]:
    """A tool that took a control call's name cannot be offered (Python tools; MCP ones are renamed)."""
    return [
        f'$."{category}".tools[{listed.index(n) if n in listed else 0}]: the tool name {n!r}'
        f" is reserved for the category's control calls ({', '.join(sorted(RESERVED_TOOL_NAMES))});"
        " rename the tool"
        for n in names
        if n in RESERVED_TOOL_NAMES
    ]
