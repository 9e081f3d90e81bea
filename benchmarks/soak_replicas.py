"""*soak --replicas N*: the soak's checked calls through nginx in front of N router replicas.

Real parts: one redis-server, N `meta-tools serve --transport http` processes
(each with its own demo MCP server over stdio) sharing it and one state key,
and nginx with the repository's `deploy/nginx/meta-tools.conf`. The categories'
model is the host's (`model.provider: "sampling"`) on the 2026-07-28 protocol:
every call takes three HTTP requests (start, the host's tool choice, the host's
summary), and nginx spreads the requests over the replicas with no affinity,
so one call's requests often meet different replicas; each continues the run
from its sealed `request_state`. This process is the host: its sampling callback
is the soak's scripted model (`soak_server.answer`).

The same replicas are measured behind nginx serving 1, then 2, ... N of them
(the others marked `down`), each phase with fresh client sessions. Every result
is compared whole with what its own token must give (`soak_tasks.check`); then
each client makes one more call per category and the past runs its host is shown
must be exactly that client's last runs (memory in Redis, written by whichever
replica finished each call): none lost, none foreign.
"""

from __future__ import annotations

import json
import random
import re
import secrets
import sys
import tempfile
import time
from collections.abc import Iterator
from contextlib import AsyncExitStack, ExitStack, contextmanager
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import anyio
import httpx2
import mcp_types
import psutil  # type: ignore[import-untyped]
from mcp import Client
from mcp.client.streamable_http import streamable_http_client

from meta_tools.llm import AssistantTurn, ChatRequest, Message, ToolCall

from .services import Replica, deploy_nginx_site, nginx, redis_server, replica
from .soak import CALL_TIMEOUT_S, REPO, _percentile
from .soak_server import answer
from .soak_tasks import TASKS, check, request

__all__ = ["run"]

TOKEN = secrets.token_hex(16)
SESSION_KEY = "meta-tools/session"
MEMORY = 10
"""`defaults.category_memory`: past runs remembered per client and category."""
_PAST = re.compile(r"^- (?P<objective>.+) → (?P<summary>.+)$", re.MULTILINE)
_SAMPLING = mcp_types.SamplingCapability(tools=mcp_types.SamplingToolsCapability())


def write_config(folder: Path, redis_url: str) -> Path:
    """The repository's config, its categories on the host's model, memory in Redis."""
    config = json.loads((REPO / "Meta_tool_config.json").read_text())
    demo = config["mcp_servers"]["demo"]
    demo.update(args=["-m", "meta_tools.demo", "--root", str(REPO)], cwd=str(REPO))
    demo["command"] = sys.executable
    config["model"] = {"provider": "sampling"}
    config["memory"] = {"redis_url": redis_url, "ttl_s": 3600}
    config["defaults"] = {"category_memory": MEMORY}
    path = folder / "replicas_config.json"
    path.write_text(json.dumps(config, indent=2))
    return path


def chat_request(params: mcp_types.CreateMessageRequestParams) -> ChatRequest:
    """A sampling request as the chat request the router's model would have got."""
    messages = [Message(role="system", content=params.system_prompt or "")]
    for message in params.messages:
        blocks = message.content_as_list
        texts = [b.text for b in blocks if isinstance(b, mcp_types.TextContent)]
        uses = [b for b in blocks if isinstance(b, mcp_types.ToolUseContent)]
        results = [b for b in blocks if isinstance(b, mcp_types.ToolResultContent)]
        if uses:
            calls = [ToolCall(id=u.id, name=u.name, arguments=dict(u.input)) for u in uses]
            messages.append(Message(role="assistant", content="".join(texts), tool_calls=calls))
        for result in results:
            body = "".join(b.text for b in result.content if isinstance(b, mcp_types.TextContent))
            messages.append(Message(role="tool", tool_call_id=result.tool_use_id, content=body))
        if texts and not uses:
            messages.append(Message(role=message.role, content="".join(texts)))
    return ChatRequest(messages=messages)


