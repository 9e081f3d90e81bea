"""The category LLM's side of a run: the tool-result fence, written and read in one place."""

from meta_tools.category.turns import FencedResult, fence_result, read_result


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
