"""The router served as an MCP server: real clients, a scripted host model, both protocol eras."""

from __future__ import annotations

import json
import re
import sys
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from functools import partial
from pathlib import Path
from typing import Any

import anyio
import httpx2
import mcp_types
import pytest
from mcp import Client, StdioServerParameters
from mcp.client.streamable_http import streamable_http_client
from mcp.server.mcpserver import MCPServer

from meta_tools import FunctionTool, tool
from meta_tools.category.result import CategoryResult
from meta_tools.config import MetaToolsConfig
from meta_tools.exceptions import ModelError
from meta_tools.llm import AssistantTurn, ChatRequest, ScriptedModel, ToolCall
from meta_tools.llm.base import ChatModel
from meta_tools.llm.recovery import RecoveringModel
from meta_tools.llm.sampling import SamplingChatModel
from meta_tools.router.manager import MAX_ARGUMENT_CHARS, MetaManager, category_parameters
from meta_tools.serve.server import SESSION_META_KEY, build_server, serve
from tests.mcp.conftest import (  # no_leaks: the MCP tests' leak check, here too
    ROOT,
    SAMPLING_TOOLS,
    ScriptedHost,
    asgi_server,
    no_leaks,  # noqa: F401
)

pytestmark = pytest.mark.anyio

MODES = pytest.mark.parametrize("mode", ["auto", "legacy"])
TASK = {"objective": "Shout it", "exact_input": "hi"}
TOKEN = "s3cret-token"


@tool
def shout(text: str) -> str:
    """Upper-case a text."""
    return text.upper()


class Blocker:
    """A tool that waits until it is cancelled, and tells the test both moments."""

    def __init__(self) -> None:
        self.started = anyio.Event()
        self.cancelled = anyio.Event()

    async def block(self, reason: str) -> str:
        """Wait for something that never happens."""
        self.started.set()
        try:
            await anyio.sleep_forever()
        finally:
            self.cancelled.set()
        return reason  # pragma: no cover


def router(model: ChatModel | None = None, blocker: Blocker | None = None) -> MetaManager:
    config = MetaToolsConfig.from_data(
        {
            "Text": {"description": "Shout texts.", "tools": ["shout", "block"]},
            "Other": {"description": "Nothing much.", "tools": ["shout"]},
        }
    )
    blocking = FunctionTool("block", (blocker or Blocker()).block)
    return MetaManager.from_config(
        config, tools=[shout, blocking], model=model or SamplingChatModel()
    )


def host_client(target: Any, mode: str, host: ScriptedHost, **options: Any) -> Client:
    return Client(
        target, mode=mode, sampling_callback=host, sampling_capabilities=SAMPLING_TOOLS, **options
    )


class ProgressLog:
    def __init__(self) -> None:
        self.messages: list[str] = []

    async def __call__(self, progress: float, total: float | None, message: str | None) -> None:
        self.messages.append(re.sub(r" in \d+\.\d+ s$", "", message or ""))


SHOUT_PROGRESS = [
    "Text: started",
    "Text: selected shout",
    "Text: shout finished",
    "Text: evaluated the results; next: the summary",
    "Text: finished (success)",
]


def without_timings(data: dict[str, Any]) -> dict[str, Any]:
    data = json.loads(json.dumps(data))
    for execution in data.get("executions", []):
        execution["duration_s"] = 0
    data["usage"]["wall_s"] = 0
    return data


def assert_shouted(result: mcp_types.CallToolResult) -> None:
    assert result.is_error is False
    assert result.structured_content == json.loads(result.content[0].text)  # type: ignore[union-attr]
    assert without_timings(result.structured_content or {}) == {
        "category": "Text",
        "status": "success",
        "summary": "Shouted: HI",
        "executions": [
            {
                "tool": "shout",
                "arguments": {"text": "hi"},
                "ok": True,
                "result": "HI",
                "round": 1,
                "duration_s": 0,
                "cached": False,
            }
        ],
        "iterations": 1,
        "usage": {
            "llm_calls": 2,
            "prompt_tokens": 0,
            "completion_tokens": 0,
            "wall_s": 0,
            "cache_hits": 0,
            "cache_misses": 0,
            "recovered_calls": 0,
        },
    }


async def cancel_blocked_call(client: Client, blocker: Blocker) -> None:
    """Call the blocking tool through the router, cancel the call, see the tool cancelled."""
    async with anyio.create_task_group() as group:
        group.start_soon(client.call_tool, "text", TASK)
        with anyio.fail_after(20):
            await blocker.started.wait()
        group.cancel_scope.cancel()
    with anyio.fail_after(20):
        await blocker.cancelled.wait()


