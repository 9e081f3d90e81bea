"""Tracing: one JSON line per step, tied together by ids; OpenTelemetry spans nested by level.

A main agent's turn is traced beside its category runs: what its model was offered and
called, each category call (the router's own too) and what came back, the answer.
"""

import json
from pathlib import Path
from typing import Any

import anyio
import pytest
from opentelemetry.sdk.trace import TracerProvider
from opentelemetry.sdk.trace.export import SimpleSpanProcessor
from opentelemetry.sdk.trace.export.in_memory_span_exporter import InMemorySpanExporter

from meta_tools import tool
from meta_tools.agent import MainAgent
from meta_tools.category.manager import CategoryManager
from meta_tools.exceptions import ModelError
from meta_tools.llm import AssistantTurn, ChatRequest, ScriptedModel, ToolCall, Usage
from meta_tools.router.manager import MetaManager
from meta_tools.support.redaction import Redactor
from meta_tools.tracing import Tracer
from meta_tools.turn_trace import TEXT_CHARS
from tests.guard_profiles import SMALL_EVERY_TURN

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
            {"event": "run_started", **common, "round": 0, "objective": "add", "guards": "capable"},
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


# -- the main agent's turns ------------------------------------------------------------
@tool
def forecast(city: str) -> str:
    """The weather forecast for a city."""
    return f"{city}: 18 C, dry"


@tool
def track_parcel(tracking_number: str) -> str:
    """Track a parcel by its tracking number."""
    return "in transit"


def category_of(request: ChatRequest) -> str:
    """Which category a category-loop request belongs to (its system prompt names it)."""
    return request.messages[0].content.split('"')[1]


def categories_model() -> ScriptedModel:
    """Maths adds 2 and 3, then leaves the weather undone; Parcels declines all; Weather
    calls the forecast, then answers."""

    def answer(request: ChatRequest) -> AssistantTurn:
        category, done = category_of(request), any(m.role == "tool" for m in request.messages)
        if category == "Parcels" or (category == "Maths" and done):
            reason = "the weather forecast for Paris" if category == "Maths" else "no weather"
            return AssistantTurn(
                tool_calls=[ToolCall(name="decline", arguments={"reason": reason})]
            )
        if category == "Maths":
            return AssistantTurn(tool_calls=[ToolCall(name="add", arguments={"a": 2, "b": 3})])
        if done:
            return AssistantTurn(text="Paris: 18 C, dry.")
        call = ToolCall(name="forecast", arguments={"city": "Paris"})
        return AssistantTurn(tool_calls=[call])

    return ScriptedModel.from_function(answer)


def three_categories() -> MetaManager:
    model = categories_model()
    return MetaManager(
        [
            CategoryManager("Maths", "Arithmetic.", [add], model),
            CategoryManager("Parcels", "Deliveries.", [track_parcel], model),
            CategoryManager("Weather", "Forecasts.", [forecast], model),
        ],
        guards=SMALL_EVERY_TURN,
    )


QUESTION = "What is 2 + 3, and the weather in Paris?"
TWO_PARTS = {"objective": "Add 2 and 3, and the weather in Paris", "exact_input": "2, 3, Paris"}
WEATHER = {"objective": "Weather forecast for Paris", "exact_input": "Paris"}


def two_calls_then_answer() -> list[AssistantTurn]:
    """The main agent's model: Maths with both parts and Parcels for the weather (which
    declines, so the router retries Weather), then its answer."""
    calls = [
        ToolCall(id="m1", name="maths", arguments=TWO_PARTS),
        ToolCall(id="p1", name="parcels", arguments=WEATHER),
    ]
    usage = Usage(prompt_tokens=50, completion_tokens=5)
    return [
        AssistantTurn(tool_calls=calls, usage=usage),
        AssistantTurn(text="5, and Paris is dry at 18 C.", usage=usage),
    ]


async def traced_turn(path: Path) -> list[dict[str, Any]]:
    """One question to a main agent over `three_categories`, traced to `path`: its lines."""
    meta = three_categories()
    meta.tracer = Tracer(jsonl=path, otel=False)
    agent = MainAgent(ScriptedModel(two_calls_then_answer()), meta, guards=SMALL_EVERY_TURN)
    assert await agent.ask(QUESTION) == "5, and Paris is dry at 18 C."
    await meta.tracer.aclose()
    return read_lines(path)


TURN_KINDS = ("turn_started", "agent_replied", "category_asked", "category_answered")


