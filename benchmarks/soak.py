"""*soak*: many concurrent category calls through the router served over streamable HTTP.

The server is its own process (`benchmarks/soak_server.py`: `meta_tools.server.serve`
over a router built from the repository's `Meta_tool_config.json`, whose demo MCP
server runs over stdio, and a scripted model), so its resident memory is measured
apart from the clients'. This process is the client: a pool of real `mcp.Client`
sessions, each running several calls at once. The first wave is exactly one call
per worker, all in flight together; the workers then go on until the total is
reached, keeping the same number in flight. Every result is checked whole against
what its own request must produce (the request's token is in the tool's arguments,
in the demo tool's output and in the summary the model wrote from that output).

Memory is the server process's RSS (psutil), read when no call is in flight: after
the first wave and after the last call. The bound (`BOUND_FACTOR`, `BOUND_SLACK_MB`)
is checked and reported as PASS or FAIL.
"""

from __future__ import annotations

import json
import random
import signal
import sys
import tempfile
import time
from collections.abc import AsyncIterator
from contextlib import AsyncExitStack, asynccontextmanager
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import anyio
import mcp_types
import psutil
from anyio.abc import Process
from mcp import Client

from .soak_server import TASKS

__all__ = [
    "BOUND_FACTOR",
    "BOUND_SLACK_MB",
    "ServedRouter",
    "check",
    "request",
    "run",
    "served_router",
    "soak",
    "verdict",
    "write_config",
]

REPO = Path(__file__).resolve().parents[1]
MB = 1024 * 1024

BOUND_FACTOR = 1.10
BOUND_SLACK_MB = 16.0
"""PASS when RSS after all calls <= RSS after the first wave x BOUND_FACTOR + BOUND_SLACK_MB.

Why these numbers: the first wave already holds every call's peak state at once,
so a server without leaks stays near that plateau (CPython keeps freed arenas,
so RSS hardly shrinks, but it must not climb). The slack absorbs allocator
fragmentation and lazily built caches. A leak of a finished call's request and
result (messages, prompts, JSON: ~10 KB each) would add ~90 MB over 9,000 calls,
far above the limit; at 10,000 calls the bound catches leaks of ~2.5 KB per call.
"""

CALL_TIMEOUT_S = 120.0
MODE = "auto"
_LOG_PROBLEMS = ("Traceback", "ERROR", "Exception", "exception")


def write_config(folder: Path) -> Path:
    """The repository's `Meta_tool_config.json`, with this interpreter running the demo server."""
    config = json.loads((REPO / "Meta_tool_config.json").read_text())
    demo = config["mcp_servers"]["demo"]
    demo.update(
        command=sys.executable, args=["-m", "meta_tools.demo", "--root", str(REPO)], cwd=str(REPO)
    )
    path = folder / "soak_config.json"
    path.write_text(json.dumps(config, indent=2))
    return path


@dataclass
class ServedRouter:
    """The server process: its URL, and its memory (and that of the demo MCP server it runs)."""

    process: Process
    url: str
    log: Path

    def rss(self) -> int:
        """The router process's resident memory, in bytes."""
        return int(psutil.Process(self.process.pid).memory_info().rss)

    def children_rss(self) -> int:
        """The resident memory of the server's subprocesses (the demo MCP server), in bytes."""
        total = 0
        for child in psutil.Process(self.process.pid).children(recursive=True):
            try:
                total += child.memory_info().rss
            except psutil.NoSuchProcess:
                continue
        return total

    def log_problems(self) -> list[str]:
        """Lines of the server's stderr that report an error."""
        text = self.log.read_text(errors="replace") if self.log.exists() else ""
        return [line for line in text.splitlines() if any(p in line for p in _LOG_PROBLEMS)]


@asynccontextmanager
async def served_router(config: Path, log: Path) -> AsyncIterator[ServedRouter]:
    """Run `python -m benchmarks.soak_server CONFIG` (stderr to `log`); stop it on exit."""
    with log.open("wb") as stderr:
        process = await anyio.open_process(
            [sys.executable, "-m", "benchmarks.soak_server", str(config)], cwd=REPO, stderr=stderr
        )
    children: list[psutil.Process] = []
    try:
        assert process.stdout is not None
        seen = b""
        with anyio.fail_after(60):
            while b"\n" not in seen:
                chunk = await process.stdout.receive()
                seen += chunk
        line = seen.split(b"\n", 1)[0].decode()
        if not line.startswith("listening on "):
            raise RuntimeError(f"the soak server did not start: {line!r}; see {log}")
        children = psutil.Process(process.pid).children(recursive=True)
        yield ServedRouter(process, line.removeprefix("listening on ").strip(), log)
    finally:
        with anyio.CancelScope(shield=True):
            await _stop(process, children)


