"""Result cache: opt-in memoisation by (tool, canonical arguments), in memory or in Redis."""

from __future__ import annotations

import sys
from typing import Any

import pytest
import redis.asyncio

from meta_tools import tool
from meta_tools.category.manager import CategoryManager
from meta_tools.config import MetaToolsConfig
from meta_tools.llm import AssistantTurn, ScriptedModel, ToolCall
from meta_tools.router.manager import MetaManager
from meta_tools.tools import BaseTool, ToolContext, ToolParameter
from meta_tools.tools.cache import CachedTool, MemoryCache, RedisCache, canonical_arguments
from meta_tools.tools.wrapper import unwrap
from tests.services import free_port

pytestmark = pytest.mark.anyio

RAN: list[tuple[int, int]] = []
FAILURES_LEFT = [0]


@tool
def slow_add(a: int, b: int) -> int:
    """Add two integers (pretend it is expensive)."""
    RAN.append((a, b))
    return a + b


@tool
def flaky(city: str) -> str:
    """Fails while FAILURES_LEFT is positive."""
    if FAILURES_LEFT[0] > 0:
        FAILURES_LEFT[0] -= 1
        raise ConnectionError("service down")
    return f"{city}: sunny"


@pytest.fixture(autouse=True)
def _reset() -> None:
    RAN.clear()
    FAILURES_LEFT[0] = 0


def calls(name: str, arguments: dict[str, object]) -> ScriptedModel:
    """A model that calls one tool once, then reports."""
    return ScriptedModel.from_function(
        lambda r: (
            AssistantTurn(tool_calls=[ToolCall(name=name, arguments=arguments)])
            if len(r.messages) == 2
            else AssistantTurn(text="done")
        )
    )


async def test_a_repeated_call_is_answered_from_the_cache_and_counted_in_usage() -> None:
    cache = MemoryCache(ttl_s=60, max_entries=10)
    category = CategoryManager(
        "Math", "Sums.", [slow_add], calls("slow_add", {"a": 2, "b": 3}), cache=cache
    )
    first = await category.run("Add", "2 and 3")
    second = await category.run("Add", "2 and 3")
    assert RAN == [(2, 3)]
    assert [(e.result, e.cached) for e in first.executions + second.executions] == [
        ("5", False),
        ("5", True),
    ]
    assert (first.usage.cache_hits, first.usage.cache_misses) == (0, 1)
    assert (second.usage.cache_hits, second.usage.cache_misses) == (1, 0)


async def test_arguments_are_compared_after_validation_so_order_and_coercion_do_not_matter() -> (
    None
):
    cached = CachedTool(slow_add._tool, MemoryCache())  # type: ignore[attr-defined]
    assert await cached.call({"a": 1, "b": 2}) == 3
    assert await cached.call({"b": "2", "a": 1}) == 3
    assert await cached.call('{"a": 1, "b": 2}') == 3
    assert RAN == [(1, 2)]
    assert canonical_arguments({"b": 2, "a": "é"}) == '{"a":"é","b":2}'


class Shaped(BaseTool):
    """A tool that overrides what a tool shows, and adds a member of its own."""

    name = "shaped"
    description = "Shaped."
    args = {"x": ToolParameter(name="x", type="integer", description="A number.")}  # noqa: RUF012
    origin = "an MCP server"
    calls = 0

    @property
    def parameters_schema(self) -> dict[str, Any]:
        return {"type": "object", "properties": {"x": {"type": "integer", "minimum": 0}}}

    async def get_prompt(self, prompt_type: Any = "default") -> str:
        return f"shaped ({prompt_type})"

    def injected_arguments(self, context: ToolContext) -> dict[str, Any]:
        return {"call": context.tool_call_id}

    def execute(self, x: int, call: str = "") -> str:
        self.calls += 1
        return f"{x} for {call}"


async def test_a_cached_tool_is_its_inner_tool_in_every_member_but_the_call() -> None:
    inner = Shaped()
    cached = CachedTool(inner, MemoryCache())
    members = [m for m in dir(BaseTool) if not m.startswith("_")]
    for member in set(members) - {"call", "answer", "execute", "async_execute", "is_async"}:
        assert getattr(cached, member) == getattr(inner, member), member
    assert await cached.get_prompt("openai") == "shaped (openai)"
    assert cached.mcp_tool().input_schema == inner.parameters_schema
    assert cached.origin == "an MCP server"  # a member only the inner tool's class has
    assert unwrap(CachedTool(cached, MemoryCache())) is inner
    context = ToolContext(tool_call_id="c1")
    assert await cached.call({"x": 1}, context=context) == "1 for c1"
    answer = await cached.answer({"x": 1}, context=context)
    assert (answer.value, answer.cached, inner.calls) == ("1 for c1", True, 1)


async def test_errors_are_never_cached() -> None:
    FAILURES_LEFT[0] = 1
    category = CategoryManager(
        "Weather", "Weather.", [flaky], calls("flaky", {"city": "Oslo"}), cache=MemoryCache()
    )
    first = await category.run("Weather", "Oslo")
    second = await category.run("Weather", "Oslo")
    third = await category.run("Weather", "Oslo")
    assert [(e.ok, e.cached) for r in (first, second, third) for e in r.executions] == [
        (False, False),
        (True, False),
        (True, True),
    ]
    assert (first.usage.cache_misses, second.usage.cache_misses, third.usage.cache_hits) == (
        1,
        1,
        1,
    )


