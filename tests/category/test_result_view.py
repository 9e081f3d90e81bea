"""`CategoryResult.for_agent`: what a main agent's model reads of a result."""

from __future__ import annotations

import json

from meta_tools.category.result import CategoryResult, Execution


def test_a_tool_result_nested_too_deep_is_passed_on_as_text_not_a_crash() -> None:
    deep = "[" * 3000 + "]" * 3000
    execution = Execution(tool="t", arguments={}, ok=True, result=deep, round=1, duration_s=0.0)
    result = CategoryResult(category="c", status="success", summary="s", executions=[execution])
    assert json.loads(result.for_agent())["executions"][0]["result"] == deep