async def test_a_main_agent_turn_is_traced_with_what_was_offered_called_retried_and_handed_on(
    tmp_path: Path,
) -> None:
    lines = await traced_turn(tmp_path / "trace.jsonl")
    turn = [line for line in lines if line["event"] in (*TURN_KINDS, "turn_finished")]
    runs = [line for line in lines if line not in turn]
    turn_id = turn[0]["run_id"]
    assert turn_id.startswith("turn_") and {line["run_id"] for line in turn} == {turn_id}
    for line in turn:
        for key in ("seq", "ts", "run_id", "duration_s"):
            line.pop(key, None)
    asked = [line for line in turn if line["event"] == "category_asked"]
    handed_on = asked[2].pop("call_id")  # the router's own call: an id of its own
    answered = {line.pop("call_id"): line for line in turn if line["event"] == "category_answered"}
    assert turn[0] == {
        "event": "turn_started",
        "round": 0,
        "agent": "Friday",
        "session": turn[0]["session"],
        "request": QUESTION,
        "guards": "guard profile 'small without hand_up_result, results_as_answer' (given to"
        " the main agent)",
    }
    assert turn[0]["session"].startswith("friday-")
    replied = [line for line in turn if line["event"] == "agent_replied"]
    offered = ["maths", "parcels", "weather"]
    assert replied == [
        {"event": "agent_replied", "round": 1, "tools": offered, "calls": ["maths", "parcels"],
         "text": None, "prompt_tokens": 50, "completion_tokens": 5, "error": None},
        {"event": "agent_replied", "round": 2, "tools": offered, "calls": [],
         "text": "5, and Paris is dry at 18 C.", "prompt_tokens": 50, "completion_tokens": 5,
         "error": None},
    ]  # fmt: skip
    assert asked == [
        {"event": "category_asked", "round": 1, "call_id": "m1", "category": "maths",
         "by": "model", **TWO_PARTS},
        {"event": "category_asked", "round": 1, "call_id": "p1", "category": "parcels",
         "by": "model", **WEATHER},
        # The rest Maths left undone, sent on by the router.
        {"event": "category_asked", "round": 1, "category": "weather", "by": "router",
         "objective": "the weather forecast for Paris", "exact_input": "2, 3, Paris"},
    ]  # fmt: skip
    common = {"event": "category_answered", "round": 1, "question": None, "error": None}
    assert answered == {
        "m1": {**common, "called": "maths", "category": "Maths", "status": "success",
               "declined": [], "tool_calls": 1, "summary": "add: 5",
               "remainder": "the weather forecast for Paris"},
        # Parcels declined: the router retried the next-ranked category.
        "p1": {**common, "called": "parcels", "category": "Weather", "status": "success",
               "declined": ["Parcels"], "tool_calls": 1, "summary": "Paris: 18 C, dry.",
               "remainder": None},
        handed_on: {**common, "called": "weather", "category": "Weather", "status": "success",
                    "declined": [], "tool_calls": 1, "summary": "Paris: 18 C, dry.",
                    "remainder": None},
    }  # fmt: skip
    finished = turn[-1]
    assert sorted(finished.pop("categories")) == ["Maths", "Parcels", "Weather"]
    assert finished == {
        "event": "turn_finished",
        "round": 2,
        "outcome": "answered",
        "answer": "5, and Paris is dry at 18 C.",
        "tool_calls": 3,
        "llm_calls": 2,
        "prompt_tokens": 100,
        "completion_tokens": 10,
        "error": None,
    }
    # Every category run carries the turn, and the call that started it.
    started = [
        (line["category"], line["main_call_id"]) for line in runs if line["event"] == "run_started"
    ]
    assert sorted(started) == sorted(
        [("Maths", "m1"), ("Parcels", "p1"), ("Weather", "p1"), ("Weather", handed_on)]
    )
    assert {line["turn_id"] for line in runs} == {turn_id}


async def test_a_turn_says_when_its_answer_came_from_the_results_or_after_its_rounds(
    tmp_path: Path,
) -> None:
    meta = three_categories()
    meta.tracer = Tracer(jsonl=tmp_path / "trace.jsonl", otel=False)
    weather = AssistantTurn(tool_calls=[ToolCall(id="w1", name="weather", arguments=WEATHER)])
    # The model says nothing after its call: the router answers with the result.
    silent = MainAgent(ScriptedModel([weather, AssistantTurn(text="")]), meta)
    assert await silent.ask("Weather in Paris?") == "Weather: Paris: 18 C, dry."
    # One round only: the model answers when asked to, with no tools offered.
    brief = ScriptedModel([weather, AssistantTurn(text="Dry, 18 C.")])
    assert await MainAgent(brief, meta, max_rounds=1).ask("Weather in Paris?") == "Dry, 18 C."
    await meta.tracer.aclose()
    finished = [
        line for line in read_lines(tmp_path / "trace.jsonl") if line["event"] == "turn_finished"
    ]
    assert [(line["outcome"], line["llm_calls"]) for line in finished] == [
        ("from_results", 2),
        ("out_of_rounds", 2),
    ]


