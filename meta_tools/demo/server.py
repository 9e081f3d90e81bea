"""Assemble the demo MCP server: fifteen offline, deterministic tools in four groups."""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any

from mcp.server.mcpserver import MCPServer

from . import dates, numbers, text
from .files import FileSandbox

__all__ = ["ROOT_ENV", "TOOL_GROUPS", "build_server"]

ROOT_ENV = "META_TOOLS_DEMO_ROOT"

TOOL_GROUPS: dict[str, tuple[str, ...]] = {
    "numbers": ("convert_units", "calculate", "describe_numbers"),
    "dates": (
        "convert_time_zone",
        "date_difference",
        "shift_date",
        "describe_date",
        "month_calendar",
    ),
    "text": ("text_statistics", "search_text", "compare_texts"),
    "files": ("list_files", "read_file", "search_files", "file_info"),
}
"""The tools of each group (its module: `numbers`, `dates`, `text`; `files`: the sandbox),
in the order they are registered. The categories that group them are in `categories`."""

INSTRUCTIONS = (
    "Offline utility tools: unit conversion and arithmetic; dates, time zones and calendars; "
    "text statistics and search; reading files under one sandbox folder. "
    "Every tool is deterministic: the same input gives the same output."
)


def build_server(
    root: str | os.PathLike[str] | None = None, *, name: str = "meta-tools-demo"
) -> MCPServer:
    """The demo server; file tools are confined to `root` (default: $META_TOOLS_DEMO_ROOT or the cwd).

    Raises:
        ValueError: `root` is not a directory.
    """
    folder = Path(root or os.environ.get(ROOT_ENV) or Path.cwd())
    sandbox = FileSandbox(folder)
    server: MCPServer = MCPServer(
        name, instructions=INSTRUCTIONS, version="1.0.0", log_level="WARNING"
    )
    providers: dict[str, Any] = {"numbers": numbers, "dates": dates, "text": text, "files": sandbox}
    for group, names in TOOL_GROUPS.items():
        for tool_name in names:
            server.add_tool(getattr(providers[group], tool_name), name=tool_name)
    return server