@MODES
async def test_the_server_offers_exactly_the_category_tools(mode: str) -> None:
    async with router() as meta, Client(build_server(meta), mode=mode) as client:
        listed = (await client.list_tools()).tools
    assert [(t.name, t.description, t.input_schema) for t in listed] == [
        ("text", "Shout texts. It picks and runs the right tools itself.", category_parameters()),
        ("other", "Nothing much. It picks and runs the right tools itself.", category_parameters()),
    ]
    assert listed[0].output_schema == CategoryResult.model_json_schema()


@MODES
async def test_a_call_returns_the_category_result_as_text_and_structured_content_with_progress(
    mode: str,
) -> None:
    host = ScriptedHost([("shout", {"text": "hi"}), "Shouted: HI"])
    progress = ProgressLog()
    async with router() as meta, host_client(build_server(meta), mode, host) as client:
        result = await client.call_tool("text", TASK, progress_callback=progress)
    assert_shouted(result)
    assert progress.messages == SHOUT_PROGRESS
    first = host.requests[0]
    assert [t.name for t in first.tools or []] == ["shout", "block", "request_input", "decline"]
    assert "Text" in (first.system_prompt or "")


@MODES
async def test_a_wrapped_host_model_is_still_served_by_the_host(mode: str) -> None:
    # The host writes its call as text; the wrapper reads it back into a call.
    written = '{"name": "shout", "arguments": {"text": "hi"}}'
    host = ScriptedHost([written, "Shouted: HI"])
    progress = ProgressLog()
    model = RecoveringModel(SamplingChatModel())
    async with router(model) as meta, host_client(build_server(meta), mode, host) as client:
        result = await client.call_tool("text", TASK, progress_callback=progress)
    assert without_timings(result.structured_content or {})["usage"]["recovered_calls"] == 1
    assert (result.structured_content or {})["summary"] == "Shouted: HI"
    assert progress.messages == SHOUT_PROGRESS
    assert len(host.requests) == 2


@MODES
async def test_the_sampling_model_of_the_config_sends_its_max_tokens_and_temperature(
    mode: str,
) -> None:
    config = MetaToolsConfig.from_data(
        {
            "model": {"provider": "sampling", "max_tokens": 300, "temperature": 0.2},
            "Text": {"description": "Shout texts.", "tools": ["shout"]},
        }
    )
    host = ScriptedHost([("shout", {"text": "hi"}), "Shouted: HI"])
    async with (
        MetaManager.from_config(config, tools=[shout]) as meta,
        host_client(build_server(meta), mode, host) as client,
    ):
        result = await client.call_tool("text", TASK)
    assert result.is_error is False
    assert [(r.max_tokens, r.temperature) for r in host.requests] == [(300, 0.2), (300, 0.2)]


@MODES
async def test_a_cancelled_call_cancels_its_running_tools(mode: str) -> None:
    blocker = Blocker()
    host = ScriptedHost([("block", {"reason": "hi"})])
    async with router(blocker=blocker) as meta, host_client(build_server(meta), mode, host) as c:
        await cancel_blocked_call(c, blocker)


@MODES
async def test_a_failed_category_sets_is_error(mode: str) -> None:
    def broken(request: ChatRequest) -> Any:
        raise ModelError("the model is down")

    model = ScriptedModel.from_function(broken)
    async with router(model) as meta, Client(build_server(meta), mode=mode) as client:
        result = await client.call_tool("text", TASK)
    assert result.is_error is True
    assert result.structured_content is not None
    assert (result.structured_content["status"], result.structured_content["summary"]) == (
        "failed",
        "The category's model failed: the model is down. No tool was run.",
    )


@MODES
async def test_bad_arguments_are_error_results(mode: str) -> None:
    # an unknown category: tests/serve/test_unknown_category.py
    async with router() as meta, Client(build_server(meta), mode=mode) as client:
        missing = await client.call_tool("text", {"objective": "x"})
    assert missing.is_error is True
    assert "'exact_input' is required and must be a string" in missing.content[0].text  # type: ignore[union-attr]


@MODES
async def test_an_argument_longer_than_the_limit_is_an_error_result_naming_it(mode: str) -> None:
    long = {"objective": "Shout it", "exact_input": "a" * (MAX_ARGUMENT_CHARS + 1)}
    async with router() as meta, Client(build_server(meta), mode=mode) as client:
        refused = await client.call_tool("text", long)
    assert refused.is_error is True
    assert (
        f"'exact_input' has {MAX_ARGUMENT_CHARS + 1:,} characters, more than"
        f" {MAX_ARGUMENT_CHARS:,}" in refused.content[0].text  # type: ignore[union-attr]
    )