async def test_each_turn_has_its_own_id_and_counts_and_calls_outside_a_turn_carry_none(
    tmp_path: Path,
) -> None:
    meta = three_categories()
    meta.tracer = Tracer(jsonl=tmp_path / "trace.jsonl", otel=False)
    main = ScriptedModel([*two_calls_then_answer(), AssistantTurn(text="Nothing to do.")])
    agent = MainAgent(main, meta, guards=SMALL_EVERY_TURN)
    await agent.ask(QUESTION)
    assert await agent.ask("Thanks!") == "Nothing to do."
    await meta.call_tool("maths", {"objective": "Add", "exact_input": "2, 3"})
    await meta.tracer.aclose()
    lines = read_lines(tmp_path / "trace.jsonl")
    finished = [line for line in lines if line["event"] == "turn_finished"]
    assert len({line["run_id"] for line in finished}) == 2
    second = finished[1]
    assert (second["outcome"], second["categories"], second["tool_calls"]) == (
        "answered",
        [],
        0,
    )
    assert (second["llm_calls"], second["prompt_tokens"]) == (1, 0)
    alone = [line for line in lines if line.get("main_call_id") and "turn_id" not in line]
    assert {line["category"] for line in alone} == {"Maths"} and alone[0]["event"] == "run_started"


async def test_a_turn_whose_model_fails_is_finished_in_the_trace_with_the_error(
    tmp_path: Path,
) -> None:
    def fails(request: ChatRequest) -> AssistantTurn:
        raise ModelError("HTTP 503 from the model server")

    meta = three_categories()
    meta.tracer = Tracer(jsonl=tmp_path / "trace.jsonl", otel=False)
    agent = MainAgent(ScriptedModel.from_function(fails), meta)
    with pytest.raises(ModelError):
        await agent.ask(QUESTION)
    await meta.tracer.aclose()
    lines = read_lines(tmp_path / "trace.jsonl")
    assert [line["event"] for line in lines] == ["turn_started", "agent_replied", "turn_finished"]
    assert lines[1]["error"] == "ModelError: HTTP 503 from the model server"
    assert (lines[2]["outcome"], lines[2]["error"]) == (
        "failed",
        "ModelError: HTTP 503 from the model server",
    )


async def test_a_turns_texts_are_redacted_and_cut(tmp_path: Path) -> None:
    tracer = Tracer(jsonl=tmp_path / "trace.jsonl", otel=False)
    secret = "sk-live-0123456789"
    request = f"My key is {secret}. " + "x" * 5000
    async with tracer.turn(request, agent="Friday", redactor=Redactor([secret])) as turn:
        turn.answered(f"Your key {secret} is noted.")
    await tracer.aclose()
    started, finished = read_lines(tmp_path / "trace.jsonl")
    assert started["request"].startswith("My key is ***. xxx")
    assert len(started["request"]) == TEXT_CHARS and started["request"].endswith("...")
    assert finished["answer"] == "Your key *** is noted."
    assert secret not in (tmp_path / "trace.jsonl").read_text()


async def test_a_turn_span_holds_the_spans_of_its_category_calls(tmp_path: Path) -> None:
    exporter = InMemorySpanExporter()
    provider = TracerProvider()
    provider.add_span_processor(SimpleSpanProcessor(exporter))
    meta = three_categories()
    meta.tracer = Tracer(tracer_provider=provider)
    agent = MainAgent(ScriptedModel(two_calls_then_answer()), meta, guards=SMALL_EVERY_TURN)
    await agent.ask(QUESTION)
    spans = exporter.get_finished_spans()
    turn = next(s for s in spans if s.name == "meta_tools.turn Friday")
    calls = [s for s in spans if s.name.startswith("meta_tools.call ")]
    assert sorted(s.name for s in calls) == [
        "meta_tools.call maths",
        "meta_tools.call parcels",
        "meta_tools.call weather",
        "meta_tools.call weather",
    ]
    assert all(s.parent is not None and s.parent.span_id == turn.context.span_id for s in calls)
