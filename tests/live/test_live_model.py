"""A real model through the demo config: each of the four categories answers a simple task.

Runs only when ``META_TOOLS_LIVE_BASE_URL`` points at an OpenAI-compatible endpoint
(``META_TOOLS_LIVE_MODEL`` names the model, ``META_TOOLS_TIMEOUT_S`` bounds each
request); otherwise every test here is reported as skipped. For example, with
the local llama.cpp server of `../shared/llm`:

    META_TOOLS_LIVE_BASE_URL=http://127.0.0.1:8089/v1 pytest -m live
"""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from benchmarks.e2e import demo_router
from benchmarks.e2e_tasks import TASKS
from meta_tools.llm import OpenAIChatModel
from meta_tools.llm.base import GenerationOptions

BASE_URL = os.environ.get("META_TOOLS_LIVE_BASE_URL")

pytestmark = [
    pytest.mark.live,
    pytest.mark.anyio,
    pytest.mark.skipif(
        not BASE_URL,
        reason="live-model tests: set META_TOOLS_LIVE_BASE_URL to an OpenAI-compatible endpoint",
    ),
]

#: One simple task per demo category, from the benchmark's demo set.
SIMPLE = {"math_units": "m1", "dates_time_zones": "d1", "text_analysis": "t1", "files": "f5"}


@pytest.mark.parametrize("category", SIMPLE)
async def test_each_demo_category_answers_a_simple_task_in_two_llm_calls(
    category: str, tmp_path: Path
) -> None:
    task = next(t for t in TASKS if t.id == SIMPLE[category])
    [route] = task.routes
    model = OpenAIChatModel(
        os.environ.get("META_TOOLS_LIVE_MODEL", "qwen2.5-coder-1.5b"),
        base_url=BASE_URL,
        api_key=os.environ.get("OPENAI_API_KEY", "unused"),
        timeout=float(os.environ.get("META_TOOLS_TIMEOUT_S", "600")),
        options=GenerationOptions(max_tokens=400, temperature=0),
    )
    async with model, demo_router(model, tmp_path) as meta:
        result = await meta.call_tool(
            route.category, {"objective": route.objective, "exact_input": route.exact_input}
        )
    assert result.status == "success", result.summary
    assert task.answered(result.summary), result.summary
    assert any(e.tool in task.tools[0] for e in result.executions if e.ok)
    assert result.usage.llm_calls == 2
