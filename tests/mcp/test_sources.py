"""MCP servers as level-1 tool sources: listing, calling, errors, list_changed, crashes, closing."""

from __future__ import annotations

import sys
from collections.abc import Callable
from typing import Any

import anyio
import pytest
from mcp import StdioServerParameters
from mcp.server.mcpserver import MCPServer

from meta_tools.config import HttpServerConfig, StdioServerConfig
from meta_tools.exceptions import (
    ToolArgumentsError,
    ToolExecutionError,
    ToolUnavailableError,
)
from meta_tools.router.from_config import mcp_source
from meta_tools.serve.server import BearerTokenMiddleware
from meta_tools.tools.base import BaseTool
from meta_tools.tools.mcp.connection import McpToolSource
from tests.mcp.conftest import asgi_server, changing_stdio, http_server, kill_children
from tests.servers import changing, paged

pytestmark = pytest.mark.anyio

MODES = pytest.mark.parametrize("mode", ["auto", "legacy"])


async def wait_until(source: McpToolSource, done: Callable[[set[str]], bool]) -> None:
    """Wait (at most 10 s) until the source's tool names satisfy `done`."""
    changed = [anyio.Event()]
    unsubscribe = source.subscribe(lambda _: changed[0].set())
    try:
        with anyio.fail_after(10):
            while not done({t.name for t in source.tools()}):
                await changed[0].wait()
                changed[0] = anyio.Event()
    finally:
        unsubscribe()


async def call_expecting_unavailable(
    tool: BaseTool, arguments: dict[str, Any], kill: Callable[[], object]
) -> str:
    """Start a call, kill its server while it runs, and return the call's error message."""
    errors: list[str] = []

    async def call() -> None:
        with pytest.raises(ToolUnavailableError) as lost:
            await tool.call(arguments)
        errors.append(str(lost.value))

    async with anyio.create_task_group() as group:
        group.start_soon(call)
        await anyio.wait_all_tasks_blocked()  # the request is out; the call waits for its answer
        kill()
    return errors[0]


@MODES
async def test_a_source_lists_the_servers_tools_and_calls_them_keeping_structured_content(
    mode: str,
) -> None:
    async with McpToolSource("changing", changing.build(), mode=mode) as source:  # type: ignore[arg-type]
        await source.connect()
        assert [t.name for t in source.tools()] == [
            "echo",
            "add",
            "pid",
            "wait",
            "fail",
            "learn",
            "forget",
        ]
        add = source.get_tool("add")
        assert add is not None
        assert add.openai_schema() == {
            "type": "function",
            "function": {
                "name": "add",
                "description": "Add two integers (b defaults to 1).",
                "parameters": {
                    "type": "object",
                    "properties": {
                        "a": {"title": "A", "type": "integer"},
                        "b": {"default": 1, "title": "B", "type": "integer"},
                    },
                    "required": ["a"],
                },
            },
        }
        assert await add.call({"a": 2, "b": 3}) == {"result": 5}
        assert await add.call('{"a": 41}') == {"result": 42}  # the server's default applies
        with pytest.raises(ToolArgumentsError, match="'a' is required"):
            await add.call({"b": 1})
        with pytest.raises(ToolExecutionError) as failed:
            await source.get_tool("fail").call({"message": "the disk is full"})  # type: ignore[union-attr]
        assert str(failed.value) == "Error executing tool fail: the disk is full"
        assert source.status == "ready"
    assert source.status == "closed"


@MODES
async def test_tools_list_is_read_page_by_page_and_text_results_are_joined(mode: str) -> None:
    async with McpToolSource("paged", paged.build(), mode=mode, prefix="pg") as source:  # type: ignore[arg-type]
        await source.connect()
        assert [t.name for t in source.tools()] == [f"pg_tool_{i}" for i in range(7)] + [
            "pg_broken"
        ]
        tool = source.get_tool("pg_tool_4")
        assert tool is not None and tool.description == "Tool number 4."
        assert await tool.call({"word": "hi"}) == "tool_4 says hi\nsecond block"
        with pytest.raises(ToolExecutionError, match=r"^broken cannot handle 'x'$"):
            await source.get_tool("pg_broken").call({"word": "x"})  # type: ignore[union-attr]


@MODES
async def test_tools_list_changed_refreshes_the_tool_set(mode: str) -> None:
    async with McpToolSource("changing", changing.build(), mode=mode) as source:  # type: ignore[arg-type]
        await source.connect()
        assert await source.get_tool("learn").call({"name": "greet"}) == {"result": "learned greet"}  # type: ignore[union-attr]
        await wait_until(source, lambda names: "greet" in names)
        assert await source.get_tool("greet").call({}) == "greet"  # no structured content: text  # type: ignore[union-attr]
        await source.get_tool("forget").call({"name": "echo"})  # type: ignore[union-attr]
        await wait_until(source, lambda names: "echo" not in names)


@MODES
async def test_a_stdio_server_killed_mid_call_costs_that_call_and_is_reopened_on_the_next(
    mode: str,
) -> None:
    async with McpToolSource("changing", changing_stdio(), mode=mode, timeout_s=20) as source:  # type: ignore[arg-type]
        await source.connect()
        first_pid = (await source.get_tool("pid").call({}))["result"]  # type: ignore[union-attr]
        wait = source.get_tool("wait")
        assert wait is not None
        killed: list[int] = []
        message = await call_expecting_unavailable(
            wait, {"seconds": 30}, lambda: killed.extend(kill_children("tests.servers.changing"))
        )
        assert killed == [first_pid]
        assert message == (
            "MCP server 'changing' closed the connection while 'wait' was running;"
            " it is reconnected on the next call"
        )
        second_pid = (await source.get_tool("pid").call({}))["result"]  # type: ignore[union-attr]
        assert second_pid != first_pid
        assert await source.get_tool("echo").call({"text": "back"}) == {"result": "back"}  # type: ignore[union-attr]


