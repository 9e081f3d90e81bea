"""CategoryManager: every branch of the seed's flowchart, with a scripted model and real tools."""

import json
import time

import anyio
import pytest

from meta_tools import tool
from meta_tools.category.events import RunEvent
from meta_tools.category.manager import CategoryManager
from meta_tools.exceptions import ModelError
from meta_tools.llm import AssistantTurn, ChatRequest, ScriptedModel, ToolCall, Usage

pytestmark = pytest.mark.anyio


@tool
def add(a: int, b: int) -> int:
    """Add two integers."""
    return a + b


@tool
def multiply(a: int, b: int) -> int:
    """Multiply two integers."""
    return a * b


@tool
def flaky_lookup(city: str) -> str:
    """Look up a city in a service that is down."""
    raise ConnectionError(f"service unreachable for {city}")


@tool
def backup_lookup(city: str) -> str:
    """Look up a city in the backup service."""
    return f"{city}: 21°C"


@tool
async def nap(seconds: float) -> str:
    """Sleep."""
    await anyio.sleep(seconds)
    return "rested"


def calls(*items: tuple[str, dict[str, object]]) -> AssistantTurn:
    return AssistantTurn(tool_calls=[ToolCall(name=n, arguments=a) for n, a in items])


def manager(model: ScriptedModel, *tools: object, **options: object) -> CategoryManager:
    return CategoryManager(
        "Math & Weather", "Arithmetic and weather.", list(tools), model, **options
    )  # type: ignore[arg-type]


def offered(request: ChatRequest) -> list[str]:
    return [t.name for t in request.tools]


async def test_single_tool_call_then_summary_is_success_in_two_llm_calls() -> None:
    model = ScriptedModel(
        [
            calls(("add", {"a": 2, "b": 3})),
            AssistantTurn(text="2 + 3 = 5", usage=Usage(prompt_tokens=10, completion_tokens=4)),
        ]
    )
    result = await manager(model, add, multiply).run("Add numbers", "2 and 3")
    assert result.status == "success"
    assert result.summary == "2 + 3 = 5"
    assert [(e.tool, e.arguments, e.ok, e.result, e.round) for e in result.executions] == [
        ("add", {"a": 2, "b": 3}, True, "5", 1)
    ]
    assert (result.iterations, result.usage.llm_calls, result.usage.prompt_tokens) == (1, 2, 10)
    first, second = model.requests
    assert offered(first) == ["add", "multiply", "request_input", "decline"]
    assert first.messages[0].role == "system" and "Math & Weather" in first.messages[0].content
    assert first.messages[1].content == "Objective: Add numbers\nExact input: 2 and 3"
    tool_message = second.messages[3]
    assert tool_message.role == "tool" and tool_message.tool_call_id == first_call_id(model)
    assert tool_message.content == '<tool_result tool="add" status="ok">\n5\n</tool_result>'
    assert "Round 1 of 5" in second.messages[4].content
    model.assert_complete()


def first_call_id(model: ScriptedModel) -> str:
    return model.requests[1].messages[2].tool_calls[0].id


async def test_multi_round_runs_until_the_model_answers() -> None:
    model = ScriptedModel(
        [
            calls(("add", {"a": 2, "b": 3})),
            calls(("multiply", {"a": 5, "b": 4})),
            AssistantTurn(text="(2+3)*4 = 20"),
        ]
    )
    result = await manager(model, add, multiply).run("Compute (2+3)*4", "2, 3, 4")
    assert result.status == "success"
    assert [(e.tool, e.result, e.round) for e in result.executions] == [
        ("add", "5", 1),
        ("multiply", "20", 2),
    ]
    assert result.iterations == 2


async def test_request_input_executes_nothing_and_reports_what_is_missing() -> None:
    model = ScriptedModel(
        [
            calls(("request_input", {"missing": ["second number"], "question": "Add 2 to what?"})),
        ]
    )
    result = await manager(model, add).run("Add numbers", "2")
    assert result.status == "insufficient_input"
    assert (result.missing, result.question, result.executions) == (
        ["second number"],
        "Add 2 to what?",
        [],
    )


