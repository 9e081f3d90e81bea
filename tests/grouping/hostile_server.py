"""A stdio MCP server listing a large hostile catalog (issue 47, item 8).

    python tests/grouping/hostile_server.py [COUNT]    # default 5,000 tools

Every name is 64 characters and many slug alike (`Get-Weather…`, `get_weather…`); 40%
of the tools share one description; others have none, only invisible characters,
emoji, CJK or right-to-left overrides, or 1 KB of text. It answers no call.
"""

from __future__ import annotations

import sys
from typing import Any

import anyio
import mcp_types
from mcp.server import Server, ServerRequestContext
from mcp.server.stdio import stdio_server

WORDS = ("weather", "report", "file", "send", "mail", "stock", "price", "note", "map", "user")
SHARED = "Use this tool to get the data you need."


def name(index: int) -> str:
    """A 64-character name: half of them one long word and a number (`weatherweather…_00042`),
    the others two words spelled in ways that slug alike (`GET-weather`, `get_weather`)."""
    first, second = WORDS[index % len(WORDS)], WORDS[(index // len(WORDS)) % len(WORDS)]
    if index % 2 == 0:
        return f"{(first * 64)[:58]}_{index:05d}"
    spelled = (
        f"{first}_{second}",
        f"{first.upper()}-{second}",
        f"{first.capitalize()}{second.capitalize()}",
        f"{first}--{second}_",
    )[index // 2 % 4]
    return f"{spelled}_{index:05d}_".ljust(64, "x")


def description(index: int) -> str:
    match index % 10:
        case 0 | 1 | 2 | 3:
            return SHARED
        case 4:
            return ""
        case 5:
            return "\u200b\u200c\u2060 \u200b"
        case 6:
            return f"🚀🔥 {WORDS[index % 10]} ✨ 🌍🌍 {index}"
        case 7:
            return f"查询天气预报 {WORDS[index % 10]} 数据 {index}"
        case 8:
            return f"\u202e{WORDS[index % 10]} evil\u202c \u202dtext\u202c {index}"
        case _:
            return (f"{WORDS[index % 10]} " + "lorem ipsum dolor sit amet " * 40)[:1024]


def build(count: int) -> Server[Any]:
    tools = [
        mcp_types.Tool(
            name=name(i),
            description=description(i),
            input_schema={"type": "object", "properties": {"q": {"type": "string"}}},
        )
        for i in range(count)
    ]

    async def list_tools(
        ctx: ServerRequestContext[Any, Any], params: mcp_types.PaginatedRequestParams | None
    ) -> mcp_types.ListToolsResult:
        return mcp_types.ListToolsResult(tools=tools)

    return Server("hostile", on_list_tools=list_tools)


async def main(count: int) -> None:
    server = build(count)
    async with stdio_server() as (read, write):
        await server.run(read, write, server.create_initialization_options())


if __name__ == "__main__":
    anyio.run(main, int(sys.argv[1]) if len(sys.argv) > 1 else 5_000)
