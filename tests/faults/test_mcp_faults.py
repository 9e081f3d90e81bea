"""Fault matrix, MCP side: a real stdio server that fails to start, exits mid-call, hangs,
answers isError, or changes its tool list mid-run. Each case checks the CategoryResult, what
the category's LLM was told, and (autouse fixture) that no task, process or descriptor leaked.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import anyio
import pytest

from meta_tools.config import MetaToolsConfig
from meta_tools.llm import AssistantTurn, ChatRequest, ScriptedModel, ToolCall
from meta_tools.router.manager import MetaManager

pytestmark = pytest.mark.anyio

ROOT = Path(__file__).resolve().parents[2]
TOKEN = "search-token-5be0c1d9"
TASK = {
    "objective": "Look it up: echo it, refuse, or reply with an RPC error",
    # the values the scripted calls pass: a call on values no task gives is not run
    "exact_input": "hello; the texts again, still here, fallback and survived; quota; after",
}


def config(tools: list[str], *args: str, **category: Any) -> MetaToolsConfig:
    data = {
        "Search": {"description": "Search things.", "tools": tools, **category},
        "mcp_servers": {
            "faulty": {
                "transport": "stdio",
                "command": "python",
                "args": ["-m", "tests.faults.faulty_server", *args],
                "cwd": str(ROOT),
                "env": {"SEARCH_TOKEN": "${SEARCH_TOKEN}"},
                "timeout_s": 20,
            }
        },
    }
    return MetaToolsConfig.from_data(data, source="faults.json", env={"SEARCH_TOKEN": TOKEN})


def call(name: str, arguments: dict[str, Any] | None = None) -> AssistantTurn:
    return AssistantTurn(
        tool_calls=[ToolCall(id=f"call_{name}", name=name, arguments=arguments or {})]
    )


def told(request: ChatRequest) -> list[str]:
    return [m.content for m in request.messages if m.role == "tool"]


def offered(request: ChatRequest) -> list[str]:
    return [t.name for t in request.tools]


def fenced(tool_name: str, ok: bool, body: str) -> str:
    status = "ok" if ok else "error"
    return f'<tool_result tool="{tool_name}" status="{status}">\n{body}\n</tool_result>'


async def test_a_server_that_fails_to_start_fails_its_category_without_asking_the_llm() -> None:
    model = ScriptedModel([])
    async with MetaManager.from_config(config(["echo"], "--fail"), model=model) as meta:
        result = await meta.call_tool("search", TASK)
        warnings = list(meta.warnings)
    assert result.status == "failed"
    assert result.summary.startswith(
        "No tool of this category can run now. MCP server 'faulty' is unavailable:"
    )
    # Its stderr is quoted, with the token it was given scrubbed.
    assert "fatal: token *** was rejected" in result.summary
    assert TOKEN not in result.to_json() and not any(TOKEN in w for w in warnings)
    assert model.requests == []


async def test_a_server_that_exits_mid_call_costs_that_call_and_is_reopened_for_the_next() -> None:
    model = ScriptedModel(
        [call("crash"), call("echo", {"text": "again"}), AssistantTurn(text="ok")]
    )
    async with MetaManager.from_config(config(["crash", "echo"]), model=model) as meta:
        with anyio.fail_after(60):
            result = await meta.call_tool("search", TASK)
    lost = (
        "MCP server 'faulty' closed the connection while 'crash' was running;"
        " it is reconnected on the next call"
    )
    assert result.status == "success"
    assert [(e.tool, e.ok, e.result, e.error) for e in result.executions] == [
        ("crash", False, None, lost),
        ("echo", True, '{"result": "again"}', None),
    ]
    assert told(model.requests[1]) == [fenced("crash", False, lost)]
    model.assert_complete()


async def test_a_hanging_server_tool_is_cut_at_the_timeout_and_the_session_still_works() -> None:
    model = ScriptedModel(
        [call("hang"), call("echo", {"text": "still here"}), AssistantTurn(text="ok")]
    )
    cfg = config(["hang", "echo"], tool_timeout_s=1)
    async with MetaManager.from_config(cfg, model=model) as meta:
        with anyio.fail_after(60):
            result = await meta.call_tool("search", TASK)
    timeout = "tool 'hang' did not finish within 1 s"
    assert result.status == "success"
    assert [(e.tool, e.ok, e.result, e.error) for e in result.executions] == [
        ("hang", False, None, timeout),
        ("echo", True, '{"result": "still here"}', None),
    ]
    assert told(model.requests[1]) == [fenced("hang", False, timeout)]


async def test_an_is_error_result_reaches_the_llm_as_the_servers_message() -> None:
    model = ScriptedModel(
        [
            call("refuse", {"reason": "quota"}),
            call("echo", {"text": "fallback"}),
            AssistantTurn(text="ok"),
        ]
    )
    async with MetaManager.from_config(config(["refuse", "echo"]), model=model) as meta:
        result = await meta.call_tool("search", TASK)
    assert result.status == "success"
    refused = "Error executing tool refuse: refused: quota"  # the SDK's prefix, then ours
    assert [(e.tool, e.ok, e.error) for e in result.executions] == [
        ("refuse", False, refused),
        ("echo", True, None),
    ]
    assert told(model.requests[1]) == [fenced("refuse", False, refused)]


async def test_a_leaky_server_result_is_scrubbed_of_the_token_it_was_given() -> None:
    model = ScriptedModel([call("token"), AssistantTurn(text="done")])
    async with MetaManager.from_config(config(["token"]), model=model) as meta:
        result = await meta.call_tool("search", TASK)
    assert result.executions[0].result == '{"result": "my token is ***"}'
    assert told(model.requests[1]) == [fenced("token", True, '{"result": "my token is ***"}')]


class GatedModel:
    """A scripted model whose second answer waits until the server's tool list has changed
    (so the run goes on only once the change is known to the router)."""

    def __init__(self, script: ScriptedModel, changed: anyio.Event) -> None:
        self.script = script
        self.changed = changed

    async def complete(self, request: ChatRequest) -> AssistantTurn:
        if len(self.script.requests) == 1:
            with anyio.fail_after(20):
                await self.changed.wait()
        return await self.script.complete(request)


async def test_a_tool_list_changed_mid_run_is_what_the_next_round_offers() -> None:
    script = ScriptedModel(
        [call("swap"), call("old_tool"), call("new_tool"), AssistantTurn(text="used the new tool")]
    )
    changed = anyio.Event()
    meta = MetaManager.from_config(config(["*"]), model=GatedModel(script, changed))
    async with meta:
        (source,) = meta.sources
        # Listings also happen for other reasons: wait for the one that has the new tool.
        source.subscribe(lambda s: changed.set() if s.get_tool("new_tool") else None)
        with anyio.fail_after(60):
            result = await meta.call_tool("search", TASK)
    unknown = (
        "unknown tool 'old_tool'. Did you mean 'new_tool'? Available tools: "
        "echo, crash, hang, refuse, swap, token, rpc_error, slow_echo, pid, new_tool"
    )
    assert (result.status, result.summary) == ("success", "used the new tool")
    assert [(e.tool, e.ok, e.result, e.error) for e in result.executions] == [
        ("swap", True, '{"result": "swapped"}', None),
        ("old_tool", False, None, unknown),
        ("new_tool", True, "new", None),
    ]
    first, _, third, _ = script.requests
    assert "old_tool" in offered(first) and "new_tool" not in offered(first)
    # The second request may have been built before the change arrived; the third was not.
    assert "new_tool" in offered(third) and "old_tool" not in offered(third)
    assert told(third)[-1] == fenced("old_tool", False, unknown)


SURVIVED = '{"result": "survived"}'


@pytest.mark.parametrize(
    ("code", "message"), [(-32000, "quota exceeded"), (-32001, "upstream timed out")]
)
async def test_a_json_rpc_error_reply_is_a_tool_error_not_a_lost_connection_or_timeout(
    code: int, message: str
) -> None:
    model = ScriptedModel(
        [
            call("pid"),
            AssistantTurn(
                tool_calls=[
                    ToolCall(
                        id="call_err",
                        name="rpc_error",
                        arguments={"code": code, "message": message},
                    ),
                    ToolCall(
                        id="call_slow",
                        name="slow_echo",
                        arguments={"text": "survived", "seconds": 0.5},
                    ),
                ]
            ),
            call("pid", {"label": "after"}),
            AssistantTurn(text="ok"),
        ]
    )
    cfg = config(["pid", "rpc_error", "slow_echo"])
    async with MetaManager.from_config(cfg, model=model) as meta:
        with anyio.fail_after(60):
            result = await meta.call_tool("search", TASK)
    refused = (
        f"MCP server 'faulty' answered the call to 'rpc_error' with an error ({code}): {message}"
    )
    first_pid, error, slow, second_pid = result.executions
    assert (error.ok, error.error) == (False, refused)
    assert (slow.ok, slow.result) == (True, SURVIVED)  # the concurrent call was not killed
    assert first_pid.result == second_pid.result  # the server was not restarted
    assert told(model.requests[2]) == [
        fenced("pid", True, str(first_pid.result)),
        fenced("rpc_error", False, refused),
        fenced("slow_echo", True, SURVIVED),
    ]
