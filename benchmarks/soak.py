"""*soak*: many concurrent category calls through the router served over streamable HTTP.

The server is its own process (`benchmarks/soak_server.py`: `meta_tools.serve.serve`
over a router built from the repository's `Meta_tool_config.json`, whose demo MCP
server runs over stdio, and a scripted model), so its resident memory is measured
apart from the clients'. This process is the client: a pool of real `mcp.Client`
sessions, each running several calls at once. The first wave is exactly one call
per worker, all submitted together; the workers then go on until the total is
reached, keeping the same number in flight. Every result is checked whole against
what its own request must produce (the request's token is in the tool's arguments,
in the demo tool's output and in the summary the model wrote from that output).
It runs once per protocol era: 2026-07-28 (the SDK's default) and legacy sessions.

Memory is read with the server at rest (no call in flight, the clients' sessions
closed, garbage collected) before the first call, after the first wave and after
the last call: its RSS (psutil) and its live heap (`sys.getallocatedblocks()`, which
the server reports on SIGUSR1). RSS read in flight after every wave's worth of
calls shows the trend. Two bounds are judged, PASS or FAIL: see `BOUND_FACTOR`
and `HEAP_SLACK_BLOCKS`.
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
from typing import Any, Literal

import anyio
import psutil  # type: ignore[import-untyped]
from anyio.abc import ByteReceiveStream, Process
from mcp import Client

from .soak_tasks import check, request

__all__ = [
    "BOUND_FACTOR",
    "BOUND_SLACK_MB",
    "HEAP_SLACK_BLOCKS",
    "ServedRouter",
    "run",
    "served_router",
    "soak",
    "verdict",
    "write_config",
]

REPO = Path(__file__).resolve().parents[1]
MB = 1024 * 1024
Mode = Literal["auto", "legacy"]

BOUND_FACTOR = 1.5
BOUND_SLACK_MB = 32.0
"""Bound 1: RSS after all calls <= RSS after the first wave x BOUND_FACTOR + BOUND_SLACK_MB.

The first wave is not the plateau yet. Its calls are submitted together, but the
server answers the first ones before the last arrive, so it holds fewer calls (and,
in the 2026-07-28 era, fewer keep-alive connections) at once than later, when
answers and new calls overlap all the time. Measured on 2 cores: RSS climbs during
the next 1,000 calls, to 1.03x to 1.46x of the first-wave reading depending on how
much the first wave overlapped, then stays flat up to 30,000 calls. The factor
covers that warm-up; the slack covers allocator noise and caches built on first use.
A server that kept every model request (measured by not clearing the scripted
model's history: +13 KB of RSS and +92 heap blocks per call) ends at 241 MB
against a limit of 217 MB, and fails both bounds.
"""

HEAP_SLACK_BLOCKS = 30_000
"""Bound 2: live heap blocks after all calls <= after the first wave + HEAP_SLACK_BLOCKS.

Both are read at rest after a full garbage collection (`sys.getallocatedblocks()`
in the server), so unlike RSS they do not keep the high-water mark of the calls
that were in flight. What may still grow is bounded by design: pydantic-core's
cache of parsed JSON strings (16,384 slots, about 14,500 blocks when full) and
the router's session memory (per category at most 256 sessions x 10 runs; the
100 legacy sessions here fill about 12,000 blocks). Measured growth from 1,000 to
10,000 calls: about +100 blocks (2026-07-28) and +6,000 to +9,000 (legacy); a
leak of 4 small objects (blocks) per call adds 36,000 and fails.
"""

CALL_TIMEOUT_S = 120.0
IDLE_TIMEOUT_S = 10.0
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


class _Lines:
    """A subprocess's stdout, line by line."""

    def __init__(self, stream: ByteReceiveStream) -> None:
        self._stream = stream
        self._buffer = b""

    async def next(self) -> str:
        """The next line ("" once the stream ended)."""
        while b"\n" not in self._buffer:
            try:
                self._buffer += await self._stream.receive()
            except anyio.EndOfStream:
                line, self._buffer = self._buffer, b""
                return line.decode(errors="replace")
        line, self._buffer = self._buffer.split(b"\n", 1)
        return line.decode(errors="replace")


