"""RoundExecutor: one round of tool calls, run against real tools without a model."""

from collections import Counter

import pytest

from meta_tools import tool
from meta_tools.category.events import RunEvent, ToolFinished
from meta_tools.category.execute import RoundExecutor
from meta_tools.category.manager import CategoryManager
from meta_tools.category.run import Run, RunState
from meta_tools.llm import AssistantTurn, ScriptedModel, ToolCall
from meta_tools.support.redaction import Redactor
from meta_tools.tools.pack import ToolPack

pytestmark = pytest.mark.anyio


def executor(*tools: object, max_calls: int = 16) -> tuple[RoundExecutor, list[str]]:
    """An executor over `add`, `multiply`, `broken` and `tools`, and the log of what they ran."""
    ran: list[str] = []

    @tool
    def add(a: int, b: int) -> int:
        """Add two integers."""
        ran.append(f"add {a} {b}")
        return a + b

    @tool
    def multiply(a: int, b: int) -> int:
        """Multiply two integers."""
        ran.append(f"multiply {a} {b}")
        return a * b

    @tool
    def broken() -> str:
        """A tool this run has withdrawn."""
        ran.append("broken")
        return "should not run"

    pack = ToolPack([add, multiply, broken, *tools], name="Math")  # type: ignore[list-item]
    rounds = RoundExecutor(
        "Math", pack, Redactor(), max_calls=max_calls, timeout_s=5.0, max_result_chars=1000
    )
    return rounds, ran


async def test_a_mixed_round_runs_each_call_once_and_answers_every_call_id_once() -> None:
    """A call repeated from an earlier round runs again (a status may have changed);
    the same call twice in one round runs once."""
    rounds, ran = executor(max_calls=2)
    events: list[RunEvent] = []

    async def sink(event: RunEvent) -> None:
        events.append(event)

    run = Run(RunState(objective="Compute", exact_input=""), sink)
    state = run.state
    state.iteration = 1
    first = [ToolCall(id="a1", name="add", arguments={"a": 1, "b": 2})]
    assert await rounds.execute(run, first) is False
    state.withdrawn.append("broken")
    state.iteration = 2
    round_two = [
        ToolCall(id="again", name="add", arguments={"b": 2, "a": 1}),  # repeats a1: runs
        ToolCall(id="m1", name="multiply", arguments={"a": 2, "b": 3}),
        ToolCall(id="m1-copy", name="multiply", arguments={"a": 2, "b": 3}),
        ToolCall(id="w", name="broken", arguments={}),
        ToolCall(id="over-cap", name="multiply", arguments={"a": 4, "b": 5}),
    ]
    before = len(state.messages)

    only_repeats = await rounds.execute(run, round_two)

    assert only_repeats is False
    assert ran == ["add 1 2", "add 1 2", "multiply 2 3"]
    answered = Counter(m.tool_call_id for m in state.messages[before:] if m.role == "tool")
    assert answered == Counter(c.id for c in round_two)
    assert [(e.tool, e.ok, e.round) for e in state.executions] == [
        ("add", True, 1),
        ("add", True, 2),
        ("multiply", True, 2),
        ("broken", False, 2),
        ("multiply", False, 2),
    ]
    assert "withdrawn" in (state.executions[3].error or "")
    assert "at most 2 run per round" in (state.executions[4].error or "")
    finished = [(e.call_id, e.ok) for e in events if isinstance(e, ToolFinished)]
    assert finished == [
        ("a1", True),
        ("again", True),
        ("m1", True),
        ("w", False),
        ("over-cap", False),
    ]


async def test_a_round_of_repeats_only_runs_again_once_and_says_so() -> None:
    rounds, ran = executor()
    run = Run(RunState(objective="Compute", exact_input=""))
    first = ToolCall(id="a1", name="add", arguments={"a": 1, "b": 2})
    assert await rounds.execute(run, [first]) is False
    again = [ToolCall(id=f"a{i}", name="add", arguments={"a": 1, "b": 2}) for i in (2, 3)]
    assert await rounds.execute(run, again) is True
    assert await rounds.execute(run, []) is False
    assert ran == ["add 1 2", "add 1 2"]
    assert len(run.state.executions) == 2


async def test_limits_and_tools_changed_after_construction_apply_to_the_next_run() -> None:
    @tool
    def shout(text: str) -> str:
        """Upper-case a text."""
        return text.upper() * 40

    @tool
    def whisper(text: str) -> str:
        """Lower-case a text."""
        return text.lower()

    turn = AssistantTurn(
        tool_calls=[
            ToolCall(id="s", name="shout", arguments={"text": "hey"}),
            ToolCall(id="w", name="whisper", arguments={"text": "HEY"}),
        ]
    )
    model = ScriptedModel([turn, AssistantTurn(text="done")])
    category = CategoryManager("Text", "Changes case.", [whisper], model)
    category.set_tools([shout, whisper])
    category.max_calls_per_round = 1
    category.max_result_chars = 50

    result = await category.run("Shout", "hey")

    shouted, deferred = result.executions
    assert (shouted.tool, shouted.ok) == ("shout", True)
    assert shouted.result == "HEY" * 16 + "HE…[truncated 70 characters]"
    assert (deferred.tool, deferred.ok) == ("whisper", False)
    assert (deferred.error or "").startswith("not run: this turn asked for 2 tool calls")
