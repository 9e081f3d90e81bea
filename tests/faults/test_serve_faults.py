"""Fault matrix, service side: a client that vanishes mid-call, and a config file replaced by
invalid JSON while `meta-tools serve` runs (the real CLI, in a subprocess).
"""

from __future__ import annotations

import json
import os
import signal
import sys
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from functools import partial
from pathlib import Path
from typing import Any

import anyio
import pytest
from anyio.abc import Process
from mcp import Client

from meta_tools import tool
from meta_tools.category.manager import CategoryManager
from meta_tools.config import ResumeConfig
from meta_tools.llm import AssistantTurn, ChatRequest, ScriptedModel, ToolCall
from meta_tools.router.manager import MetaManager
from meta_tools.serve.server import serve
from tests.cli_process import Output
from tests.fakes.llm_server import (
    FakeLLMServer,
    Reply,
    openai_text_reply,
    openai_tool_reply,
    wire_tool_call,
)

pytestmark = pytest.mark.anyio

ROOT = Path(__file__).resolve().parents[2]


# -- a client that vanishes mid-call ---------------------------------------------------------

CLIENT = """
import sys, anyio
from mcp import Client

async def main():
    async with Client(sys.argv[1], mode=sys.argv[2]) as client:
        print("calling", flush=True)
        await client.call_tool("work", {"objective": "wait", "exact_input": "forever"})

anyio.run(main)
"""


@pytest.mark.parametrize("mode", ["auto", "legacy"])
async def test_a_client_killed_mid_call_cancels_its_run_and_others_are_served(mode: str) -> None:
    # Both eras: the 2026-07-28 SDK cancels the request; on a legacy (2025-11-25) HTTP
    # session the router notices the disconnect itself, and cancels the run once the
    # client has not resumed its stream within the grace.
    model, meta, started, cancelled = worker_router(tool_timeout_s=30)
    async with anyio.create_task_group() as group:
        resume = ResumeConfig(grace_s=0.5)
        url = await group.start(partial(serve, meta, transport="http", port=0, resume=resume))
        await kill_client_mid_call(url, mode, started)
        with anyio.fail_after(10):
            await cancelled.wait()  # the server noticed and cancelled the run
        result = await add_over_mcp(url, mode)
        group.cancel_scope.cancel()
    assert result == ("success", "3")
    assert [len(r.messages) for r in model.requests] == [2, 2, 5]  # the killed run asked once


def worker_router(
    *, tool_timeout_s: float
) -> tuple[ScriptedModel, MetaManager, anyio.Event, anyio.Event]:
    """A router whose `work` category waits forever (objective "wait") or adds (else)."""
    started, cancelled = anyio.Event(), anyio.Event()

    @tool
    async def wait() -> str:
        """Wait until cancelled."""
        started.set()
        try:
            await anyio.sleep_forever()
        finally:
            cancelled.set()
        return "unreachable"

    @tool
    def add(a: int, b: int) -> int:
        """Add two integers."""
        return a + b

    def answer(request: ChatRequest) -> AssistantTurn:
        if len(request.messages) > 2:
            return AssistantTurn(text="3")
        name, arguments = (
            ("wait", {}) if "wait" in request.messages[1].content else ("add", {"a": 1, "b": 2})
        )
        return AssistantTurn(tool_calls=[ToolCall(name=name, arguments=arguments)])

    model = ScriptedModel.from_function(answer)
    category = CategoryManager(
        "Work", "Waits and adds.", [wait, add], model, tool_timeout_s=tool_timeout_s
    )
    return model, MetaManager([category]), started, cancelled


async def kill_client_mid_call(url: str, mode: str, started: anyio.Event) -> None:
    """A client process calls `work` (wait); once the tool runs, it is SIGKILLed."""
    client = await anyio.open_process(
        [sys.executable, "-c", CLIENT, url, mode], cwd=ROOT, stderr=None
    )
    try:
        assert client.stdout is not None
        await Output(client.stdout).wait_for("calling")
        with anyio.fail_after(30):
            await started.wait()
        client.send_signal(signal.SIGKILL)  # gone without a goodbye
    finally:
        await _stop(client)


async def add_over_mcp(url: str, mode: str) -> tuple[str, str]:
    async with Client(url, mode=mode) as other:
        result = await other.call_tool("work", {"objective": "add", "exact_input": "1 2"})
    assert result.structured_content is not None
    return result.structured_content["status"], result.structured_content["summary"]


async def _stop(process: Process) -> None:
    if process.returncode is None:
        process.kill()
    with anyio.CancelScope(shield=True), anyio.fail_after(10):
        await process.wait()
    await process.aclose()


# -- the config file replaced by invalid JSON while `serve` runs ------------------------------


