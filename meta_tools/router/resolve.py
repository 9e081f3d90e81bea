"""How a config's tool lists (names and globs) map to the tools the sources provide."""

from __future__ import annotations

import fnmatch
import json
from collections.abc import Callable, Mapping

from ..config import MetaToolsConfig
from ..exceptions import ConfigError
from ..llm.types import RESERVED_TOOL_NAMES
from ..support.suggest import did_you_mean
from ..tools.base import BaseTool
from ..tools.mcp.tool import McpServerTool
from ..tools.wrapper import unwrap
from .unloaded import UnloadedTools

__all__ = ["resolve_tools"]


def resolve_tools(
    config: MetaToolsConfig,
    available: Mapping[str, BaseTool],
    *,
    placeholder: Callable[[str], BaseTool | None] | None = None,
    strict: bool = True,
    check_names: bool = True,
) -> tuple[dict[str, list[BaseTool]], list[str]]:
    """Map each category's tool names and globs to tools.

    Returns the tools per category and warnings (tools in no category: one line per source).
    `placeholder(name)` may stand in for a listed name that is not available
    yet (an MCP server not listed so far); while it is given, a glob that
    matches nothing is not a problem. With `strict=False` problems become
    warnings and the names are left out.
    `check_names=False` when a source could not be read (a `python_tools` module that
    does not import): a name it might provide is left out, not reported as missing.

    Raises:
        ConfigError: (strict) a listed name or glob that no source provides, with close names.
    """
    problems: list[str] = []
    standing_in: dict[str, BaseTool] = {}
    chosen: dict[str, list[BaseTool]] = {}
    used: set[str] = set()
    unloaded = UnloadedTools(config, available)  # read only if a name is missing
    for category, spec in config.categories.items():
        names: list[str] = []
        for index, pattern in enumerate(spec.tools):
            where = f'$."{category}".tools[{index}]'
            if any(ch in pattern for ch in "*?["):
                matched = [n for n in available if fnmatch.fnmatchcase(n, pattern)]
                if not matched and placeholder is None and check_names:
                    problems.append(f"{where}: pattern {pattern!r} matches no tool")
                names.extend(n for n in matched if n not in names)
            elif pattern in available or pattern in standing_in:
                if pattern not in names:
                    names.append(pattern)
            elif placeholder is not None and (stand_in := placeholder(pattern)) is not None:
                standing_in[pattern] = stand_in
                names.append(pattern)
            elif check_names:
                hints = (did_you_mean(pattern, available), unloaded.hint(pattern))
                hint = "".join(f"; {h}" for h in hints if h)
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
    return chosen, problems + _in_no_category(config, available, used)


_NAMES_SHOWN = 3
"""How many of a source's tools in no category its warning names."""


def _in_no_category(
    config: MetaToolsConfig, available: Mapping[str, BaseTool], used: set[str]
) -> list[str]:
    """One warning per source (an MCP server, the Python tools) of its tools in no category.

    Each names the source, how many, a few of them, and the config line that offers them:
    a server's `prefix_*` when it has a prefix and none of its tools is in a category, else
    the names.
    """
    by_server: dict[str | None, list[str]] = {}
    servers_used: set[str | None] = set()
    for name, tool in available.items():
        inner = unwrap(tool)
        server = inner.source.name if isinstance(inner, McpServerTool) else None
        if name in used:
            servers_used.add(server)
        else:
            by_server.setdefault(server, []).append(name)
    warnings = []
    for server, names in by_server.items():
        count, some = len(names), ", ".join(map(repr, names[:_NAMES_SHOWN]))
        more = f" and {count - _NAMES_SHOWN} more" if count > _NAMES_SHOWN else ""
        what = f"tool {some} is" if count == 1 else f"{count} tools ({some}{more}) are"
        listed = names[:_NAMES_SHOWN] + (["..."] if more else [])
        spec = config.mcp_servers.get(server) if server is not None else None
        if spec is not None and spec.prefix and server not in servers_used:
            listed = [f"{spec.prefix}_*"]
        them = "it" if count == 1 else "them"
        warnings.append(
            (f"MCP server {server!r}: " if server is not None else "")
            + f"{what} in no category, so no agent can call {them}; to offer {them}, add to"
            f' a category "tools": {json.dumps(listed)}'
        )
    return warnings


def _reserved(category: str, listed: list[str], names: list[str]) -> list[str]:
    """A tool that took a control call's name cannot be offered (Python tools; MCP ones are renamed)."""
    return [
        f'$."{category}".tools[{listed.index(n) if n in listed else 0}]: the tool name {n!r}'
        f" is reserved for the category's control calls ({', '.join(sorted(RESERVED_TOOL_NAMES))});"
        " rename the tool"
        for n in names
        if n in RESERVED_TOOL_NAMES
    ]
