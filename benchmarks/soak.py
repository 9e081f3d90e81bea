"""*soak*: many concurrent category calls through the router served over streamable HTTP.

The server is its own process (`benchmarks/soak_server.py`: `meta_tools.server.serve`
over a router built from the repository's `Meta_tool_config.json`, whose demo MCP
server runs over stdio, and a scripted model), so its resident memory is measured
apart from the clients'. This process is the client: a pool of real `mcp.Client`
sessions, each running several calls at once. The first wave is exactly one call
per worker, all submitted together; the workers then go on until the total is
reached, keeping the same number in flight. Every result is checked whole against
what its own request must produce (the request's token is in the tool's arguments,
in the demo tool's output and in the summary the model wrote from that output).
It runs once per protocol era: 2026-07-28 (the SDK's default) and legacy sessions.

Memory is the server process's RSS (psutil), read when no call is in flight:
after the first wave and after the last call; readings in flight, every wave's
worth of calls, show the trend. Two bounds are judged, PASS or FAIL: see
`BOUND_FACTOR` and `LATE_GROWTH_MB`.
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
import mcp_types
import psutil  # type: ignore[import-untyped]
from anyio.abc import Process
from mcp import Client

from .soak_server import TASKS

__all__ = [
    "BOUND_FACTOR",
    "BOUND_SLACK_MB",
    "LATE_GROWTH_MB",
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
Mode = Literal["auto", "legacy"]

BOUND_FACTOR = 1.5
BOUND_SLACK_MB = 32.0
"""Bound 1: RSS after all calls <= RSS after the first wave x BOUND_FACTOR + BOUND_SLACK_MB.

The first wave is not the plateau yet. Its calls are submitted together, but the
server answers the first ones before the last arrive, so it holds fewer calls (and,
in the 2026-07-28 era, fewer keep-alive connections) at once than later, when
answers and new calls overlap all the time. Measured on 2 cores: RSS climbs during
the next 1,000 calls, by 1.03x to 1.46x of the first-wave reading depending on how
much the first wave overlapped, then stays flat up to 30,000 calls. The factor
covers that warm-up; the slack covers allocator noise and caches built on first use.
A server that kept each call's model requests (~14 KB per call, measured by not
clearing the scripted model's history) grows by ~125 MB over 9,000 calls and fails.
"""

LATE_GROWTH_MB = 5.0
"""Bound 2: RSS after all calls <= the in-flight reading at half the calls + LATE_GROWTH_MB.

Independent of the warm-up, so it catches what bound 1 is too loose for: over the
second half a server without leaks is flat (measured: +0.3 to +1.6 MB), while a
leak of 1 KB per call adds ~5 MB over 5,000 calls.
"""

CALL_TIMEOUT_S = 120.0
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
        seen = b""
        with anyio.fail_after(60):
            while b"\n" not in seen:
                try:
                    seen += await process.stdout.receive()
                except anyio.EndOfStream:
                    break
        line = seen.split(b"\n", 1)[0].decode()
        if not line.startswith("listening on "):
            told = log.read_text(errors="replace")[-2000:]
            raise RuntimeError(f"the soak server did not start: {line!r}; its stderr: {told}")
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
    got = _parsed(text)
    if not isinstance(got, dict) or got != result.structured_content:
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


async def soak(
    router: ServedRouter, *, calls: int, clients: int, per_client: int, mode: Mode = "auto"
) -> dict[str, Any]:
    """Run `calls` checked calls, `clients x per_client` at a time; figures and errors.

    Phase one is one call per worker (all submitted at once), phase two the rest.
    RSS and open connections are read before the first call and after each phase
    (nothing in flight); `rss_trend` adds a reading each time another wave's worth
    of calls finished.
    """
    concurrency = clients * per_client
    tally = _Tally(router, nonce=random.randrange(10_000, 100_000), every=concurrency)
    rss: dict[str, float] = {}
    connections: dict[str, int] = {}
    phases: list[dict[str, Any]] = []
    async with AsyncExitStack() as stack:
        pool = [
            await stack.enter_async_context(Client(router.url, mode=mode)) for _ in range(clients)
        ]
        for client in pool:  # the client checks structured content against the listed schema
            listed = [t.name for t in (await client.list_tools()).tools]
        protocol = pool[0].protocol_version
        rss["start"], connections["start"] = _mb(router.rss()), router.connections()
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
            connections[f"after_{end}"] = router.connections()
            tally.trend.append({"calls": end, "rss_mb": rss[f"after_{end}"]})
        demo_end = _mb(router.children_rss())
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
        "rss_mb": rss,
        "connections": connections,
        "rss_trend": tally.trend,
        "demo_server_rss_mb": {"start": demo_start, "end": demo_end},
        "phases": phases,
        "overall": _phase(calls, sum(p["wall_s"] for p in phases), tally.latencies),
    }


def verdict(figures: dict[str, Any]) -> dict[str, Any]:
    """Both memory bounds and the results, judged: PASS or FAIL, with the numbers."""
    calls, wave = figures["calls"], figures["concurrency"]
    first, last = figures["rss_mb"][f"after_{wave}"], figures["rss_mb"][f"after_{calls}"]
    limit = round(first * BOUND_FACTOR + BOUND_SLACK_MB, 1)
    halfway = min(figures["rss_trend"], key=lambda point: abs(point["calls"] - calls / 2))
    late = round(last - halfway["rss_mb"], 1)
    clean = (
        figures["errors"] == 0
        and figures["ok"] == calls
        and not figures["log_problems"]
        and figures.get("server_exit_code", 0) == 0
    )
    judged = {
        "memory": last <= limit,
        "late_growth": late <= LATE_GROWTH_MB,
        "results": clean,
    }
    return {
        "rule": f"RSS after {calls:,} <= RSS after {wave:,} x {BOUND_FACTOR:g}"
        f" + {BOUND_SLACK_MB:g} MB",
        "limit_mb": limit,
        "late_rule": f"RSS after {calls:,} <= RSS at {halfway['calls']:,} calls"
        f" + {LATE_GROWTH_MB:g} MB",
        "late_growth_mb": late,
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
        "server": "python -m benchmarks.soak_server (meta_tools.server.serve, HTTP, 127.0.0.1)",
        "config": "Meta_tool_config.json (demo MCP server over stdio), scripted model",
        "runs": runs,
        "verdict": "PASS" if all(r["bound"]["verdict"] == "PASS" for r in runs) else "FAIL",
    }
