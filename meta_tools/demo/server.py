"""Assemble the demo MCP server: fifteen offline, deterministic tools in four groups."""

from __future__ import annotations

import os
from collections.abc import Callable
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
"""The tool names of each group, in the order they are registered."""

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
    functions: dict[str, Callable[..., Any]] = {
        "convert_units": numbers.convert_units,
        "calculate": numbers.calculate,
        "describe_numbers": numbers.describe_numbers,
        "convert_time_zone": dates.convert_time_zone,
        "date_difference": dates.date_difference,
        "shift_date": dates.shift_date,
        "describe_date": dates.describe_date,
        "month_calendar": dates.month_calendar,
        "text_statistics": text.text_statistics,
        "search_text": text.search_text,
        "compare_texts": text.compare_texts,
        "list_files": sandbox.list_files,
        "read_file": sandbox.read_file,
        "search_files": sandbox.search_files,
        "file_info": sandbox.file_info,
    }
    for group in TOOL_GROUPS.values():
        for tool_name in group:
            server.add_tool(functions[tool_name], name=tool_name)
    return server
