"""MetaManager with MCP servers: tools under their names, clashes, a dead server, first use, list_changed."""

from __future__ import annotations

import sys
from typing import Any

import anyio
import pytest

from meta_tools.config import MetaToolsConfig
from meta_tools.exceptions import ClosedError, ConfigError
from meta_tools.llm import AssistantTurn, ChatRequest, ScriptedModel, ToolCall
from meta_tools.router.manager import MetaManager
from meta_tools.tools.mcp.connection import McpToolSource
from tests.servers import changing

pytestmark = pytest.mark.anyio

TASK = {"objective": "Echo it", "exact_input": "hello"}


def offered(request: ChatRequest) -> list[str]:
    return [t.name for t in request.tools]


def calls(name: str, arguments: dict[str, Any], summary: str = "done") -> ScriptedModel:
    """A category model that calls one tool, then writes `summary`."""

    def answer(request: ChatRequest) -> AssistantTurn:
        if request.messages[-1].role == "user" and len(request.messages) == 2:
            return AssistantTurn(tool_calls=[ToolCall(name=name, arguments=arguments)])
        return AssistantTurn(text=summary)

    return ScriptedModel.from_function(answer)


def config(
    categories: dict[str, list[str]], servers: dict[str, Any] | None = None
) -> MetaToolsConfig:
    data: dict[str, Any] = {
        name: {"description": f"{name} things.", "tools": tools}
        for name, tools in categories.items()
    }
    if servers:
        data["mcp_servers"] = servers
    return MetaToolsConfig.from_data(data, source="test.json")


async def test_a_config_with_a_stdio_server_routes_a_category_to_the_servers_tools() -> None:
    servers = {
        "changing": {
            "transport": "stdio",
            "command": "python",
            "args": ["-m", "tests.servers.changing"],
        }
    }
    model = calls("echo", {"text": "hello"}, "It said hello.")
    async with MetaManager.from_config(
        config({"Echo": ["echo", "add"]}, servers), model=model
    ) as meta:
        (source,) = meta.sources
        assert (source.name, source.status) == ("changing", "ready")
        result = await meta.call_tool("echo", TASK)
    assert (result.status, result.summary) == ("success", "It said hello.")
    assert [(e.tool, e.arguments, e.ok, e.result) for e in result.executions] == [
        ("echo", {"text": "hello"}, True, '{"result": "hello"}')
    ]
    assert offered(model.requests[0]) == ["echo", "add", "request_input", "decline"]
    assert source.status == "closed"


async def test_two_servers_providing_the_same_tool_are_refused_with_a_hint_to_set_prefix() -> None:
    first = McpToolSource("alpha", changing.build())  # type: ignore[arg-type]
    second = McpToolSource("beta two", changing.build())  # type: ignore[arg-type]
    meta = MetaManager.from_config(
        config({"Echo": ["echo"]}), model=calls("echo", {}), sources=[first, second]
    )
    with pytest.raises(ConfigError) as refused:
        await meta.start()
    assert refused.value.problems[0] == (
        "$.mcp_servers.\"beta two\": tool 'echo' is also provided by MCP server 'alpha';"
        ' set "prefix" on one of the servers (e.g. "prefix": "beta_two" names its tools'
        " beta_two_<tool>)"
    )
    assert len(refused.value.problems) == 7  # one per tool of the second server
    assert (first.status, second.status) == ("closed", "closed")


async def test_with_a_prefix_both_servers_tools_are_offered() -> None:
    first = McpToolSource("alpha", changing.build())  # type: ignore[arg-type]
    second = McpToolSource("beta", changing.build(), prefix="b")  # type: ignore[arg-type]
    model = calls("b_echo", {"text": "hello"})
    cfg = config({"Echo": ["echo", "b_echo"]})
    async with MetaManager.from_config(cfg, model=model, sources=[first, second]) as meta:
        result = await meta.call_tool("echo", TASK)
    assert [(e.tool, e.ok, e.result) for e in result.executions] == [
        ("b_echo", True, '{"result": "hello"}')
    ]
    assert offered(model.requests[0]) == ["echo", "b_echo", "request_input", "decline"]