async def _stop(process: Process, children: list[psutil.Process]) -> None:
    """SIGINT (a graceful stop that closes the router and its MCP server), then make sure."""
    if process.returncode is None:
        process.send_signal(signal.SIGINT)
        with anyio.move_on_after(30):
            await process.wait()
        if process.returncode is None:
            process.kill()
            await process.wait()
    for child in children:  # only if the server died without closing its MCP subprocess
        try:
            child.kill()
        except psutil.NoSuchProcess:
            continue
    await process.aclose()


def request(index: int, nonce: int) -> tuple[str, dict[str, str], int]:
    """Call number `index`: its category tool, its arguments and its token (unique per run)."""
    task = TASKS[index % len(TASKS)]
    token = nonce * 100_000 + index
    return task.category_slug, {"objective": task.objective, "exact_input": f"token {token}"}, token


def _parsed(text: str | None) -> Any:
    """A tool output as JSON, or the text itself when it is not JSON (then it cannot match)."""
    try:
        return json.loads(text or "null")
    except json.JSONDecodeError:
        return text


def check(result: mcp_types.CallToolResult, index: int, token: int) -> str | None:
    """None when `result` is exactly what call `index` with `token` must return, else why not.

    Timings (`duration_s`, `wall_s`) vary and are left out; the tool's output is compared
    as parsed JSON.
    """
    task = TASKS[index % len(TASKS)]
    where = f"call {index} ({task.category_slug}, token {token})"
    text = "".join(c.text for c in result.content if isinstance(c, mcp_types.TextContent))
    if result.is_error or result.structured_content is None:
        return f"{where}: error result {text[:300]!r}"
    got = json.loads(text)
    if got != result.structured_content:
        return f"{where}: the text and the structured content differ"
    got.get("usage", {}).pop("wall_s", None)
    for execution in got.get("executions", []):
        execution.pop("duration_s", None)
        execution["result"] = _parsed(execution.get("result"))
    expected = {
        "category": task.category,
        "status": "success",
        "summary": task.summary(token),
        "executions": [
            {
                "tool": task.tool,
                "arguments": task.arguments(token),
                "ok": True,
                "result": task.output(token),
                "round": 1,
                "cached": False,
            }
        ],
        "iterations": 1,
        "usage": {
            "llm_calls": 2,
            "prompt_tokens": 0,
            "completion_tokens": 0,
            "cache_hits": 0,
            "cache_misses": 0,
        },
    }
    if got != expected:
        return f"{where}: expected {json.dumps(expected)[:400]}, got {json.dumps(got)[:400]}"
    return None


@dataclass
class _Tally:
    """What the workers share: the next call number, the phase's end, and what came back."""

    router: ServedRouter
    nonce: int
    every: int
    end: int = 0
    next: int = 0
    ok: int = 0
    latencies: list[float] = field(default_factory=list)
    errors: list[str] = field(default_factory=list)
    error_count: int = 0
    trend: list[dict[str, float]] = field(default_factory=list)

    def take(self) -> int | None:
        if self.next >= self.end:
            return None
        self.next += 1
        return self.next - 1

    def done(self, problem: str | None, latency: float | None) -> None:
        if latency is not None:
            self.latencies.append(latency)
        if problem is None:
            self.ok += 1
        else:
            self.error_count += 1
            if len(self.errors) < 20:  # the first few say what went wrong; the count how often
                self.errors.append(problem)
        finished = self.ok + self.error_count
        if finished % self.every == 0 and self.next < self.end:  # a trend point, in flight
            self.trend.append({"calls": finished, "rss_mb": _mb(self.router.rss())})


async def _worker(client: Client, tally: _Tally) -> None:
    while (index := tally.take()) is not None:
        name, arguments, token = request(index, tally.nonce)
        started = time.perf_counter()
        try:
            result = await client.call_tool(name, arguments, read_timeout_seconds=CALL_TIMEOUT_S)
        except Exception as exc:  # counted and reported: the soak must see every failure
            tally.done(f"call {index}: {type(exc).__name__}: {exc}", None)
            continue
        tally.done(check(result, index, token), time.perf_counter() - started)


def _percentile(samples: list[float], share: float) -> float:
    ordered = sorted(samples)
    return ordered[min(len(ordered) - 1, int(len(ordered) * share))] if ordered else 0.0