@MODES
async def test_a_host_without_sampling_tools_is_told_the_alternatives(mode: str) -> None:
    async def plain(ctx: Any, params: Any) -> mcp_types.CreateMessageResult:
        raise AssertionError("never asked")  # pragma: no cover

    async with (
        router() as meta,
        Client(build_server(meta), mode=mode, sampling_callback=plain) as c,
    ):
        result = await c.call_tool("text", TASK)
    assert result.is_error is True
    assert result.content[0].text == (  # type: ignore[union-attr]
        "the router's categories use the MCP host's own model (sampling: model.provider"
        " 'sampling', or no `model` section and no API key), but this host did not declare the"
        " 'sampling.tools' capability. Ways out: (1) an API key: export OPENAI_API_KEY=sk-... "
        ' (or DASHSCOPE_API_KEY with "model": {"provider": "dashscope", "name": "qwen-plus"}'
        " in the config); (2) a local OpenAI-compatible server (Ollama, vLLM, llama.cpp), no"
        ' key needed: "model": {"provider": "openai", "name": "llama3.2", "base_url":'
        ' "http://127.0.0.1:11434/v1"}; (3) the MCP host\'s own model: "model": {"provider":'
        ' "sampling"}, served by `meta-tools serve` to a host that supports sampling with tools'
    )


@MODES
async def test_the_router_served_over_stdio_answers_reports_progress_and_cancels(
    mode: str, tmp_path: Path
) -> None:
    blocker = Blocker()
    probe = MCPServer("probe", log_level="WARNING")
    probe.add_tool(blocker.block, name="block")
    async with asgi_server(probe.streamable_http_app()) as base:
        config = {
            "mcp_servers": {"probe": {"transport": "streamable_http", "url": f"{base}/mcp"}},
            "Text": {"description": "Shout texts.", "tools": ["shout", "block"]},
        }
        path = tmp_path / "Meta_tool_config.json"
        path.write_text(json.dumps(config))
        command = StdioServerParameters(
            command=sys.executable, args=["-m", "tests.servers.router", str(path)], cwd=ROOT
        )
        host = ScriptedHost([("shout", {"text": "hi"}), "Shouted: HI", ("block", {"reason": "hi"})])
        progress = ProgressLog()
        async with host_client(command, mode, host, read_timeout_seconds=60) as client:
            assert_shouted(await client.call_tool("text", TASK, progress_callback=progress))
            assert progress.messages == SHOUT_PROGRESS
            await cancel_blocked_call(client, blocker)


@asynccontextmanager
async def served_over_http(meta: MetaManager) -> AsyncIterator[str]:
    async with anyio.create_task_group() as group:
        url = await group.start(partial(serve, meta, transport="http", port=0, token=TOKEN))
        try:
            yield url
        finally:
            group.cancel_scope.cancel()


@asynccontextmanager
async def http_client(url: str, mode: str, host: ScriptedHost) -> AsyncIterator[Client]:
    headers = {"Authorization": f"Bearer {TOKEN}"}
    async with httpx2.AsyncClient(headers=headers, timeout=30) as http:
        transport = streamable_http_client(url, http_client=http)
        async with host_client(transport, mode, host) as client:
            yield client


@MODES
async def test_the_router_served_over_http_answers_reports_progress_and_cancels(mode: str) -> None:
    blocker = Blocker()
    host = ScriptedHost([("shout", {"text": "hi"}), "Shouted: HI", ("block", {"reason": "hi"})])
    progress = ProgressLog()
    async with served_over_http(router(blocker=blocker)) as url, http_client(url, mode, host) as c:
        assert_shouted(await c.call_tool("text", TASK, progress_callback=progress))
        assert progress.messages == SHOUT_PROGRESS
        await cancel_blocked_call(c, blocker)


async def test_http_needs_the_token_refuses_big_bodies_and_foreign_hosts() -> None:
    message = {"jsonrpc": "2.0", "id": 1, "method": "tools/list"}
    async with served_over_http(router()) as url, httpx2.AsyncClient(timeout=30) as http:
        anonymous = await http.post(url, json=message)
        auth = {"Authorization": f"Bearer {TOKEN}"}
        wrong = await http.post(url, json=message, headers={"Authorization": "Bearer nope"})
        big = await http.post(url, content=b"x" * 1_100_000, headers=auth)
        foreign = await http.post(url, json=message, headers={**auth, "Host": "evil.example"})
    assert (anonymous.status_code, anonymous.headers["www-authenticate"]) == (
        401,
        'Bearer realm="meta-tools"',
    )
    assert wrong.status_code == 401
    assert big.status_code == 413
    assert foreign.status_code == 421


