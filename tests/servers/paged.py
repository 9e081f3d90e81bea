"""A low-level MCP server that lists its tools three per page and answers in plain text."""

from __future__ import annotations

from typing import Any

import mcp_types
from mcp.server import Server, ServerRequestContext

PAGE = 3
NAMES = [f"tool_{i}" for i in range(7)] + ["broken"]


async def _list(
    ctx: ServerRequestContext[Any, Any], params: mcp_types.PaginatedRequestParams | None
) -> mcp_types.ListToolsResult:
    start = int(params.cursor) if params is not None and params.cursor else 0
    page = NAMES[start : start + PAGE]
    tools = [
        mcp_types.Tool(
            name=name,
            description=f"Tool number {name[-1]}." if name != "broken" else "Always fails.",
            input_schema={
                "type": "object",
                "properties": {"word": {"type": "string", "description": "A word."}},
                "required": ["word"],
            },
        )
        for name in page
    ]
    more = start + PAGE < len(NAMES)
    return mcp_types.ListToolsResult(tools=tools, next_cursor=str(start + PAGE) if more else None)


async def _call(
    ctx: ServerRequestContext[Any, Any], params: mcp_types.CallToolRequestParams
) -> mcp_types.CallToolResult:
    word = (params.arguments or {}).get("word", "")
    if params.name == "broken":
        text = f"broken cannot handle {word!r}"
        return mcp_types.CallToolResult(content=[mcp_types.TextContent(text=text)], is_error=True)
    return mcp_types.CallToolResult(
        content=[
            mcp_types.TextContent(text=f"{params.name} says {word}"),
            mcp_types.TextContent(text="second block"),
        ]
    )


def build() -> Server[Any]:
    return Server("paged", on_list_tools=_list, on_call_tool=_call)
