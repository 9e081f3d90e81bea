"""Shared MCP test helpers: leak checks after every test, subprocess servers, a scripted host model."""

from __future__ import annotations

import asyncio
import socket
import sys
from collections.abc import AsyncIterator, Callable, Sequence
from contextlib import asynccontextmanager
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import anyio
import mcp_types
import psutil
import pytest
from anyio.abc import Process
from mcp import StdioServerParameters
from mcp.client.session import ClientRequestContext

ROOT = Path(__file__).resolve().parents[2]
SAMPLING_TOOLS = mcp_types.SamplingCapability(tools=mcp_types.SamplingToolsCapability())


def _live_children() -> dict[int, str]:
    found: dict[int, str] = {}
    for child in psutil.Process().children(recursive=True):
        try:
            if child.status() != psutil.STATUS_ZOMBIE:
                found[child.pid] = " ".join(child.cmdline())
        except psutil.NoSuchProcess:
            continue
    return found


def _foreign(task: asyncio.Task[Any]) -> bool:
    """Tasks that are not the test's: the anyio pytest runner's, and sse-starlette's
    per-event-loop shutdown watcher (a library singleton that the SDK's SSE responses
    start; it polls for uvicorn's exit and outlives any one server)."""
    coro = task.get_coro()
    name = getattr(coro, "__qualname__", "")
    module = getattr(getattr(coro, "cr_code", None), "co_filename", "")
    return name.startswith("TestRunner.") or (
        name == "_shutdown_watcher" and module.endswith("sse_starlette/sse.py")
    )


@pytest.fixture(autouse=True)
async def no_leaks() -> AsyncIterator[None]:
    """After each test: no task it started is still running, no subprocess it started is alive."""
    tasks_before = asyncio.all_tasks()
    children_before = set(_live_children())
    yield
    me = asyncio.current_task()
    leftover = [
        t
        for t in asyncio.all_tasks()
        if t not in tasks_before and t is not me and not t.done() and not _foreign(t)
    ]
    if leftover:
        await asyncio.wait(leftover, timeout=5)
    running = [t for t in leftover if not t.done()]
    assert not running, f"tasks left running: {running}"
    alive = {pid: cmd for pid, cmd in _live_children().items() if pid not in children_before}
    assert not alive, f"subprocesses left running: {alive}"


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


def changing_stdio() -> StdioServerParameters:
    """The `changing` test server as a stdio subprocess."""
    return StdioServerParameters(
        command=sys.executable, args=["-m", "tests.servers.changing"], cwd=ROOT
    )


def kill_children(marker: str) -> list[int]:
    """Kill (SIGKILL) the live subprocesses whose command line contains `marker`."""
    killed = []
    for child in psutil.Process().children(recursive=True):
        try:
            if marker in " ".join(child.cmdline()) and child.status() != psutil.STATUS_ZOMBIE:
                child.kill()
                killed.append(child.pid)
        except psutil.NoSuchProcess:
            continue
    return killed


@asynccontextmanager
async def http_server(*args: str) -> AsyncIterator[tuple[Process, str]]:
    """Run `python ARGS` (a server that prints `listening on URL`); yield it and the URL."""
    process = await anyio.open_process([sys.executable, *args], cwd=ROOT)
    try:
        assert process.stdout is not None
        seen = b""
        with anyio.fail_after(30):
            while b"\n" not in seen:
                seen += await process.stdout.receive()
        line = seen.split(b"\n", 1)[0].decode()
        assert line.startswith("listening on "), line
        yield process, line.removeprefix("listening on ")
    finally:
        await stop(process)


async def stop(process: Process) -> None:
    """Kill a subprocess and wait until it is gone."""
    if process.returncode is None:
        process.kill()
    with anyio.fail_after(10), anyio.CancelScope(shield=True):
        await process.wait()
    await process.aclose()


Step = tuple[str, dict[str, Any]] | str | Callable[[mcp_types.CreateMessageRequestParams], Any]


@dataclass
class ScriptedHost:
    """The host's model as a sampling callback: answers from a script, records every request.

    A step is `(tool_name, arguments)` (a tool call; the name may be matched by its end,
    for prefixed tools), a text (the final answer), or a function of the request.
    """

    steps: Sequence[Step]
    requests: list[mcp_types.CreateMessageRequestParams] = field(default_factory=list)

    async def __call__(
        self, ctx: ClientRequestContext, params: mcp_types.CreateMessageRequestParams
    ) -> mcp_types.CreateMessageResultWithTools:
        self.requests.append(params)
        index = len(self.requests) - 1
        assert index < len(self.steps), f"the host was asked {index + 1} times: {params.messages}"
        step = self.steps[index]
        if callable(step):
            step = step(params)
        if isinstance(step, str):
            content: list[Any] = [mcp_types.TextContent(text=step)]
            return mcp_types.CreateMessageResultWithTools(
                role="assistant", model="scripted-host", content=content, stop_reason="endTurn"
            )
        name, arguments = step
        offered = [t.name for t in params.tools or []]
        chosen = next((n for n in offered if n == name or n.endswith(f"_{name}")), name)
        use = mcp_types.ToolUseContent(id=f"call_{index}", name=chosen, input=arguments)
        return mcp_types.CreateMessageResultWithTools(
            role="assistant", model="scripted-host", content=[use], stop_reason="toolUse"
        )

    def system_prompts(self) -> list[str]:
        return [r.system_prompt or "" for r in self.requests]

    def task_messages(self) -> list[str]:
        """The first user message of each request: the task, after any fenced past runs."""
        first = [r.messages[0].content for r in self.requests]
        return [c.text if isinstance(c, mcp_types.TextContent) else "" for c in first]


@asynccontextmanager
async def asgi_server(app: Any) -> AsyncIterator[str]:
    """Serve an ASGI app with uvicorn on a free 127.0.0.1 port; yield its base URL."""
    import uvicorn

    sock = socket.socket()
    sock.bind(("127.0.0.1", 0))
    sock.listen(64)  # connections wait in the backlog until uvicorn accepts them
    server = uvicorn.Server(
        uvicorn.Config(app, log_level="warning", lifespan="on", timeout_graceful_shutdown=2)
    )
    try:
        async with anyio.create_task_group() as group:
            group.start_soon(lambda: server.serve(sockets=[sock]))
            try:
                yield f"http://127.0.0.1:{sock.getsockname()[1]}"
            finally:
                server.should_exit = True
    finally:
        sock.close()
