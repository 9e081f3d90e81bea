"""A low-level MCP server with one plain tool and one that must be called as a task."""

from __future__ import annotations

from typing import Any

import mcp_types
from mcp.server import Server, ServerRequestContext

SCHEMA = {"type": "object", "properties": {"word": {"type": "string"}}, "required": ["word"]}


async def _list(
    ctx: ServerRequestContext[Any, Any], params: mcp_types.PaginatedRequestParams | None
) -> mcp_types.ListToolsResult:
    return mcp_types.ListToolsResult(
        tools=[
            mcp_types.Tool(name="echo", description="Echo a word.", input_schema=SCHEMA),
            mcp_types.Tool(
                name="research",
                description="A long job, only as a task.",
                input_schema=SCHEMA,
                execution=mcp_types.ToolExecution(task_support="required"),
            ),
        ]
    )


async def _call(
    ctx: ServerRequestContext[Any, Any], params: mcp_types.CallToolRequestParams
) -> mcp_types.CallToolResult:
    word = (params.arguments or {}).get("word", "")
    return mcp_types.CallToolResult(content=[mcp_types.TextContent(text=f"echo {word}")])


def build() -> Server[Any]:
    return Server("tasks", on_list_tools=_list, on_call_tool=_call)
