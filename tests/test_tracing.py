"""Tracing: one JSON line per step, tied together by ids; OpenTelemetry spans nested by level."""

import json
from pathlib import Path
from typing import Any

import anyio
import pytest
from opentelemetry.sdk.trace import TracerProvider
from opentelemetry.sdk.trace.export import SimpleSpanProcessor
from opentelemetry.sdk.trace.export.in_memory_span_exporter import InMemorySpanExporter

from meta_tools import tool
from meta_tools.category.manager import CategoryManager
from meta_tools.llm import AssistantTurn, ChatRequest, ScriptedModel, ToolCall, Usage
from meta_tools.router.manager import MetaManager
from meta_tools.tracing import Tracer

pytestmark = pytest.mark.anyio


@tool
def add(a: int, b: int) -> int:
    """Add two integers."""
    return a + b


@tool
def broken(a: int) -> int:
    """A tool that always fails."""
    raise RuntimeError("broken on purpose")


def two_round_model() -> ScriptedModel:
    """Round 1: add + broken in parallel; round 2: add again; then the summary."""

    def answer(request: ChatRequest) -> AssistantTurn:
        rounds = sum(1 for m in request.messages if m.role == "assistant")
        usage = Usage(prompt_tokens=100 + rounds, completion_tokens=10)
        if rounds == 0:
            calls = [
                ToolCall(id="c1", name="add", arguments={"a": 1, "b": 2}),
                ToolCall(id="c2", name="broken", arguments={"a": 1}),
            ]
            return AssistantTurn(tool_calls=calls, usage=usage)
        if rounds == 1:
            call = ToolCall(id="c3", name="add", arguments={"a": 3, "b": 4})
            return AssistantTurn(tool_calls=[call], usage=usage)
        return AssistantTurn(text="3 and 7", usage=usage)

    return ScriptedModel.from_function(answer)


def router() -> MetaManager:
    return MetaManager([CategoryManager("Math", "Arithmetic.", [add, broken], two_round_model())])


def read_lines(path: Path) -> list[dict[str, Any]]:
    return [json.loads(line) for line in path.read_text().splitlines()]


async def test_the_trace_file_has_one_line_per_step_in_order_and_ids_tie_tools_to_their_run(
    tmp_path: Path,
) -> None:
    meta = router()
    meta.tracer = Tracer(jsonl=tmp_path / "trace.jsonl", otel=False)
    arguments = {"objective": "add", "exact_input": "1+2, 3+4"}
    async with anyio.create_task_group() as group:
        group.start_soon(lambda: meta.call_tool("math", arguments, call_id="main-1"))
        group.start_soon(lambda: meta.call_tool("math", arguments, call_id="main-2"))
    await meta.tracer.aclose()
    everything = read_lines(tmp_path / "trace.jsonl")
    assert [line["seq"] for line in everything] == list(range(1, 23))
    # One line per LLM call too (see the test of its content below); here the steps.
    lines = [line for line in everything if line["event"] != "model_called"]
    assert len(lines) == 16
    assert all(isinstance(line.pop("ts"), float) and line.pop("seq") for line in lines)
    for main_call_id in ("main-1", "main-2"):
        mine = [line for line in lines if line["main_call_id"] == main_call_id]
        run_id = mine[0]["run_id"]
        durations = [line.pop("duration_s", None) for line in mine]
        assert all(d is None or d >= 0 for d in durations)
        timed = [d is not None for d in durations]  # every step but the start has a duration
        assert timed == [line["event"] != "run_started" for line in mine]
        common = {"main_call_id": main_call_id, "run_id": run_id, "category": "Math"}
        assert mine == [
            {"event": "run_started", **common, "round": 0, "objective": "add"},
            {
                "event": "tools_selected",
                **common,
                "round": 1,
                "tools": ["add", "broken"],
                "prompt_tokens": 100,
                "completion_tokens": 10,
            },
            {
                "event": "tool_finished",
                **common,
                "round": 1,
                "tool": "add",
                "call_id": "c1",
                "ok": True,
                "error": None,
                "arguments": {"a": 1, "b": 2},
                "result": "3",
            },
            {
                "event": "tool_finished",
                **common,
                "round": 1,
                "tool": "broken",
                "call_id": "c2",
                "ok": False,
                "error": "RuntimeError: broken on purpose",
                "arguments": {"a": 1},
                "result": None,
            },
            {
                "event": "evaluated",
                **common,
                "round": 1,
                "decision": "more_tools",
                "prompt_tokens": 101,
                "completion_tokens": 10,
            },
            {
                "event": "tool_finished",
                **common,
                "round": 2,
                "tool": "add",
                "call_id": "c3",
                "ok": True,
                "error": None,
                "arguments": {"a": 3, "b": 4},
                "result": "7",
            },
            {
                "event": "evaluated",
                **common,
                "round": 2,
                "decision": "final",
                "prompt_tokens": 102,
                "completion_tokens": 10,
            },
            {
                "event": "run_finished",
                **common,
                "round": 2,
                "status": "success",
                "llm_calls": 3,
                "prompt_tokens": 303,
                "completion_tokens": 30,
                "error": None,
            },
        ]
    runs = {line["run_id"] for line in lines}
    assert len(runs) == 2