@dataclass
class ServedRouter:
    """The server process: its URL, and its memory (and that of the demo MCP server it runs)."""

    process: Process
    url: str
    log: Path
    stdout: _Lines

    def rss(self) -> int:
        """The router process's resident memory, in bytes."""
        return int(psutil.Process(self.process.pid).memory_info().rss)

    async def heap(self) -> dict[str, int]:
        """Let the server collect garbage and report its live heap (`report_memory`)."""
        self.process.send_signal(signal.SIGUSR1)
        with anyio.fail_after(60):
            line = await self.stdout.next()
        if not line.startswith("memory "):
            raise RuntimeError(f"the soak server answered {line!r} to SIGUSR1; see {self.log}")
        return dict(json.loads(line.removeprefix("memory ")))

    def children_rss(self) -> int:
        """The resident memory of the server's subprocesses (the demo MCP server), in bytes."""
        total = 0
        for child in psutil.Process(self.process.pid).children(recursive=True):
            try:
                total += child.memory_info().rss
            except psutil.NoSuchProcess:
                continue
        return total

    def connections(self) -> int:
        """The server's established TCP connections (its clients' keep-alive connections)."""
        found = psutil.Process(self.process.pid).net_connections(kind="tcp")
        return sum(1 for c in found if c.status == psutil.CONN_ESTABLISHED)

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
        stdout = _Lines(process.stdout)
        with anyio.fail_after(60):
            line = await stdout.next()
        if not line.startswith("listening on "):
            told = log.read_text(errors="replace")[-2000:]
            raise RuntimeError(f"the soak server did not start: {line!r}; its stderr: {told}")
        children = psutil.Process(process.pid).children(recursive=True)
        yield ServedRouter(process, line.removeprefix("listening on ").strip(), log, stdout)
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
    trend: list[dict[str, Any]] = field(default_factory=list)

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


async def _reading(router: ServedRouter) -> dict[str, Any]:
    """The server at rest: no call in flight, its clients' connections closed, garbage collected.

    Closed connections are waited for (bounded by `IDLE_TIMEOUT_S`; how many are left
    is part of the reading), so that every reading compares the same state.
    """
    deadline = time.monotonic() + IDLE_TIMEOUT_S
    while router.connections() and time.monotonic() < deadline:
        await anyio.sleep(0.05)  # the server closes its side once it reads the client's FIN
    heap = await router.heap()
    return {"rss_mb": _mb(router.rss()), "connections": router.connections(), **heap}


async def soak(
    router: ServedRouter, *, calls: int, clients: int, per_client: int, mode: Mode = "auto"
) -> dict[str, Any]:
    """Run `calls` checked calls, `clients x per_client` at a time; figures and errors.

    Phase one is one call per worker (all submitted at once), phase two the rest, each
    with a new pool of client sessions. The server is read at rest (`_reading`) before
    the first call and after each phase; `rss_trend` adds an RSS reading in flight each
    time another wave's worth of calls finished.
    """
    concurrency = clients * per_client
    tally = _Tally(router, nonce=random.randrange(10_000, 100_000), every=concurrency)
    readings = {"start": await _reading(router)}
    demo_start = _mb(router.children_rss())
    phases: list[dict[str, Any]] = []
    for end in sorted({min(concurrency, calls), calls}):
        async with AsyncExitStack() as stack:
            pool = [
                await stack.enter_async_context(Client(router.url, mode=mode))
                for _ in range(clients)
            ]
            for client in pool:  # the client checks structured content against this schema
                listed = [t.name for t in (await client.list_tools()).tools]
            protocol = pool[0].protocol_version
            first, tally.end = tally.next, end
            seen = len(tally.latencies)
            started = time.perf_counter()
            async with anyio.create_task_group() as workers:
                for number in range(min(concurrency, end - first)):
                    workers.start_soon(_worker, pool[number % clients], tally)
            elapsed = time.perf_counter() - started
        phases.append(_phase(end - first, elapsed, tally.latencies[seen:]))
        readings[f"after_{end}"] = await _reading(router)
        tally.trend.append({"calls": end, "rss_mb": readings[f"after_{end}"]["rss_mb"]})
    return {
        "mode": mode,
        "transport": f"streamable HTTP, protocol {protocol}",
        "categories": listed,
        "clients": clients,
        "concurrent_per_client": per_client,
        "concurrency": concurrency,
        "calls": calls,
        "ok": tally.ok,
        "errors": tally.error_count,
        "error_samples": tally.errors,
        "rss_mb": {name: reading["rss_mb"] for name, reading in readings.items()},
        "at_rest": readings,
        "rss_trend": tally.trend,
        "demo_server_rss_mb": {"start": demo_start, "end": _mb(router.children_rss())},
        "phases": phases,
        "overall": _phase(calls, sum(p["wall_s"] for p in phases), tally.latencies),
    }