def _phase(calls: int, wall_s: float, latencies: list[float]) -> dict[str, Any]:
    return {
        "calls": calls,
        "wall_s": round(wall_s, 2),
        "calls_per_s": round(calls / wall_s, 1) if wall_s else 0.0,
        "latency_p50_ms": round(_percentile(latencies, 0.50) * 1e3, 1),
        "latency_p99_ms": round(_percentile(latencies, 0.99) * 1e3, 1),
    }


def _mb(value: int) -> float:
    return round(value / MB, 1)


async def soak(
    router: ServedRouter, *, calls: int, clients: int, per_client: int
) -> dict[str, Any]:
    """Run `calls` checked calls, `clients x per_client` at a time; figures and errors.

    Phase one is one call per worker (all in flight at once), phase two the rest.
    RSS is read before the first call and after each phase (nothing in flight);
    `rss_trend` adds a reading each time another wave's worth of calls finished.
    """
    concurrency = clients * per_client
    tally = _Tally(router, nonce=random.randrange(10_000, 100_000), every=concurrency)
    rss: dict[str, float] = {}
    phases: list[dict[str, Any]] = []
    async with AsyncExitStack() as stack:
        pool = [
            await stack.enter_async_context(Client(router.url, mode=MODE)) for _ in range(clients)
        ]
        for client in pool:  # the client checks structured content against the listed schema
            listed = [t.name for t in (await client.list_tools()).tools]
        protocol = pool[0].protocol_version
        rss["start"] = _mb(router.rss())
        demo_start = _mb(router.children_rss())
        for end in sorted({min(concurrency, calls), calls}):
            first, tally.end = tally.next, end
            seen = len(tally.latencies)
            started = time.perf_counter()
            async with anyio.create_task_group() as workers:
                for number in range(min(concurrency, end - first)):
                    workers.start_soon(_worker, pool[number % clients], tally)
            elapsed = time.perf_counter() - started
            phases.append(_phase(end - first, elapsed, tally.latencies[seen:]))
            rss[f"after_{end}"] = _mb(router.rss())
            tally.trend.append({"calls": end, "rss_mb": rss[f"after_{end}"]})
        demo_end = _mb(router.children_rss())
    wall = sum(p["wall_s"] for p in phases)
    return {
        "transport": f"streamable HTTP, protocol {protocol}",
        "categories": listed,
        "clients": clients,
        "concurrent_per_client": per_client,
        "concurrency": concurrency,
        "calls": calls,
        "ok": tally.ok,
        "errors": tally.error_count,
        "error_samples": tally.errors,
        "rss_mb": rss,
        "rss_trend": tally.trend,
        "demo_server_rss_mb": {"start": demo_start, "end": demo_end},
        "phases": phases,
        "overall": _phase(calls, wall, tally.latencies),
    }


def verdict(figures: dict[str, Any]) -> dict[str, Any]:
    """The memory bound and the error count, judged: PASS or FAIL, and why."""
    rss = figures["rss_mb"]
    first, last = rss[f"after_{figures['concurrency']}"], rss[f"after_{figures['calls']}"]
    limit = round(first * BOUND_FACTOR + BOUND_SLACK_MB, 1)
    later = figures["calls"] - figures["concurrency"]
    growth_kib = round((last - first) * 1024 / later, 3) if later else 0.0
    memory_ok = last <= limit
    clean = figures["errors"] == 0 and figures["ok"] == figures["calls"]
    return {
        "rule": f"RSS after {figures['calls']:,} <= RSS after {figures['concurrency']:,}"
        f" x {BOUND_FACTOR} + {BOUND_SLACK_MB:g} MB",
        "rss_first_mb": first,
        "rss_last_mb": last,
        "limit_mb": limit,
        "growth_kib_per_call": growth_kib,
        "memory": "PASS" if memory_ok else "FAIL",
        "results": "PASS" if clean else "FAIL",
        "verdict": "PASS" if memory_ok and clean else "FAIL",
    }


async def run(*, quick: bool = False) -> dict[str, Any]:
    """The soak: 10,000 calls, 50 clients x 20 at a time (quick: 2,000, 10 x 20)."""
    calls, clients, per_client = (2_000, 10, 20) if quick else (10_000, 50, 20)
    with tempfile.TemporaryDirectory(prefix="meta-tools-soak-") as folder:
        config = write_config(Path(folder))
        async with served_router(config, Path(folder) / "server.log") as router:
            figures = await soak(router, calls=calls, clients=clients, per_client=per_client)
        figures["server_log_problems"] = router.log_problems()[:20]
    figures["bound"] = verdict(figures)
    if figures["server_log_problems"]:
        figures["bound"]["verdict"] = "FAIL"
    return figures