async def test_decline_executes_nothing_and_carries_the_suggestion() -> None:
    model = ScriptedModel(
        [
            calls(
                (
                    "decline",
                    {"reason": "No translation tool.", "suggestion": "Use a language category."},
                )
            )
        ]
    )
    result = await manager(model, add).run("Translate", "bonjour")
    assert result.status == "no_suitable_tool"
    assert (result.summary, result.suggestion, result.executions) == (
        "No translation tool.",
        "Use a language category.",
        [],
    )


async def test_plain_text_without_a_call_is_a_decline_with_the_text_as_reason() -> None:
    model = ScriptedModel([AssistantTurn(text="I cannot translate with arithmetic tools.")])
    result = await manager(model, add).run("Translate", "bonjour")
    assert (result.status, result.summary) == (
        "no_suitable_tool",
        "I cannot translate with arithmetic tools.",
    )


async def test_failing_tool_is_followed_by_a_fallback_tool() -> None:
    model = ScriptedModel(
        [
            calls(("flaky_lookup", {"city": "Oslo"})),
            calls(("backup_lookup", {"city": "Oslo"})),
            AssistantTurn(text="Oslo: 21°C (from the backup service)"),
        ]
    )
    result = await manager(model, flaky_lookup, backup_lookup).run("Weather", "Oslo")
    assert result.status == "success"
    assert [(e.tool, e.ok) for e in result.executions] == [
        ("flaky_lookup", False),
        ("backup_lookup", True),
    ]
    assert result.executions[0].error == "ConnectionError: service unreachable for Oslo"
    # The evaluation names the failed call only in the round it failed.
    assert "- A call failed (flaky_lookup):" in model.requests[1].messages[-1].content
    assert "A call failed" not in model.requests[2].messages[-1].content
    told = model.requests[1].messages[3].content
    assert told == (
        '<tool_result tool="flaky_lookup" status="error">\n'
        "ConnectionError: service unreachable for Oslo\n</tool_result>"
    )


async def test_a_tool_that_failed_twice_is_withdrawn_from_later_rounds() -> None:
    model = ScriptedModel(
        [
            calls(("flaky_lookup", {"city": "Oslo"})),
            calls(("flaky_lookup", {"city": "Oslo, Norway"})),
            calls(("backup_lookup", {"city": "Oslo"})),
            AssistantTurn(text="done"),
        ]
    )
    result = await manager(model, flaky_lookup, backup_lookup).run("Weather", "Oslo")
    assert offered(model.requests[1]) == [
        "flaky_lookup",
        "backup_lookup",
        "request_input",
        "decline",
    ]
    assert offered(model.requests[2]) == ["backup_lookup", "request_input", "decline"]
    assert "no longer available: flaky_lookup" in model.requests[2].messages[-1].content
    assert [e.ok for e in result.executions] == [False, False, True]


async def test_a_withdrawn_tool_called_anyway_is_not_run_again() -> None:
    runs: list[str] = []

    @tool
    def slow_service(city: str) -> str:
        """Look up a city in a service that keeps failing."""
        runs.append(city)
        raise ConnectionError("service unreachable")

    model = ScriptedModel(
        [
            calls(("slow_service", {"city": "Oslo"})),
            calls(("slow_service", {"city": "Oslo"})),
            calls(("slow_service", {"city": "Oslo"})),
            AssistantTurn(text="gave up"),
        ]
    )
    result = await manager(model, slow_service, backup_lookup).run("Weather", "Oslo")
    assert runs == ["Oslo", "Oslo"]
    third = result.executions[2]
    assert (third.tool, third.ok) == ("slow_service", False)
    assert third.error is not None and "withdrawn" in third.error
    assert model.requests[3].messages[-2].role == "tool"
    assert "withdrawn" in model.requests[3].messages[-2].content