async def test_spans_nest_main_call_then_category_then_step_then_tool() -> None:
    exporter = InMemorySpanExporter()
    provider = TracerProvider()
    provider.add_span_processor(SimpleSpanProcessor(exporter))
    meta = router()
    meta.tracer = Tracer(tracer_provider=provider)
    await meta.call_tool("math", {"objective": "add", "exact_input": "1+2"}, call_id="main-1")
    spans = exporter.get_finished_spans()
    by_id = {s.context.span_id: s for s in spans}

    def path(span: Any) -> str:
        names = [span.name]
        while span.parent is not None:
            span = by_id[span.parent.span_id]
            names.append(span.name)
        return " / ".join(reversed(names))

    assert sorted(path(s) for s in spans) == sorted(
        [
            "meta_tools.call math",
            "meta_tools.call math / category Math",
            "meta_tools.call math / category Math / select",
            "meta_tools.call math / category Math / execute 1",
            "meta_tools.call math / category Math / execute 1 / tool add",
            "meta_tools.call math / category Math / execute 1 / tool broken",
            "meta_tools.call math / category Math / evaluate 1",
            "meta_tools.call math / category Math / execute 2",
            "meta_tools.call math / category Math / execute 2 / tool add",
            "meta_tools.call math / category Math / evaluate 2",
        ]
    )
    assert len({s.context.trace_id for s in spans}) == 1
    category = next(s for s in spans if s.name == "category Math")
    assert dict(category.attributes or {}) == {
        "meta_tools.category": "Math",
        "meta_tools.run_id": category.attributes["meta_tools.run_id"],  # type: ignore[index]
        "meta_tools.objective": "add",
        "meta_tools.status": "success",
        "meta_tools.rounds": 2,
        "meta_tools.llm_calls": 3,
        "meta_tools.prompt_tokens": 303,
        "meta_tools.completion_tokens": 30,
    }
    failed = next(s for s in spans if s.name == "tool broken")
    assert (failed.status.status_code.name, failed.status.description) == (
        "ERROR",
        "RuntimeError: broken on purpose",
    )
    for span in spans:
        if span.parent is not None:
            parent = by_id[span.parent.span_id]
            times = (parent.start_time, span.start_time, span.end_time, parent.end_time)
            assert None not in times and list(times) == sorted(times), span.name  # type: ignore[type-var]


async def test_a_router_without_a_tracer_writes_nothing_and_a_closed_trace_ignores_late_events(
    tmp_path: Path,
) -> None:
    meta = router()
    await meta.call_tool("math", {"objective": "add", "exact_input": "1+2"})
    tracer = Tracer(jsonl=tmp_path / "t.jsonl", otel=False)
    await tracer.aclose()
    await tracer.aclose()
    meta.tracer = tracer
    result = await meta.call_tool("math", {"objective": "add", "exact_input": "1+2"})
    assert result.status == "success"
    assert (tmp_path / "t.jsonl").read_text() == ""