async def test_invalid_arguments_are_rejected_before_the_cache_is_consulted() -> None:
    cache = MemoryCache()
    category = CategoryManager(
        "Math", "Sums.", [slow_add], calls("slow_add", {"a": "two", "b": 3}), cache=cache
    )
    result = await category.run("Add", "two and 3")
    assert [(e.ok, e.cached) for e in result.executions] == [(False, False)]
    assert (result.usage.cache_hits, result.usage.cache_misses, len(cache)) == (0, 0, 0)


async def test_entries_expire_after_their_ttl() -> None:
    now = [1000.0]
    cache = MemoryCache(ttl_s=10, clock=lambda: now[0])
    await cache.set("t", "{}", None)
    entry = await cache.get("t", "{}")
    assert entry is not None and entry.value is None  # a cached None is still a hit
    now[0] += 9.9
    assert await cache.get("t", "{}") is not None
    now[0] += 0.1
    assert await cache.get("t", "{}") is None
    assert len(cache) == 0


async def test_the_least_recently_used_entry_goes_when_the_bound_is_passed() -> None:
    cache = MemoryCache(max_entries=2)
    await cache.set("t", "1", "one")
    await cache.set("t", "2", "two")
    assert await cache.get("t", "1") is not None  # 1 is now more recent than 2
    await cache.set("t", "3", "three")
    assert [await cache.get("t", k) is not None for k in ("1", "2", "3")] == [True, False, True]


async def test_two_redis_caches_share_results_like_two_router_processes(redis_url: str) -> None:
    one = RedisCache(redis_url, namespace="share", ttl_s=30, max_entries=10)
    two = RedisCache(redis_url, namespace="share", ttl_s=30, max_entries=10)
    raw = redis.asyncio.Redis.from_url(redis_url)
    try:
        await one.set("lookup", '{"q":1}', {"answer": [1, 2]})
        entry = await two.get("lookup", '{"q":1}')
        assert entry is not None and entry.value == {"answer": [1, 2]}
        assert await two.get("lookup", '{"q":2}') is None
        ttl_ms = await raw.pttl(one.key("lookup", '{"q":1}'))
        assert 0 < ttl_ms <= 30_000
    finally:
        for client in (one, two):
            await client.aclose()
        await raw.aclose()


async def test_redis_keeps_at_most_max_entries_and_evicts_the_least_recently_used(
    redis_url: str,
) -> None:
    cache = RedisCache(redis_url, namespace="bound", ttl_s=30, max_entries=2)
    try:
        await cache.set("t", "1", "one")
        await cache.set("t", "2", "two")
        assert await cache.get("t", "1") is not None
        await cache.set("t", "3", "three")
        found = [await cache.get("t", k) for k in ("1", "2", "3")]
        assert [f.value if f else None for f in found] == ["one", None, "three"]
    finally:
        await cache.aclose()


async def test_a_category_config_with_a_redis_url_caches_through_redis(redis_url: str) -> None:
    config = MetaToolsConfig.from_data(
        {
            "Math": {
                "description": "Sums.",
                "tools": ["slow_add"],
                "cache": {"ttl_s": 60, "max_entries": 100, "redis_url": redis_url},
            }
        }
    )
    model = calls("slow_add", {"a": 40, "b": 2})
    async with MetaManager.from_config(config, tools=[slow_add], model=model) as meta:
        arguments = {"objective": "Add", "exact_input": "40 and 2"}
        first = await meta.call_tool("math", arguments)
        second = await meta.call_tool("math", arguments)
    assert RAN == [(40, 2)]
    assert [e.cached for e in first.executions + second.executions] == [False, True]
    assert second.executions[0].result == "42"


async def test_an_unreachable_redis_costs_a_miss_not_the_call() -> None:
    cache = RedisCache(f"redis://127.0.0.1:{free_port()}/0", namespace="down")
    category = CategoryManager(
        "Math", "Sums.", [slow_add], calls("slow_add", {"a": 1, "b": 1}), cache=cache
    )
    try:
        result = await category.run("Add", "1 and 1")
    finally:
        await cache.aclose()
    assert [(e.ok, e.result, e.cached) for e in result.executions] == [(True, "2", False)]
    assert result.usage.cache_misses == 1


async def test_an_mcp_server_with_cache_in_its_config_caches_its_tools() -> None:
    config = MetaToolsConfig.from_data(
        {
            "mcp_servers": {
                "demo": {
                    "transport": "stdio",
                    "command": sys.executable,
                    "args": ["-m", "meta_tools.demo"],
                    "cache": {"ttl_s": 60},
                }
            },
            "Math": {"description": "Arithmetic.", "tools": ["calculate"]},
        }
    )
    model = calls("calculate", {"expression": "6 * 7"})
    async with MetaManager.from_config(config, model=model) as meta:
        arguments = {"objective": "Multiply", "exact_input": "6 * 7"}
        first = await meta.call_tool("math", arguments)
        second = await meta.call_tool("math", arguments)
    assert [(e.ok, e.cached) for e in first.executions + second.executions] == [
        (True, False),
        (True, True),
    ]
    assert first.executions[0].result == second.executions[0].result
    assert '"result":42' in (second.executions[0].result or "").replace(" ", "")