async def test_iteration_limit_ends_with_a_summary_call_without_tools() -> None:
    model = ScriptedModel(
        [
            calls(("add", {"a": 1, "b": 1})),
            calls(("add", {"a": 2, "b": 2})),
            calls(("add", {"a": 3, "b": 3})),
            AssistantTurn(text="Added twice; the third sum was not computed."),
        ]
    )
    result = await manager(model, add, max_iterations=2).run("Keep adding", "1, 2, 3")
    assert result.status == "max_iterations"
    assert result.summary == "Added twice; the third sum was not computed."
    assert [e.result for e in result.executions] == ["2", "4"]
    last = model.requests[-1]
    assert last.tools == []
    assert "round limit (2) is reached" in last.messages[-1].content


async def test_unknown_tool_and_invalid_arguments_become_error_results_the_model_can_fix() -> None:
    model = ScriptedModel(
        [
            calls(("subtract", {"a": 1}), ("add", {"a": "two", "b": 2})),
            calls(("add", {"a": 2, "b": 2})),
            AssistantTurn(text="4"),
        ]
    )
    result = await manager(model, add).run("Add", "two and two")
    assert result.status == "success"
    errors = [e.error for e in result.executions[:2]]
    assert errors[0] == "unknown tool 'subtract'. Available tools: add"
    assert errors[1] is not None and errors[1].startswith(
        "invalid arguments for tool 'add': 'a': Input should be a valid integer"
    )
    tool_messages = [m for m in model.requests[1].messages if m.role == "tool"]
    assert [m.tool_call_id for m in tool_messages] == [
        c.id for c in model.requests[1].messages[2].tool_calls
    ]
    assert offered(model.requests[1])[0] == "add"  # invalid arguments do not withdraw a tool


async def test_a_model_that_keeps_failing_gives_status_failed_with_what_was_done() -> None:
    def broken(request: ChatRequest) -> AssistantTurn:
        raise ModelError(
            "endpoint http://127.0.0.1:9/v1 (model 'm') failed after 3 retries: HTTP 500"
        )

    model = ScriptedModel([calls(("add", {"a": 1, "b": 2})), broken])
    result = await manager(model, add).run("Add", "1 and 2")
    assert result.status == "failed"
    assert "HTTP 500" in result.summary and "add: ok" in result.summary
    assert result.executions[0].result == "3"


async def test_three_slow_tools_in_one_round_run_in_parallel() -> None:
    naps = [("nap", {"seconds": s}) for s in (1, 0.99, 0.98)]  # identical calls would run once
    model = ScriptedModel([calls(*naps), AssistantTurn(text="rested")])
    started = time.perf_counter()
    result = await manager(model, nap).run("Rest", "for 1, 0.99 and 0.98 seconds")
    assert time.perf_counter() - started < 2.0
    assert [e.result for e in result.executions] == ["rested"] * 3


async def test_two_hundred_concurrent_runs_never_see_each_other() -> None:
    def answer(request: ChatRequest) -> AssistantTurn:
        objective = request.messages[1].content.splitlines()[0]
        if request.messages[-1].role == "user" and len(request.messages) == 2:
            number = int(objective.rsplit(" ", 1)[1])
            return calls(("add", {"a": number, "b": 0}))
        seen = [m.content for m in request.messages if m.role == "tool"]
        return AssistantTurn(text=f"{objective} | saw {seen}")

    category = manager(ScriptedModel.from_function(answer), add, memory_size=0)
    results: dict[int, str] = {}

    async def one(i: int) -> None:
        results[i] = (await category.run(f"task {i}", str(i))).summary

    async with anyio.create_task_group() as group:
        for i in range(200):
            group.start_soon(one, i)
    for i, summary in results.items():
        assert summary == (
            f'Objective: task {i} | saw [\'<tool_result tool="add" status="ok">\\n{i}\\n</tool_result>\']'
        )


