"""*overhead*: the router's own cost per one-tool category call, and *parallel*: one round of N slow tools.

Overhead: with the default guard profile (`capable`), and the one-tool call again with
`small` (every guard on), an instant scripted model (`ScriptedModel.from_function`) and a no-op
async tool, so everything measured is the router: prompt rendering, schemas,
validation, the tool call, result records, events off. A call is two LLM turns
(select the tool, then answer). CPU time per call comes from `time.process_time`
(the whole process, so it includes the event loop); latency is wall time from
submitting the call (all N at once) to its result, so it includes waiting for
the other calls; throughput is calls per wall second.
"""

from __future__ import annotations

import gc
import statistics
import time
import tracemalloc
from typing import Any

import anyio

from meta_tools import tool
from meta_tools.category.manager import CategoryManager
from meta_tools.llm import AssistantTurn, ChatRequest, ScriptedModel, ToolCall


@tool
async def noop() -> str:
    """Do nothing and say so."""
    return "ok"


@tool
async def wait_one_second(index: int) -> str:
    """Sleep one second (a slow API)."""
    await anyio.sleep(1.0)
    return f"done {index}"


_CALL = AssistantTurn(tool_calls=[ToolCall(id="call_1", name="noop", arguments={})])
_DONE = AssistantTurn(text="done")


def _instant(request: ChatRequest) -> AssistantTurn:
    return _CALL if len(request.messages) == 2 else _DONE


def _category(guards: str = "capable") -> tuple[CategoryManager, ScriptedModel]:
    def answer(request: ChatRequest) -> AssistantTurn:
        model.requests.clear()  # a real client keeps no history; the scripted one would
        return _instant(request)

    model = ScriptedModel.from_function(answer)
    category = CategoryManager(
        "Bench", "A benchmark category.", [noop], model, memory_size=0, guards=guards
    )
    return category, model


def _p99(samples: list[float]) -> float:
    ordered = sorted(samples)
    return ordered[min(len(ordered) - 1, int(len(ordered) * 0.99))]


async def _sequential(calls: int, guards: str = "capable") -> dict[str, Any]:
    category, model = _category(guards)
    for _ in range(200):  # warm-up: imports, caches, lazy schemas
        await category.run("Do it", "now")
    model.requests.clear()
    cpu: list[float] = []
    wall: list[float] = []
    gc.collect()
    started_cpu, started = time.process_time(), time.perf_counter()
    for _ in range(calls):
        c0, w0 = time.process_time(), time.perf_counter()
        result = await category.run("Do it", "now")
        cpu.append(time.process_time() - c0)
        wall.append(time.perf_counter() - w0)
        model.requests.clear()  # the scripted model records requests; keep memory flat
    # Under `small` the result is handed up as the answer (guard `hand_up_result`).
    handed_up = "hand_up_result" in category.guards.enabled
    assert result.status == "success" and result.usage.llm_calls == (1 if handed_up else 2)
    elapsed = time.perf_counter() - started
    return {
        "guards": guards,
        "concurrency": 1,
        "calls": calls,
        "cpu_mean_ms": round(statistics.mean(cpu) * 1e3, 4),
        "cpu_p99_ms": round(_p99(cpu) * 1e3, 4),
        "latency_mean_ms": round(statistics.mean(wall) * 1e3, 4),
        "latency_p99_ms": round(_p99(wall) * 1e3, 4),
        "calls_per_s": round(calls / elapsed, 1),
        "cpu_per_call_ms": round((time.process_time() - started_cpu) / calls * 1e3, 4),
    }


async def _concurrent(concurrency: int, rounds: int) -> dict[str, Any]:
    category, model = _category()
    latencies: list[float] = []

    async def one(submitted: float) -> None:
        await category.run("Do it", "now")
        latencies.append(time.perf_counter() - submitted)

    async def batch() -> None:
        # All N calls are submitted at once; a call's latency runs from then to its result.
        submitted = time.perf_counter()
        async with anyio.create_task_group() as group:
            for _ in range(concurrency):
                group.start_soon(one, submitted)
        model.requests.clear()

    await batch()  # warm-up
    latencies.clear()
    gc.collect()
    started_cpu, started = time.process_time(), time.perf_counter()
    for _ in range(rounds):
        await batch()
    elapsed = time.perf_counter() - started
    calls = concurrency * rounds
    return {
        "concurrency": concurrency,
        "calls": calls,
        "latency_mean_ms": round(statistics.mean(latencies) * 1e3, 3),
        "latency_p99_ms": round(_p99(latencies) * 1e3, 3),
        "calls_per_s": round(calls / elapsed, 1),
        "cpu_per_call_ms": round((time.process_time() - started_cpu) / calls * 1e3, 4),
    }


async def _memory(concurrency: int) -> dict[str, Any]:
    """Peak traced memory while `concurrency` calls are in flight, per call."""
    category, model = _category()
    await category.run("Do it", "now")
    model.requests.clear()
    gc.collect()
    tracemalloc.start()
    baseline = tracemalloc.get_traced_memory()[0]
    tracemalloc.reset_peak()
    async with anyio.create_task_group() as group:
        for _ in range(concurrency):
            group.start_soon(category.run, "Do it", "now")
    peak = tracemalloc.get_traced_memory()[1]
    tracemalloc.stop()
    model.requests.clear()
    return {
        "concurrency": concurrency,
        "peak_kib_per_call": round((peak - baseline) / concurrency / 1024, 2),
        "note": "router state only: the scripted model keeps no request history here",
    }


async def run_overhead(*, quick: bool = False) -> dict[str, Any]:
    calls = 2000 if quick else 20000
    rows = [await _sequential(calls), await _sequential(calls, "small")]
    for concurrency, rounds in ((100, 10 if quick else 50), (1000, 2 if quick else 10)):
        rows.append(await _concurrent(concurrency, rounds))
    return {"rows": rows, "memory": await _memory(1000)}


async def run_parallel() -> dict[str, Any]:
    """Wall time of one category call whose one round runs N tools of 1 s each."""
    rows = []
    for count in (1, 3, 10):
        turn = AssistantTurn(
            tool_calls=[
                ToolCall(name="wait_one_second", arguments={"index": i}) for i in range(count)
            ]
        )
        model = ScriptedModel([turn, AssistantTurn(text="all done")])
        category = CategoryManager("Slow", "Slow tools.", [wait_one_second], model)
        started = time.perf_counter()
        result = await category.run("Wait", f"{count} times")
        elapsed = time.perf_counter() - started
        assert [e.ok for e in result.executions] == [True] * count
        rows.append({"tools": count, "wall_s": round(elapsed, 3), "sequential_s": count})
    return {"rows": rows}