def verdict(figures: dict[str, Any]) -> dict[str, Any]:
    """Both memory bounds and the results, judged: PASS or FAIL, with the numbers."""
    calls, wave = figures["calls"], figures["concurrency"]
    first, last = figures["at_rest"][f"after_{wave}"], figures["at_rest"][f"after_{calls}"]
    limit = round(first["rss_mb"] * BOUND_FACTOR + BOUND_SLACK_MB, 1)
    grown = last["allocated_blocks"] - first["allocated_blocks"]
    clean = (
        figures["errors"] == 0
        and figures["ok"] == calls
        and not figures["log_problems"]
        and figures.get("server_exit_code", 0) == 0
    )
    judged = {
        "memory": last["rss_mb"] <= limit,
        "heap": grown <= HEAP_SLACK_BLOCKS,
        "results": clean,
    }
    return {
        "rule": f"RSS after {calls:,} <= RSS after {wave:,} x {BOUND_FACTOR:g}"
        f" + {BOUND_SLACK_MB:g} MB",
        "limit_mb": limit,
        "heap_rule": f"live heap blocks after {calls:,} <= after {wave:,} + {HEAP_SLACK_BLOCKS:,}",
        "heap_growth_blocks": grown,
        "heap_limit_blocks": HEAP_SLACK_BLOCKS,
        **{name: "PASS" if ok else "FAIL" for name, ok in judged.items()},
        "verdict": "PASS" if all(judged.values()) else "FAIL",
    }


async def run(*, quick: bool = False) -> dict[str, Any]:
    """The soak in both protocol eras: 10,000 calls by 50 clients x 20 at a time each.

    Quick: 2,000 calls by 10 clients x 20. Each era gets a fresh server process.
    """
    calls, clients, per_client = (2_000, 10, 20) if quick else (10_000, 50, 20)
    runs: list[dict[str, Any]] = []
    modes: tuple[Mode, ...] = ("auto", "legacy")
    with tempfile.TemporaryDirectory(prefix="meta-tools-soak-") as folder:
        config = write_config(Path(folder))
        for mode in modes:
            log = Path(folder) / f"server-{mode}.log"
            async with served_router(config, log) as router:
                figures = await soak(
                    router, calls=calls, clients=clients, per_client=per_client, mode=mode
                )
            figures["log_problems"] = router.log_problems()[:20]
            figures["server_exit_code"] = router.process.returncode
            figures["bound"] = verdict(figures)
            runs.append(figures)
    return {
        "server": "python -m benchmarks.soak_server (meta_tools.serve.serve, HTTP, 127.0.0.1)",
        "config": "Meta_tool_config.json (demo MCP server over stdio), scripted model",
        "runs": runs,
        "verdict": "PASS" if all(r["bound"]["verdict"] == "PASS" for r in runs) else "FAIL",
    }
