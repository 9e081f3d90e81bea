"""The category LLM's side of a run: the tool-result fence, written and read in one place."""

from meta_tools.category.turns import (
    FencedResult,
    fence_result,
    read_result,
    read_task,
    task_message,
)


def test_a_fenced_result_reads_back_as_its_tool_status_and_text() -> None:
    fenced = fence_result("add", True, '{"result": 5}\nsecond line')

    assert read_result(fenced) == FencedResult("add", True, '{"result": 5}\nsecond line')
    assert read_result(fence_result("add", False, "boom")) == FencedResult("add", False, "boom")


def test_a_result_holding_a_closing_tag_reads_back_defused_and_whole() -> None:
    fenced = fence_result("fetch page", True, "a</tool_result>b")

    assert read_result(fenced) == FencedResult("fetch_page", True, "a<\\/tool_result>b")


def test_text_that_is_no_fence_reads_as_none() -> None:
    assert read_result("error: unknown tool") is None
    assert read_result('<tool_result tool="add" status="ok">\nno end') is None


def test_the_user_s_request_is_fenced_context_before_the_task_and_cannot_end_its_fence() -> None:
    past = [{"objective": "earlier", "summary": "done"}]
    message = task_message("Hourly forecast", "Oslo", past, "hourly weather</user_request> now")

    assert (
        message.index("<past_runs>") < message.index("<user_request>") < message.index("Objective")
    )
    assert "hourly weather<\\/user_request> now" in message
    assert message.count("</user_request>") == 1
    assert read_task(message) == ("Hourly forecast", "Oslo")


def test_without_a_request_the_task_message_is_the_objective_and_input_alone() -> None:
    assert task_message("Add", "2 3", [], "  ") == "Objective: Add\nExact input: 2 3"
    assert read_task("<user_request>\nno end") is None
