"""An MCP server that answers every tools/list with another tools/list_changed.

Such a server must not keep the router busy: refreshes are coalesced and come at
a bounded, growing interval; a list with the very same tools rebuilds nothing; and
the categories' tools and shortlist indexes are rebuilt in a worker thread, so
clients are answered meanwhile.
"""

from __future__ import annotations

import logging
import threading
from typing import Any

import anyio
import mcp_types
import pytest
from mcp.server import Server, ServerRequestContext

from meta_tools.config import MetaToolsConfig
from meta_tools.llm import ScriptedModel
from meta_tools.router.manager import MetaManager
from meta_tools.tools.mcp.connection import McpToolSource

pytestmark = pytest.mark.anyio


class Storm:
    """A low-level MCP server that announces a change in answer to every tools/list.

    Args:
        tools: how many tools it lists.
        rotating: whether each list also holds a tool named after the list's number
            (so that every list is a real change), or always the same tools.
    """

    def __init__(self, tools: int, *, rotating: bool) -> None:
        self.count = tools
        self.rotating = rotating
        self.lists = 0
        self._waiting: dict[int, anyio.Event] = {}

    def tool_names(self, number: int) -> list[str]:
        names = [f"tool_{i}" for i in range(self.count)]
        return [*names, f"tool_listed_{number}"] if self.rotating else names

    async def _list(
        self, ctx: ServerRequestContext[Any, Any], params: mcp_types.PaginatedRequestParams | None
    ) -> mcp_types.ListToolsResult:
        self.lists += 1
        tools = [
            mcp_types.Tool(
                name=name,
                description=f"Look up the {name.replace('_', ' ')} of a record.",
                input_schema={"type": "object", "properties": {"record": {"type": "string"}}},
            )
            for name in self.tool_names(self.lists)
        ]
        await ctx.session.send_tool_list_changed()  # "and now it changed again"
        for number, reached in self._waiting.items():
            if self.lists >= number:
                reached.set()
        return mcp_types.ListToolsResult(tools=tools)

    async def _call(
        self, ctx: ServerRequestContext[Any, Any], params: mcp_types.CallToolRequestParams
    ) -> mcp_types.CallToolResult:
        return mcp_types.CallToolResult(content=[mcp_types.TextContent(text="found")])

    def build(self) -> Server[Any]:
        return Server("storm", on_list_tools=self._list, on_call_tool=self._call)

    async def listed(self, number: int, *, timeout: float = 30.0) -> None:
        """Wait (bounded) until the server was listed `number` times."""
        reached = self._waiting.setdefault(number, anyio.Event())
        if self.lists >= number:
            reached.set()
        with anyio.fail_after(timeout):
            await reached.wait()


async def test_refreshes_on_a_storm_of_changes_come_at_a_growing_interval() -> None:
    storm = Storm(20, rotating=False)
    source = McpToolSource("storm", storm.build(), mode="legacy", min_refresh_s=0.1)  # type: ignore[arg-type]
    told: list[int] = []
    source.subscribe(lambda s: told.append(len(s.tools())))
    async with source:
        started = anyio.current_time()
        await source.connect()
        await storm.listed(5)
        took = anyio.current_time() - started
    # The list at connect and its refresh at once, then after 0.1, 0.2 and 0.4 s.
    assert took >= 0.7, f"5 lists in {took:.3f} s"
    # The same tools each time: only the first list was news.
    assert told == [20]


async def test_a_storm_of_real_changes_retools_the_categories_off_the_event_loop(
    caplog: pytest.LogCaptureFixture,
) -> None:
    storm = Storm(600, rotating=True)
    source = McpToolSource("storm", storm.build(), mode="legacy", min_refresh_s=0.05)  # type: ignore[arg-type]
    config = MetaToolsConfig.from_data(
        {
            "Records": {
                "description": "Look up records.",
                "tools": ["tool_*"],
                "max_tools_per_prompt": 8,
            },
        },
        source="test.json",
    )
    caplog.set_level(logging.DEBUG, logger="meta_tools.meta")
    async with MetaManager.from_config(config, model=ScriptedModel([]), sources=[source]) as meta:
        await storm.listed(5)
        # A list's tools reach the category before the next list is asked for.
        names = {t.name for t in meta.get_category("records").tools.list_tools()}
        assert "tool_listed_4" in names
        assert meta.get_category("records").shortlist is not None
    retooled = [r for r in caplog.records if r.getMessage() == "new tools for 'Records'"]
    assert len(retooled) >= 3
    # After the first (at start), every rebuild ran in a worker thread.
    main = threading.get_ident()
    assert [r.thread == main for r in retooled[1:]] == [False] * (len(retooled) - 1)


async def test_the_ranking_follows_the_tools_and_is_built_off_the_event_loop(
    ranking_threads: list[int],
) -> None:
    storm = Storm(600, rotating=True)
    source = McpToolSource("storm", storm.build(), mode="legacy", min_refresh_s=0.05)  # type: ignore[arg-type]
    config = MetaToolsConfig.from_data(
        {
            "Records": {"description": "Look up records.", "tools": ["tool_*"]},
            "Notes": {"description": "Write notes.", "tools": ["tool_1"]},
        },
        source="test.json",
    )
    async with MetaManager.from_config(config, model=ScriptedModel([]), sources=[source]) as meta:
        ranked_on_loop = 0
        with anyio.fail_after(30):
            while storm.lists < 6:
                # Clients are ranked while the tools change: with the ranking they have.
                assert meta.rank("look up the record")[0].category.name == "Records"
                ranked_on_loop += 1
                await anyio.sleep(0.005)
        await storm.listed(6)
        # Once a change is applied, the ranking knows its new tool. The storm keeps listing
        # (each list announces another change), so wait for any list from the sixth on
        # rather than chase the newest, which may move on before its rebuild is applied.
        with anyio.fail_after(30):
            while not any(meta.tool_holder(f"tool_listed_{n}") for n in range(6, storm.lists + 1)):
                await anyio.sleep(0.01)
    assert ranked_on_loop > 0
    assert len(ranking_threads) >= 3
    # Every ranking was built in a worker thread, the first (at start) too.
    main = threading.get_ident()
    assert [thread == main for thread in ranking_threads] == [False] * len(ranking_threads)