def as_sampling_result(turn: AssistantTurn) -> mcp_types.CreateMessageResultWithTools:
    if turn.tool_calls:
        content: list[Any] = [
            mcp_types.ToolUseContent(
                id=c.id, name=c.name, input=c.arguments if isinstance(c.arguments, dict) else {}
            )
            for c in turn.tool_calls
        ]
        reason = "toolUse"
    else:
        content, reason = [mcp_types.TextContent(text=turn.text or "")], "endTurn"
    return mcp_types.CreateMessageResultWithTools(
        role="assistant", model="scripted-host", content=content, stop_reason=reason
    )


@dataclass
class _Host:
    """One client's model: the soak's scripted answers; keeps the past runs its last task showed."""

    shown: list[dict[str, str]] = field(default_factory=list)

    async def __call__(
        self, ctx: Any, params: mcp_types.CreateMessageRequestParams
    ) -> mcp_types.CreateMessageResultWithTools:
        request = chat_request(params)
        if not any(m.role == "tool" for m in request.messages):
            task = request.messages[1].content  # the past runs come with the task
            self.shown = [m.groupdict() for m in _PAST.finditer(task)]
        return as_sampling_result(answer(request))


@dataclass
class _Phase:
    """One phase's shared counters: the next call number, and what came back."""

    end: int
    nonce: int
    next: int = 0
    latencies: list[float] = field(default_factory=list)
    errors: list[str] = field(default_factory=list)
    ok: int = 0
    done_by_client: dict[int, list[int]] = field(default_factory=dict)

    def take(self) -> int | None:
        if self.next >= self.end:
            return None
        self.next += 1
        return self.next - 1


@contextmanager
def _cluster(folder: Path, replicas: int) -> Iterator[tuple[list[Replica], Path]]:
    with ExitStack() as stack:
        url, _ = stack.enter_context(redis_server(folder))
        config = write_config(folder, url)
        env = {"META_TOOLS_TOKEN": TOKEN, "META_TOOLS_STATE_KEY": secrets.token_hex(32)}
        started = [
            stack.enter_context(replica(f"replica{n}", config, env=env))
            for n in range(1, replicas + 1)
        ]
        yield started, folder


async def _client(url: str, host: _Host, stack: AsyncExitStack) -> Client:
    http = await stack.enter_async_context(
        httpx2.AsyncClient(headers={"Authorization": f"Bearer {TOKEN}"}, timeout=CALL_TIMEOUT_S)
    )
    connection = streamable_http_client(url, http_client=http)
    client = Client(connection, sampling_callback=host, sampling_capabilities=_SAMPLING)
    return await stack.enter_async_context(client)


async def _worker(client: Client, number: int, session: str, phase: _Phase) -> None:
    while (index := phase.take()) is not None:
        name, arguments, token = request(index, phase.nonce)
        started = time.perf_counter()
        try:
            result = await client.call_tool(
                name, arguments, meta={SESSION_KEY: session}, read_timeout_seconds=CALL_TIMEOUT_S
            )
        except Exception as exc:  # counted and reported: every failure must show
            phase.errors.append(f"call {index}: {type(exc).__name__}: {exc}"[:300])
            continue
        phase.latencies.append(time.perf_counter() - started)
        problem = check(result, index, token)
        if problem is None:
            phase.ok += 1
            phase.done_by_client.setdefault(number, []).append(index)
        else:
            phase.errors.append(problem)


async def _memory_check(
    client: Client, host: _Host, number: int, session: str, phase: _Phase
) -> list[str]:
    """One more call per category: its host must be shown this client's last runs there."""
    problems = []
    done = phase.done_by_client.get(number, [])
    for offset, task in enumerate(TASKS):
        mine = [i for i in done if i % len(TASKS) == offset]
        # A call number the soak did not use, of this category (its token is unique too).
        index = phase.end + number * len(TASKS) + offset
        index += (offset - index) % len(TASKS)
        name, arguments, _ = request(index, phase.nonce)
        await client.call_tool(name, arguments, meta={SESSION_KEY: session})
        tokens = {request(i, phase.nonce)[2] for i in mine}
        expected = {task.summary(t) for t in tokens}
        shown = [run["summary"] for run in host.shown]
        if len(shown) != min(MEMORY, len(mine)) or not set(shown) <= expected:
            problems.append(
                f"client {number}, {task.category_slug}: shown {len(shown)} past runs,"
                f" expected {min(MEMORY, len(mine))} of its own {len(mine)}"
            )
    return problems


