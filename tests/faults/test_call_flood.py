"""One LLM turn asking for 150 tool calls runs at most `max_calls_per_round` of them, and the
built-ins never have more than `MAX_CHILD_PROCESSES` children alive at once."""

from __future__ import annotations

from pathlib import Path

import pytest

from meta_tools.category.manager import CategoryManager
from meta_tools.config import MetaToolsConfig, PythonBuiltinConfig
from meta_tools.llm import AssistantTurn, ScriptedModel, ToolCall
from meta_tools.tools.builtins import python_tool
from meta_tools.tools.builtins.process import MAX_CHILD_PROCESSES

pytestmark = pytest.mark.anyio


def recorder(folder: Path, index: int) -> str:
    """A program that records when it ran (start and end, monotonic clock) in `folder`."""
    return (
        "import time\n"
        "start = time.monotonic()\n"
        "time.sleep(0.3)\n"
        f"open({str(folder / f'{index}.txt')!r}, 'w').write(f'{{start}} {{time.monotonic()}}')\n"
    )


def peak_overlap(folder: Path) -> int:
    events: list[tuple[float, int]] = []
    for record in folder.glob("*.txt"):
        start, end = map(float, record.read_text().split())
        events += [(start, 1), (end, -1)]
    peak = alive = 0
    for _, step in sorted(events, key=lambda e: (e[0], e[1])):
        alive += step
        peak = max(peak, alive)
    return peak


async def test_a_turn_with_150_calls_runs_the_cap_and_answers_the_rest(tmp_path: Path) -> None:
    calls = [
        ToolCall(
            id=f"call_{i}", name="execute_python_code", arguments={"code": recorder(tmp_path, i)}
        )
        for i in range(150)
    ]
    model = ScriptedModel([AssistantTurn(tool_calls=calls), AssistantTurn(text="done")])
    tool = python_tool(PythonBuiltinConfig(timeout_s=30))
    category = CategoryManager("Code", "Runs code.", [tool], model, tool_timeout_s=60)
    result = await category.run("run them all", "now")

    ran = [e for e in result.executions if e.ok]
    refused = [e for e in result.executions if not e.ok]
    assert len(ran) == 16 and len(refused) == 134
    assert refused[0].error == (
        "not run: this turn asked for 150 tool calls and at most 16 run per round;"
        " call 'execute_python_code' again in the next round if it is still needed"
    )
    assert len(list(tmp_path.glob("*.txt"))) == 16
    assert 1 < peak_overlap(tmp_path) <= MAX_CHILD_PROCESSES
    told = [m for m in model.requests[1].messages if m.role == "tool"]
    assert len(told) == 150  # every call id is answered
    assert result.status == "success"


def test_the_cap_is_configurable_per_category_and_in_defaults() -> None:
    config = MetaToolsConfig.from_data(
        {
            "A": {"description": "a", "tools": ["x"], "max_calls_per_round": 4},
            "defaults": {"max_calls_per_round": 8},
        }
    )
    assert (config.categories["A"].max_calls_per_round, config.defaults.max_calls_per_round) == (
        4,
        8,
    )