async def test_a_server_that_never_starts_fails_its_category_clearly_and_the_others_work() -> None:
    servers = {
        "weather": {
            "transport": "stdio",
            "command": sys.executable,
            "args": ["-m", "no_such_weather_server"],
        }
    }
    model = calls("echo", {"text": "hello"})
    cfg = config({"Weather": ["forecast"], "Echo": ["echo"]}, servers)
    working = McpToolSource("changing", changing.build())  # type: ignore[arg-type]
    async with MetaManager.from_config(cfg, model=model, sources=[working]) as meta:
        assert any(
            w.startswith("MCP server 'weather' could not be started:") for w in meta.warnings
        )
        failed = await meta.call_tool("weather", TASK)
        works = await meta.call_tool("echo", TASK)
    assert failed.status == "failed"
    assert failed.summary.startswith(
        "No tool of this category can run now. MCP server 'weather' is unavailable:"
    )
    assert "No module named no_such_weather_server" in failed.summary
    assert (works.status, [e.result for e in works.executions]) == (
        "success",
        ['{"result": "hello"}'],
    )
    assert len(model.requests) == 2  # the failed category asked no LLM


async def test_a_first_use_server_connects_when_its_category_is_first_called() -> None:
    lazy = McpToolSource("changing", changing.build(), connect="first_use")  # type: ignore[arg-type]
    model = calls("add", {"a": 1})
    async with MetaManager.from_config(
        config({"Math": ["add"]}), model=model, sources=[lazy]
    ) as meta:
        assert (lazy.status, lazy.listed) == ("idle", False)
        result = await meta.call_tool("math", {"objective": "Add 1 to 1", "exact_input": "a = 1"})
        assert lazy.status == "ready"
    assert [(e.tool, e.result) for e in result.executions] == [("add", '{"result": 2}')]
    assert model.requests[0].tools[0].parameters["required"] == ["a"]


async def test_tools_list_changed_reaches_the_categorys_next_llm_call() -> None:
    source = McpToolSource("changing", changing.build(), mode="legacy")  # type: ignore[arg-type]
    model = calls("learn", {"name": "greet"})
    task = {"objective": "Learn to greet", "exact_input": "greet"}
    async with MetaManager.from_config(
        config({"All": ["*"]}), model=model, sources=[source]
    ) as meta:
        category = meta.get_category("all")
        changed = anyio.Event()
        source.subscribe(lambda _: changed.set())
        await meta.call_tool("all", task)
        with anyio.fail_after(10):
            await changed.wait()
        await meta.call_tool("all", task)
        assert "greet" in [t.name for t in category.tools.list_tools()]
    assert "greet" not in offered(model.requests[0])
    assert "greet" in offered(model.requests[2])


async def test_a_listed_tool_that_no_server_provides_is_a_config_error_at_start() -> None:
    source = McpToolSource("changing", changing.build())  # type: ignore[arg-type]
    meta = MetaManager.from_config(
        config({"Echo": ["ecko"]}), model=calls("x", {}), sources=[source]
    )
    with pytest.raises(ConfigError) as refused:
        async with meta:
            pass
    assert refused.value.problems == [
        "$.\"Echo\".tools[0]: tool 'ecko' is listed but no source provides it; did you mean 'echo'?"
    ]
    assert source.status == "closed"


async def test_a_router_with_mcp_servers_must_be_entered_before_a_call() -> None:
    source = McpToolSource("changing", changing.build())  # type: ignore[arg-type]
    meta = MetaManager.from_config(
        config({"Echo": ["echo"]}), model=calls("echo", {}), sources=[source]
    )
    with pytest.raises(ClosedError, match="enter it first"):
        await meta.call_tool("echo", TASK)
    await meta.aclose()