async def test_an_http_server_killed_mid_call_costs_that_call_and_works_again_once_restarted() -> (
    None
):
    async with http_server("-m", "tests.servers.changing", "--http", "0") as (process, url):
        port = url.rsplit(":", 1)[1].split("/")[0]
        async with McpToolSource("web", url, timeout_s=20) as source:
            await source.connect()
            assert await source.get_tool("echo").call({"text": "one"}) == {"result": "one"}  # type: ignore[union-attr]
            wait = source.get_tool("wait")
            assert wait is not None
            message = await call_expecting_unavailable(wait, {"seconds": 30}, process.kill)
            assert message == (
                "MCP server 'web' closed the connection while 'wait' was running;"
                " it is reconnected on the next call"
            )
            async with http_server("-m", "tests.servers.changing", "--http", port):
                assert await source.get_tool("echo").call({"text": "two"}) == {"result": "two"}  # type: ignore[union-attr]


async def test_a_server_that_never_starts_gives_a_clear_error_and_retries_after_a_backoff() -> None:
    broken = StdioServerParameters(command=sys.executable, args=["-m", "no_such_mcp_server"])
    async with McpToolSource("weather", broken, timeout_s=20) as source:
        with pytest.raises(ToolUnavailableError) as first:
            await source.connect()
        message = str(first.value)
        assert message.startswith("MCP server 'weather' is unavailable: could not be started:")
        assert "No module named no_such_mcp_server" in message
        with pytest.raises(ToolUnavailableError, match=r"the next attempt is in 0\.\d s"):
            await source.connect()
        assert source.status == "failed"
        assert source.tools() == []


async def test_a_missing_command_names_the_command() -> None:
    missing = StdioServerParameters(command="/nonexistent/mcp-server")
    async with McpToolSource("ghost", missing) as source:
        with pytest.raises(ToolUnavailableError, match="the command was not found"):
            await source.connect()


async def test_python_in_a_config_runs_the_routers_own_interpreter(tmp_path: Any) -> None:
    config = StdioServerConfig(command="python", args=["-m", "x"], cwd="servers", prefix="p")
    source = mcp_source("s", config, base_dir=str(tmp_path))
    target = source._target  # the parameters the SDK will spawn
    assert isinstance(target, StdioServerParameters)
    assert (target.command, target.args, target.cwd) == (
        sys.executable,
        ["-m", "x"],
        str((tmp_path / "servers").resolve()),
    )
    assert (source.prefix, source.connect_mode, source.timeout_s) == ("p", "start", 30.0)


async def test_a_source_not_entered_or_closed_refuses_calls_clearly() -> None:
    source = McpToolSource("idle", changing.build())  # type: ignore[arg-type]
    with pytest.raises(ToolUnavailableError, match="not started"):
        await source.connect()
    async with source:
        pass
    with pytest.raises(ToolUnavailableError, match="'idle' is closed"):
        await source.connect()
    await source.aclose()  # closing twice is harmless


async def test_http_sources_from_config_send_their_headers_and_follow_list_changed() -> None:
    app = BearerTokenMiddleware(changing.build().streamable_http_app(), "tok")
    async with asgi_server(app) as base:
        url = f"{base}/mcp"
        allowed = HttpServerConfig(
            transport="streamable_http", url=url, headers={"Authorization": "Bearer tok"}
        )
        async with mcp_source("web", allowed) as source:
            await source.connect()
            assert await source.get_tool("learn").call({"name": "greet"}) == {  # type: ignore[union-attr]
                "result": "learned greet"
            }
            await wait_until(source, lambda names: "greet" in names)
        refused = HttpServerConfig(transport="streamable_http", url=url, timeout_s=5)
        async with mcp_source("web", refused) as source:
            with pytest.raises(ToolUnavailableError) as failed:
                await source.connect()
    assert str(failed.value).startswith(
        f"MCP server 'web' is unavailable: could not be reached at {url}:"
    )
    assert str(failed.value).endswith(
        "the server answered the handshake with an error: Unauthorized: this server needs"
        " the header 'Authorization: Bearer <token>'"
    )


async def test_an_sse_source_lists_and_calls() -> None:
    async with asgi_server(changing.build().sse_app()) as base:
        config = HttpServerConfig(transport="sse", url=f"{base}/sse", prefix="old")
        async with mcp_source("legacy-sse", config) as source:
            await source.connect()
            assert await source.get_tool("old_add").call({"a": 1}) == {"result": 2}  # type: ignore[union-attr]


async def test_calls_in_flight_on_one_server_are_bounded() -> None:
    """SECURITY.md: MCP calls in flight per server are bounded; more wait their turn."""
    server = MCPServer("slow")
    arrived: list[int] = []
    release = anyio.Event()

    @server.tool()
    async def hold(n: int) -> str:
        """Wait until the test releases every call."""
        arrived.append(n)
        await release.wait()
        return f"done {n}"

    results: list[object] = []
    async with McpToolSource("slow", server, max_concurrent_calls=2) as source:  # type: ignore[arg-type]
        await source.connect()
        (tool,) = source.tools()

        async def call(n: int) -> None:
            results.append(await tool.call({"n": n}))

        with anyio.fail_after(10):
            async with anyio.create_task_group() as group:
                for n in range(3):
                    group.start_soon(call, n)
                await anyio.wait_all_tasks_blocked()
                assert len(arrived) == 2  # the third waits for a free slot
                release.set()
    assert sorted(results, key=str) == [{"result": f"done {n}"} for n in range(3)]
    assert len(arrived) == 3