async def _phase(
    url: str, *, calls: int, clients: int, per_client: int, label: str
) -> dict[str, Any]:
    phase = _Phase(end=calls, nonce=random.randrange(10_000, 100_000))
    hosts = [_Host() for _ in range(clients)]
    sessions = [f"{label}-{n}-{secrets.token_hex(4)}" for n in range(clients)]
    async with AsyncExitStack() as stack:
        pool = [await _client(url, host, stack) for host in hosts]
        started = time.perf_counter()
        async with anyio.create_task_group() as group:
            for slot in range(clients * per_client):
                number = slot % clients
                group.start_soon(_worker, pool[number], number, sessions[number], phase)
        wall = time.perf_counter() - started
        memory: list[str] = []
        for number, client in enumerate(pool):
            memory += await _memory_check(client, hosts[number], number, sessions[number], phase)
    return {
        "replicas": label,
        "calls": calls,
        "ok": phase.ok,
        "errors": len(phase.errors),
        "error_samples": phase.errors[:10],
        "memory_problems": memory[:10],
        "memory_checked_clients": clients,
        "wall_s": round(wall, 2),
        "calls_per_s": round(calls / wall, 1) if wall else 0.0,
        "latency_p50_ms": round(_percentile(phase.latencies, 0.50) * 1e3, 1),
        "latency_p99_ms": round(_percentile(phase.latencies, 0.99) * 1e3, 1),
    }


def _cpu(replicas: list[Replica]) -> dict[str, float]:
    """CPU seconds used so far: this process (the clients), each replica with its demo server."""

    def total(process: psutil.Process) -> float:
        times = process.cpu_times()
        return float(times.user + times.system)

    used = {"clients": total(psutil.Process())}
    for found in replicas:
        process = psutil.Process(found.process.pid)
        children = process.children(recursive=True)
        used[found.name] = total(process) + sum(total(child) for child in children)
    return used


async def run(*, replicas: int = 2, quick: bool = False) -> dict[str, Any]:
    """`calls` checked calls through nginx, for 1..`replicas` replicas serving, one run."""
    calls, clients, per_client = (300, 5, 10) if quick else (2_000, 10, 20)
    phases: list[dict[str, Any]] = []
    with tempfile.TemporaryDirectory(prefix="meta-tools-replicas-") as name:
        folder = Path(name)
        with _cluster(folder, replicas) as (started, _):
            ports = [r.port for r in started]
            for serving in range(1, replicas + 1):
                nginx_folder = folder / f"nginx-{serving}"
                nginx_folder.mkdir()
                site = deploy_nginx_site(ports, serving=serving)
                with nginx(nginx_folder, site) as (port, nginx_log):
                    url = f"http://127.0.0.1:{port}/meta-tools/mcp"
                    before = _cpu(started)
                    phases.append(
                        await _phase(
                            url,
                            calls=calls,
                            clients=clients,
                            per_client=per_client,
                            label=str(serving),
                        )
                    )
                    after = _cpu(started)
                    phases[-1]["cpu_s"] = {k: round(after[k] - before[k], 1) for k in after}
                phases[-1]["nginx_problems"] = [
                    line for line in nginx_log.text.splitlines() if "[error]" in line
                ][:10]
                served = (nginx_folder / "access.log").read_text().splitlines()
                phases[-1]["requests_per_replica"] = {
                    f"replica{n}": sum(1 for line in served if line.startswith(f"127.0.0.1:{p} "))
                    for n, p in enumerate(ports, start=1)
                }
            logs = {r.name: r.output.text for r in started}
    problems = {
        n: [line for line in text.splitlines() if "Traceback" in line or " ERROR " in line][:10]
        for n, text in logs.items()
    }
    clean = all(
        p["errors"] == 0 and not p["memory_problems"] and not p["nginx_problems"] for p in phases
    )
    return {
        "setup": f"nginx (deploy/nginx/meta-tools.conf) -> {replicas} x meta-tools serve"
        " --transport http, Redis memory, host sampling over 2026-07-28 (3 requests per call)",
        "concurrency": clients * per_client,
        "clients": clients,
        "phases": phases,
        "server_log_problems": problems,
        "verdict": "PASS" if clean and not any(problems.values()) else "FAIL",
    }
