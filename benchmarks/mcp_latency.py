"""*mcp*: latency of one level-1 call through a persistent stdio session vs a session per call.

The server is the project's demo MCP server (`python -m meta_tools.demo`) over
stdio. Persistent: the router's `McpToolSource`, connected once, then `calls`
calls of `calculate`. Per call: a new `mcp.Client` (spawn, handshake, call,
shut down) for each call, as several frameworks do by default.
"""

from __future__ import annotations

import statistics
import sys
import time
from typing import Any

from mcp import Client, StdioServerParameters

from meta_tools.tools.mcp.connection import McpToolSource

ARGUMENTS = {"expression": "(17 + 25) * 3"}


def _server() -> StdioServerParameters:
    return StdioServerParameters(command=sys.executable, args=["-m", "meta_tools.demo"])


async def _persistent(calls: int) -> list[float]:
    samples: list[float] = []
    async with McpToolSource("demo", _server()) as source:
        await source.connect()
        found = source.get_tool("calculate")
        assert found is not None, "the demo server has no 'calculate' tool"
        for _ in range(10):  # warm-up
            await found.call(ARGUMENTS)
        for _ in range(calls):
            started = time.perf_counter()
            value = await found.call(ARGUMENTS)
            samples.append(time.perf_counter() - started)
    assert "126" in str(value)
    return samples


async def _per_call(calls: int) -> list[float]:
    samples: list[float] = []
    for _ in range(calls):
        started = time.perf_counter()
        async with Client(_server()) as client:
            result = await client.call_tool("calculate", ARGUMENTS)
        samples.append(time.perf_counter() - started)
        assert not result.is_error
    return samples


def _row(label: str, samples: list[float]) -> dict[str, Any]:
    ordered = sorted(samples)
    return {
        "mode": label,
        "calls": len(samples),
        "mean_ms": round(statistics.mean(samples) * 1e3, 2),
        "median_ms": round(statistics.median(samples) * 1e3, 2),
        "p99_ms": round(ordered[min(len(ordered) - 1, int(len(ordered) * 0.99))] * 1e3, 2),
    }


async def run(*, quick: bool = False) -> dict[str, Any]:
    persistent = _row("persistent session", await _persistent(50 if quick else 500))
    per_call = _row("session per call", await _per_call(5 if quick else 20))
    return {
        "server": "python -m meta_tools.demo (stdio)",
        "rows": [persistent, per_call],
        "speedup": round(per_call["mean_ms"] / persistent["mean_ms"], 1),
    }
