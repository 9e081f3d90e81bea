"""Category memory in Redis: shared by router replicas, bounded like the in-process one, never fatal."""

from __future__ import annotations

import json
import logging
from pathlib import Path

import pytest
import redis.asyncio

from meta_tools import tool
from meta_tools.category.memory import RedisMemory, SessionMemory
from meta_tools.config import MetaToolsConfig
from meta_tools.exceptions import ConfigError
from meta_tools.llm import AssistantTurn, ChatRequest, ScriptedModel, ToolCall
from meta_tools.router.manager import MetaManager
from meta_tools.support.redis_client import connect
from tests.services import free_port, redis_server, require

pytestmark = pytest.mark.anyio


@tool
def add(a: int, b: int) -> int:
    """Add two integers."""
    return a + b


def answer(request: ChatRequest) -> AssistantTurn:
    """Call `add` once, then summarise with the past runs the prompt showed."""
    if len(request.messages) > 2:
        return AssistantTurn(text="done")
    return AssistantTurn(tool_calls=[ToolCall(name="add", arguments={"a": 1, "b": 2})])


def config(redis_url: str | None, *, memory: int = 10) -> MetaToolsConfig:
    data: dict[str, object] = {
        "Math": {"description": "Sums.", "tools": ["add"]},
        "defaults": {"category_memory": memory},
    }
    if redis_url:
        data["memory"] = {"redis_url": redis_url, "ttl_s": 60}
    return MetaToolsConfig.from_data(data)


async def test_two_routers_on_one_redis_share_a_clients_memory(redis_url: str) -> None:
    one_model = ScriptedModel.from_function(answer)
    two_model = ScriptedModel.from_function(answer)
    settings = config(redis_url.replace("/0", "/1"))
    async with (
        MetaManager.from_config(settings, tools=[add], model=one_model) as one,
        MetaManager.from_config(settings, tools=[add], model=two_model) as two,
    ):
        await one.call_tool("math", {"objective": "first sum", "exact_input": "1 2"}, session="a")
        await two.call_tool("math", {"objective": "other", "exact_input": "1 2"}, session="b")
        await two.call_tool("math", {"objective": "second sum", "exact_input": "1 2"}, session="a")
        seen = await one.get_category("math").past_runs("a")
    assert [r["objective"] for r in seen] == ["first sum", "second sum"]
    second_prompt = two_model.requests[2].messages[1].content  # replica two, client a's 2nd call
    assert "first sum" in second_prompt and "other" not in second_prompt


async def test_redis_memory_has_the_bounds_of_the_in_process_one(redis_url: str) -> None:
    client = connect(redis_url.replace("/0", "/2"))
    raw = redis.asyncio.Redis.from_url(redis_url.replace("/0", "/2"))
    try:
        shared = RedisMemory(client, namespace="bounds", size=2, ttl_s=30, max_sessions=3)
        local = SessionMemory(2, max_sessions=3)
        for store in (shared, local):
            for i in range(3):
                await store.remember("alice", f"task {i}", "x" * 1000)
            kept = await store.past_runs("alice")  # the last 2, summaries cut to 300 characters
            assert [(r["objective"], len(r["summary"])) for r in kept] == [
                ("task 1", len(kept[0]["summary"])),
                ("task 2", len(kept[0]["summary"])),
            ]
            assert len(kept[0]["summary"]) < 330
            for name in ("bob", "carol", "dave"):  # alice is now the least recently used
                await store.remember(name, f"{name}'s task", "ok")
        for store in (shared, local):
            assert await store.past_runs("alice") == []
            assert [r["objective"] for r in await store.past_runs("dave")] == ["dave's task"]
            assert await store.past_runs(None) == []
        await shared.remember("erin", "a task", "a summary")
        await local.remember("erin", "a task", "a summary")
        assert await shared.past_runs("erin") == await local.past_runs("erin")
        key = shared.key("erin")
        assert "erin" not in key  # client keys (tokens, ids) are stored hashed
        assert 0 < await raw.pttl(key) <= 30_000
        assert await raw.zcard("{bounds}:lru") == 3
        resized = shared.resized(1)
        assert [r["objective"] for r in await resized.past_runs("erin")] == ["a task"]
        assert shared.resized(2) is shared
    finally:
        await client.aclose()
        await raw.aclose()


