"""The router end to end through the real openai and dashscope SDKs, against a local fake server."""

import json
from pathlib import Path

import pytest

from meta_tools import MetaManager, tool
from tests.fakes.llm_server import (
    FakeLLMServer,
    Reply,
    dashscope_text_reply,
    dashscope_tool_reply,
    openai_text_reply,
    openai_tool_reply,
    wire_tool_call,
)

pytestmark = pytest.mark.anyio


@tool
def convert_km_to_miles(km: float) -> float:
    """Convert kilometres to miles."""
    return round(km * 0.621371, 3)


def write_config(tmp_path: Path, model: dict[str, object]) -> Path:
    path = tmp_path / "Meta_tool_config.json"
    config = {
        "Units": {"description": "Convert units.", "tools": ["convert_*"]},
        "model": model,
    }
    path.write_text(json.dumps(config))
    return path


async def test_a_category_call_through_the_real_openai_sdk(
    llm_server: FakeLLMServer, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("FAKE_LLM_KEY", "sk-test-secret")
    llm_server.enqueue(
        Reply(
            body=openai_tool_reply(wire_tool_call("call_1", "convert_km_to_miles", {"km": 42.195}))
        ),
        Reply(body=openai_text_reply("42.195 km is 26.219 miles.")),
    )
    path = write_config(
        tmp_path,
        {
            "provider": "openai",
            "name": "qwen-plus",
            "base_url": llm_server.openai_base_url,
            "api_key_env": "FAKE_LLM_KEY",
        },
    )
    async with MetaManager.from_config(path, tools=[convert_km_to_miles]) as meta:
        result = await meta.call_tool(
            "units", {"objective": "Marathon in miles", "exact_input": "42.195 km"}
        )
    assert (result.status, result.summary) == ("success", "42.195 km is 26.219 miles.")
    assert result.executions[0].result == "26.219"
    assert (result.usage.llm_calls, result.usage.prompt_tokens, result.usage.completion_tokens) == (
        2,
        20,
        10,
    )
    first, second = (r.body for r in llm_server.requests)
    assert first["model"] == "qwen-plus" and first["tool_choice"] == "auto"
    assert [t["function"]["name"] for t in first["tools"]] == [
        "convert_km_to_miles",
        "request_input",
        "decline",
    ]
    assert second["messages"][2] == {
        "role": "assistant",
        "content": None,
        "tool_calls": [
            {
                "id": "call_1",
                "type": "function",
                "function": {"name": "convert_km_to_miles", "arguments": '{"km": 42.195}'},
            }
        ],
    }
    assert second["messages"][3] == {
        "role": "tool",
        "tool_call_id": "call_1",
        "content": '<tool_result tool="convert_km_to_miles" status="ok">\n26.219\n</tool_result>',
    }
    assert llm_server.requests[0].headers["authorization"] == "Bearer sk-test-secret"


async def test_a_category_call_through_the_real_dashscope_sdk(
    llm_server: FakeLLMServer, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("DASHSCOPE_API_KEY", "sk-ds-secret")
    llm_server.enqueue(
        Reply(
            body=dashscope_tool_reply(wire_tool_call("call_9", "convert_km_to_miles", {"km": 10}))
        ),
        Reply(body=dashscope_text_reply("10 km is 6.214 miles.")),
    )
    path = write_config(
        tmp_path,
        {"provider": "dashscope", "name": "qwen-max", "base_url": llm_server.dashscope_base_url},
    )
    async with MetaManager.from_config(path, tools=[convert_km_to_miles]) as meta:
        result = await meta.call_tool(
            "Units", {"objective": "10 km in miles", "exact_input": "10 km"}
        )
    assert (result.status, result.summary, result.executions[0].result) == (
        "success",
        "10 km is 6.214 miles.",
        "6.214",
    )
    first, second = (r.body for r in llm_server.requests)
    assert first["model"] == "qwen-max" and first["parameters"]["tool_choice"] == "auto"
    assert [t["function"]["name"] for t in first["parameters"]["tools"]] == [
        "convert_km_to_miles",
        "request_input",
        "decline",
    ]
    assert second["model"] == "qwen-max"
    assert second["input"]["messages"][3]["tool_call_id"] == "call_9"
    assert llm_server.requests[0].headers["authorization"] == "Bearer sk-ds-secret"


async def test_a_model_that_keeps_failing_ends_the_call_as_failed_without_leaking_the_key(
    llm_server: FakeLLMServer, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("FAKE_LLM_KEY", "sk-never-show-me")
    llm_server.respond_with(Reply(body={"error": {"message": "overloaded"}}, status=503))
    path = write_config(
        tmp_path,
        {
            "provider": "openai",
            "name": "qwen-plus",
            "base_url": llm_server.openai_base_url,
            "api_key_env": "FAKE_LLM_KEY",
            "max_retries": 1,
            "backoff_s": 0.01,
        },
    )
    meta = MetaManager.from_config(path, tools=[convert_km_to_miles])
    result = await meta.call_tool("units", {"objective": "o", "exact_input": "i"})
    assert result.status == "failed"
    assert llm_server.request_count == 2
    assert llm_server.openai_base_url in result.summary and "qwen-plus" in result.summary
    assert "sk-never-show-me" not in result.to_json()
    await meta.aclose()