@asynccontextmanager
async def meta_tools_serve(config: Path, env: dict[str, str]) -> AsyncIterator[tuple[str, Output]]:
    """`meta-tools serve --transport http` in a subprocess; yields its URL and its stderr."""
    command = [
        sys.executable,
        "-c",
        "from meta_tools.cli import main; main()",
        "serve",
        "--config",
        str(config),
        "--transport",
        "http",
        "--port",
        "0",
        "--tools",
        "tests.faults.serve_tools",
    ]
    process = await anyio.open_process(command, cwd=ROOT, env={**os.environ, **env}, stdout=None)
    try:
        assert process.stderr is not None
        stderr = Output(process.stderr)
        line = await stderr.wait_for(" on http://")
        url = line.rsplit(" on ", 1)[1].strip()
        await stderr.wait_for("watching")
        yield url, stderr
        process.send_signal(signal.SIGINT)
        with anyio.fail_after(20):
            assert await process.wait() in (0, 130), stderr.text  # 130: ended by SIGINT
    finally:
        await _stop(process)


def write_config(path: Path, llm: FakeLLMServer, categories: dict[str, Any]) -> None:
    model = {"base_url": llm.openai_base_url, "api_key_env": "FAULT_LLM_KEY", "name": "gpt-test"}
    path.write_text(json.dumps({**categories, "model": model}))


async def add_through(url: str, llm: FakeLLMServer) -> dict[str, Any]:
    llm.enqueue(
        Reply(body=openai_tool_reply(wire_tool_call("call_1", "add", {"a": 2, "b": 3}))),
        Reply(body=openai_text_reply("2 + 3 = 5")),
    )
    async with Client(url) as client:
        result = await client.call_tool("math", {"objective": "Add", "exact_input": "2 and 3"})
    assert result.structured_content is not None
    return result.structured_content


async def test_a_config_replaced_by_invalid_json_while_serving_keeps_the_running_config(
    tmp_path: Path, llm_server: FakeLLMServer
) -> None:
    path = tmp_path / "Meta_tool_config.json"
    math = {"Math": {"description": "Arithmetic.", "tools": ["add"]}}
    write_config(path, llm_server, math)
    async with meta_tools_serve(path, {"FAULT_LLM_KEY": "sk-fault"}) as (url, stderr):
        assert (await add_through(url, llm_server))["summary"] == "2 + 3 = 5"

        broken = tmp_path / "replacement.json"
        broken.write_text('{"Math": {"description": "Arithmetic.", "tools": ["add"]')
        os.replace(broken, path)  # how editors save: a new file under the old name
        rejected = await stderr.wait_for("edit not applied")
        problem = await stderr.wait_for("not valid JSON")

        assert (await add_through(url, llm_server))["summary"] == "2 + 3 = 5"
        async with Client(url) as client:
            assert [t.name for t in (await client.list_tools()).tools] == ["math"]

        write_config(
            path, llm_server, {**math, "Text": {"description": "Texts.", "tools": ["shout"]}}
        )
        await stderr.wait_for("reloaded, 2 categories")
        async with Client(url) as client:
            assert [t.name for t in (await client.list_tools()).tools] == ["math", "text"]
    assert "the running config is kept" in rejected
    assert "line 1 column 57: the file ends before the JSON does" in problem
    assert "Traceback" not in stderr.text


# -- SIGTERM (what a process manager sends) ---------------------------------------------------


async def test_sigterm_closes_the_mcp_sessions_before_the_process_ends(tmp_path: Path) -> None:
    import psutil

    config = tmp_path / "Meta_tool_config.json"
    config.write_text(
        json.dumps(
            {
                "Numbers": {"description": "Arithmetic.", "tools": ["calculate"]},
                "mcp_servers": {"demo": {"command": "python", "args": ["-m", "meta_tools.demo"]}},
                "model": {"api_key_env": "FAULT_LLM_KEY"},
            }
        )
    )
    command = [sys.executable, "-c", "from meta_tools.cli import main; main()", "serve"]
    command += ["--config", str(config), "--transport", "http", "--port", "0", "--no-reload"]
    env = {**os.environ, "FAULT_LLM_KEY": "sk-test"}
    process = await anyio.open_process(command, cwd=ROOT, env=env, stdout=None)
    try:
        assert process.stderr is not None
        stderr = Output(process.stderr)
        await stderr.wait_for(" on http://")
        demo = [
            p
            for p in psutil.Process(process.pid).children()
            if "meta_tools.demo" in " ".join(p.cmdline())
        ]
        assert len(demo) == 1
        process.send_signal(signal.SIGTERM)
        with anyio.fail_after(20):
            assert await process.wait() == -signal.SIGTERM  # the signal still ends the process
        assert "Traceback" not in stderr.text
        with pytest.raises(psutil.NoSuchProcess):
            demo[0].status()  # closed by the router, not orphaned
    finally:
        await _stop(process)