async def test_a_redis_fault_means_no_memory_for_that_call_not_a_failed_call(
    tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    model = ScriptedModel.from_function(answer)
    require("redis-server")
    with redis_server(tmp_path) as (url, process):
        async with MetaManager.from_config(config(url), tools=[add], model=model) as meta:
            task = {"objective": "remembered", "exact_input": "1 2"}
            await meta.call_tool("math", task, session="a")
            process.kill()
            process.wait(timeout=10)
            with caplog.at_level(logging.WARNING, logger="meta_tools.memory"):
                result = await meta.call_tool("math", {**task, "objective": "later"}, session="a")
    assert (result.status, result.summary) == ("success", "done")
    assert "remembered" not in model.requests[-2].messages[1].content  # none read, none fatal
    problems = [r.getMessage() for r in caplog.records]
    assert any("read failed, this call has none" in m for m in problems), problems
    assert any("write failed, run not remembered" in m for m in problems), problems


POISON = {
    "not JSON": b"not json {",
    "a number": b"42",
    "another object": b'{"x": 1}',
    "a field of the wrong type": b'{"objective": 5, "summary": "s"}',
    "an extra field": b'{"objective": "o", "summary": "s", "role": "system"}',
    "not UTF-8": b'{"objective": "\xff\xfe", "summary": "s"}',
    "nested 100000 deep": b"[" * 100_000 + b"]" * 100_000,
    "a 3 MB summary": json.dumps({"objective": "big", "summary": "B" * 3_000_000}).encode(),
    "an objective longer than any stored": json.dumps(
        {"objective": "L" * 2000, "summary": "s"}
    ).encode(),
}


async def test_poisoned_redis_entries_are_skipped_with_a_warning_and_the_call_goes_on(
    redis_url: str, caplog: pytest.LogCaptureFixture
) -> None:
    model = ScriptedModel.from_function(answer)
    raw = redis.asyncio.Redis.from_url(redis_url.replace("/0", "/3"))
    settings = config(redis_url.replace("/0", "/3"), memory=20)
    try:
        async with MetaManager.from_config(settings, tools=[add], model=model) as meta:
            task = {"objective": "first sum", "exact_input": "1 2"}
            await meta.call_tool("math", task, session="a")
            memory = meta.get_category("math").memory
            assert isinstance(memory, RedisMemory)
            older = json.dumps({"objective": "older sum", "summary": "3"}, ensure_ascii=False)
            await raw.rpush(memory.key("a"), *POISON.values(), older)  # as earlier versions wrote
            seen = len(model.requests)
            with caplog.at_level(logging.WARNING, logger="meta_tools.memory"):
                result = await meta.call_tool("math", {**task, "objective": "later"}, session="a")
                kept = await memory.past_runs("a")
    finally:
        await raw.aclose()
    assert (result.status, result.summary) == ("success", "done")
    prompt = model.requests[seen].messages[1].content
    assert "first sum" in prompt and "older sum" in prompt
    assert "BBBB" not in prompt and "LLLL" not in prompt and "role" not in prompt
    assert [r["objective"] for r in kept] == ["first sum", "older sum", "later"]
    skipped = [r.getMessage() for r in caplog.records if "skipped" in r.getMessage()]
    assert len(skipped) == 2 * len(POISON)  # once for the call, once for `past_runs` above
    assert "past run 9 of 11 skipped" in skipped[7]
    assert "bytes, more than the" in skipped[7]  # the 3 MB entry never left Redis
    assert all("BBBB" not in m and "LLLL" not in m for m in skipped)


async def test_a_run_whose_text_is_not_valid_utf8_is_remembered_not_fatal(redis_url: str) -> None:
    model = ScriptedModel.from_function(answer)
    settings = config(redis_url.replace("/0", "/3"))
    async with MetaManager.from_config(settings, tools=[add], model=model) as meta:
        task = {"objective": "lone \ud800 surrogate", "exact_input": "1 2"}
        result = await meta.call_tool("math", task, session="u")
        kept = await meta.get_category("math").past_runs("u")
    assert result.status == "success"
    assert kept == [{"objective": "lone \ufffd surrogate", "summary": "done"}]


async def test_an_unreachable_redis_at_start_still_serves_calls() -> None:
    model = ScriptedModel.from_function(answer)
    url = f"redis://127.0.0.1:{free_port()}/0"
    async with MetaManager.from_config(config(url), tools=[add], model=model) as meta:
        result = await meta.call_tool("math", {"objective": "o", "exact_input": "1 2"}, session="a")
    assert result.status == "success"


def test_a_bad_memory_section_names_the_field() -> None:
    with pytest.raises(ConfigError) as caught:
        MetaToolsConfig.from_data(
            {"Math": {"description": "Sums.", "tools": ["add"]}, "memory": {"redis_url": "x"}}
        )
    assert "$.memory.redis_url" in str(caught.value)
    data = json.dumps({"redis_url": "redis://h:1/0", "ttl_s": 5})
    assert (
        MetaToolsConfig.from_data(
            {"Math": {"description": "Sums.", "tools": ["add"]}, "memory": json.loads(data)}
        ).memory.ttl_s
        == 5
    )


def test_a_short_state_key_names_the_field_and_does_not_show_the_key() -> None:
    with pytest.raises(ConfigError) as caught:
        MetaToolsConfig.from_data(
            {
                "Math": {"description": "Sums.", "tools": ["add"]},
                "serve": {"state_keys": ["too-short-secret"]},
            }
        )
    text = str(caught.value)
    assert "$.serve.state_keys" in text and "shorter than 32 bytes" in text
    assert "too-short-secret" not in text


def test_a_bad_redis_url_is_not_quoted_as_it_may_hold_a_password() -> None:
    with pytest.raises(ConfigError) as caught:
        MetaToolsConfig.from_data(
            {
                "Math": {"description": "Sums.", "tools": ["add"]},
                "memory": {"redis_url": "http://:hunter2@redis:6379/0"},
            }
        )
    assert "$.memory.redis_url" in str(caught.value)
    assert "hunter2" not in str(caught.value)


async def test_a_reload_keeps_the_running_memory_store_and_says_it_needs_a_restart(
    redis_url: str,
) -> None:
    model = ScriptedModel.from_function(answer)
    async with MetaManager.from_config(config(redis_url), tools=[add], model=model) as meta:
        await meta.call_tool("math", {"objective": "kept", "exact_input": "1 2"}, session="r")
        warnings = await meta.reload(config(None))  # memory back in the process: not now
        assert warnings == [
            "$.memory: changed, but it is read only at start; restart the service to apply it"
            " (the rest of the edit is applied)"
        ]
        assert [r["objective"] for r in await meta.get_category("math").past_runs("r")] == ["kept"]
