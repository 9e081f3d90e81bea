"""A run's state is plain data: it goes to JSON and back unchanged (to carry a run elsewhere)."""

from __future__ import annotations

from pydantic import TypeAdapter

from meta_tools.category.result import Execution
from meta_tools.category.run import RunState
from meta_tools.llm.types import Message, ToolCall


def test_a_run_state_goes_to_json_and_back_unchanged() -> None:
    call = ToolCall(id="call_1", name="add", arguments={"a": 1, "b": 2})
    state = RunState(objective="Add", exact_input="1 and 2", session="alice")
    state.messages += [
        Message(role="system", content="Pick a tool."),
        Message(role="assistant", tool_calls=[call]),
        Message(role="tool", tool_call_id="call_1", name="add", content="3"),
    ]
    state.executions.append(
        Execution(
            tool="add", arguments=call.arguments, ok=True, result="3", round=1, duration_s=0.1
        )
    )
    state.count_failure("flaky")
    state.count_failure("flaky")
    state.iteration = 1
    state.offered = ["add"]
    state.usage.llm_calls = 1

    adapter = TypeAdapter(RunState)
    again = adapter.validate_json(adapter.dump_json(state))

    assert again == state
    assert (again.withdrawn, again.failures, again.used) == (["flaky"], {"flaky": 2}, ["add"])