@MODES
async def test_many_clients_at_once_keep_their_category_memory_apart(mode: str) -> None:
    def host_for(name: str) -> ScriptedHost:
        shout_x = ("shout", {"text": "x"})
        return ScriptedHost([shout_x, f"{name} first", shout_x, f"{name} second"])

    hosts = {"alice": host_for("alice"), "bob": host_for("bob")}

    async def session(url: str, name: str) -> None:
        async with http_client(url, mode, hosts[name]) as client:
            meta = {SESSION_META_KEY: name} if mode == "auto" else None
            for objective in (f"{name} task one", f"{name} task two"):
                task = {"objective": objective, "exact_input": "x"}
                result = await client.call_tool("other", task, meta=meta)
                assert result.structured_content["status"] == "success"  # type: ignore[index]

    async with served_over_http(router()) as url, anyio.create_task_group() as group:
        for name in hosts:
            group.start_soon(session, url, name)
    for name, other in (("alice", "bob"), ("bob", "alice")):
        first, _, second, _ = hosts[name].task_messages()
        assert "<past_runs>" not in first
        assert f"- {name} task one → {name} first\n</past_runs>" in second
        assert other not in first + second
        assert not any("task one" in p for p in hosts[name].system_prompts())


@MODES
async def test_a_hot_reload_tells_connected_clients_that_the_tools_changed(mode: str) -> None:
    meta = router(model=ScriptedModel([]))
    regrouped = MetaToolsConfig.from_data(
        {"Loud Text": {"description": "Shout texts.", "tools": ["shout", "block"]}}
    )
    notified = anyio.Event()

    async def on_message(message: object) -> None:
        if isinstance(message, mcp_types.ToolListChangedNotification):
            notified.set()

    async with meta, Client(build_server(meta), mode=mode, message_handler=on_message) as client:
        assert [t.name for t in (await client.list_tools()).tools] == ["text", "other"]
        with anyio.fail_after(10):
            if mode == "legacy":
                await meta.reload(regrouped)
                await notified.wait()
            else:
                async with client.listen(tools_list_changed=True) as subscription:
                    await meta.reload(regrouped)
                    await subscription.__anext__()
        # the client's cached tool list was dropped by the notification: no refresh asked
        assert [t.name for t in (await client.list_tools()).tools] == ["loud_text"]


async def test_serving_on_a_taken_port_raises_and_leaves_no_socket_open() -> None:
    import gc
    import socket
    import warnings

    gc.collect()  # garbage of earlier tests warns now, not inside the check below
    with socket.socket() as taken:
        taken.bind(("127.0.0.1", 0))
        taken.listen()
        port = taken.getsockname()[1]
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always")
            with pytest.raises(OSError):
                await serve(router(), transport="http", port=port)
            gc.collect()
    assert [str(w.message) for w in caught if issubclass(w.category, ResourceWarning)] == []


async def test_calls_with_no_client_identity_share_no_category_memory() -> None:
    def answer(request: ChatRequest) -> AssistantTurn:
        if len(request.messages) == 2:
            return AssistantTurn(tool_calls=[ToolCall(name="shout", arguments={"text": "x"})])
        return AssistantTurn(text="done")

    model = ScriptedModel.from_function(answer)
    meta = router(model=model)
    async with meta, Client(build_server(meta), mode="auto") as client:
        await client.call_tool("text", {"objective": "first secret plan", "exact_input": "a"})
        await client.call_tool("text", {"objective": "second task", "exact_input": "b"})
    second = model.requests[2].messages
    assert "first secret plan" not in second[0].content + second[1].content
    assert await meta.get_category("text").past_runs(None) == []


@MODES
async def test_serving_a_config_with_no_model_and_no_key_uses_the_hosts_model(
    mode: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    for name in ("OPENAI_API_KEY", "OPENAI_BASE_URL", "OPENAI_MODEL", "DASHSCOPE_API_KEY"):
        monkeypatch.delenv(name, raising=False)
    (tmp_path / "shouting.py").write_text(
        "from meta_tools import tool\n\n\n@tool\ndef shout(text: str) -> str:\n"
        '    """Upper-case a text."""\n    return text.upper()\n'
    )
    config = tmp_path / "Meta_tool_config.json"
    config.write_text(
        json.dumps(
            {
                "python_tools": ["shouting.py"],
                "Text": {"description": "Shout texts.", "tools": ["shout"]},
            }
        )
    )
    host = ScriptedHost([("shout", {"text": "hi"}), "Shouted: HI"])
    async with anyio.create_task_group() as group:
        url = await group.start(partial(serve, config, transport="http", port=0, token=TOKEN))
        async with http_client(url, mode, host) as client:
            result = await client.call_tool("text", TASK)
        group.cancel_scope.cancel()
    assert result.is_error is False
    assert (result.structured_content or {})["summary"] == "Shouted: HI"