async def test_past_runs_are_remembered_per_session_and_bounded() -> None:
    model = ScriptedModel.from_function(
        lambda r: (
            AssistantTurn(text="ok") if len(r.messages) > 2 else calls(("add", {"a": 1, "b": 1}))
        )
    )
    category = manager(model, add, memory_size=2)
    for i in range(3):
        await category.run(f"objective {i}", "1 + 1", session="alice")
    await category.run("bob's task", "1 + 1", session="bob")
    assert [r["objective"] for r in await category.past_runs("alice")] == [
        "objective 1",
        "objective 2",
    ]
    assert [r["objective"] for r in await category.past_runs("bob")] == ["bob's task"]
    model_requests = model.requests
    last_alice = model_requests[4].messages
    assert "objective 1" not in last_alice[0].content  # never in the system prompt
    assert "<past_runs> tags" in last_alice[0].content  # but it says where they are
    assert "<past_runs>" not in model_requests[6].messages[0].content  # bob's first run: none
    assert last_alice[1].content.startswith("<past_runs>\n")
    assert "- objective 1 → ok\n</past_runs>" in last_alice[1].content
    assert "bob" not in last_alice[1].content


async def test_long_tool_output_is_truncated_with_a_marker() -> None:
    @tool
    def dump() -> str:
        """Return a lot of text."""
        return "x" * 10_000

    model = ScriptedModel([calls(("dump", {})), AssistantTurn(text="done")])
    result = await manager(model, dump, max_result_chars=500).run("Dump", "")
    assert result.executions[0].result == "x" * 500 + "…[truncated 9500 characters]"


async def test_events_report_each_step_in_order() -> None:
    model = ScriptedModel([calls(("add", {"a": 1, "b": 2})), AssistantTurn(text="3")])
    events: list[RunEvent] = []

    async def sink(event: RunEvent) -> None:
        events.append(event)

    result = await manager(model, add).run("Add", "1 2", on_event=sink)
    assert [e.kind for e in events] == [
        "run_started",
        "model_called",
        "tools_selected",
        "tool_finished",
        "model_called",
        "evaluated",
        "run_finished",
    ]
    assert len({e.run_id for e in events}) == 1
    assert events[-1].as_dict()["status"] == result.status == "success"


async def test_a_run_without_a_session_neither_sees_nor_leaves_past_runs() -> None:
    def answer(request: ChatRequest) -> AssistantTurn:
        if len(request.messages) > 2:
            return AssistantTurn(text="ok")
        return calls(("add", {"a": 1, "b": 1}))

    model = ScriptedModel.from_function(answer)
    category = manager(model, add)
    await category.run("remembered task", "1 + 1", session="alice")
    await category.run("anonymous task", "1 + 1")
    await category.run("another anonymous task", "1 + 1")
    assert [r["objective"] for r in await category.past_runs("alice")] == ["remembered task"]
    assert await category.past_runs(None) == []
    anonymous_system = model.requests[-2].messages[0].content
    assert "remembered task" not in anonymous_system and "anonymous task" not in anonymous_system


async def test_the_main_agent_view_of_a_result_keeps_the_task_facts_and_drops_timings() -> None:
    model = ScriptedModel(
        [
            calls(("flaky_lookup", {"city": "Oslo"}), ("add", {"a": 2, "b": 3})),
            AssistantTurn(text="2 + 3 = 5; no weather"),
        ]
    )
    result = await manager(model, flaky_lookup, add).run("Add, and the weather", "2 3 Oslo")
    view = json.loads(result.for_agent())
    assert view == {
        "category": "Math & Weather",
        "status": "success",
        "summary": "2 + 3 = 5; no weather",
        "executions": [
            {
                "tool": "flaky_lookup",
                "arguments": {"city": "Oslo"},
                "error": "ConnectionError: service unreachable for Oslo",
            },
            {"tool": "add", "arguments": {"a": 2, "b": 3}, "result": "5"},
        ],
    }
    assert "usage" in json.loads(result.to_json())  # programs still get everything
