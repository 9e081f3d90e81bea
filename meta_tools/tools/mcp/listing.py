"""A server's tool list: every page (bounded), and each remote tool under its router name."""

from __future__ import annotations

import logging

import mcp_types
from mcp import Client

from .tool import McpServerTool, ToolSource, tool_name_for

__all__ = ["list_remote_tools", "router_tools"]

logger = logging.getLogger("meta_tools.mcp")

_MAX_PAGES = 100
_MAX_TOOLS = 10_000


async def list_remote_tools(client: Client, server: str) -> list[mcp_types.Tool]:
    """Every tool the server lists, page by page, up to `_MAX_PAGES` pages and `_MAX_TOOLS` tools."""
    listed: list[mcp_types.Tool] = []
    cursor: str | None = None
    for _ in range(_MAX_PAGES):
        page = await client.list_tools(cursor=cursor, cache_mode="bypass")
        listed.extend(page.tools)
        cursor = page.next_cursor
        if cursor is None or len(listed) >= _MAX_TOOLS:
            break
    else:
        logger.warning("MCP server %r: stopped listing after %d pages", server, _MAX_PAGES)
    return listed[:_MAX_TOOLS]


def router_tools(
    source: ToolSource, listed: list[mcp_types.Tool], prefix: str | None
) -> tuple[dict[str, McpServerTool], list[str]]:
    """The listed tools by router name, and the names of those left out (task-only tools)."""
    tools: dict[str, McpServerTool] = {}
    left_out: list[str] = []
    for remote in listed:
        name = tool_name_for(remote.name, prefix)
        if remote.execution is not None and remote.execution.task_support == "required":
            left_out.append(remote.name)  # the SDK's client cannot call tools as tasks
            continue
        if name in tools:
            logger.warning(
                "MCP server %r: two tools map to %r; keeping the first", source.name, name
            )
            continue
        tools[name] = McpServerTool(source, remote, name)
    return tools, left_out
