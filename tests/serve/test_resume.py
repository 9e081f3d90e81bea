"""2026-07-28 sampling calls carried as sealed state: any server with the key goes on, others refuse."""

from __future__ import annotations

import hashlib
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from typing import Any

import httpx2
import mcp_types
import pytest
from mcp import Client, MCPError
from mcp.client.streamable_http import streamable_http_client
from mcp.server import Server

from meta_tools import tool
from meta_tools.config import MetaToolsConfig, ServeConfig
from meta_tools.exceptions import ConfigError
from meta_tools.llm.sampling import SamplingChatModel
from meta_tools.router.manager import MetaManager
from meta_tools.serve.resume import SAMPLE_KEY, STATE_KEY_ENV, state_keys
from meta_tools.serve.server import build_server, http_app
from tests.mcp.conftest import SAMPLING_TOOLS, ScriptedHost, asgi_server

pytestmark = pytest.mark.anyio

TASK = {"objective": "Shout it back", "exact_input": "hi"}
KEY = "k" * 40
OTHER_KEY = "o" * 40
REFUSED = "this call's request_state is invalid, expired or from another deployment"


@tool
def shout(text: str) -> str:
    """Upper-case a text."""
    return text.upper()


@tool
def dump(size: int) -> str:
    """Shout back `size` characters of varied text."""
    return "".join(hashlib.sha256(str(i).encode()).hexdigest() for i in range(size // 64 + 1))[
        :size
    ]


SHOUTED: list[str] = []
"""Every text `shout` was run with (a replayed step would run it again)."""


@tool
def shout_once(text: str) -> str:
    """Upper-case a text, and record it."""
    SHOUTED.append(text)
    return text.upper()


def router(*, text_tools: tuple[str, ...] = ("shout", "dump"), **defaults: Any) -> MetaManager:
    config = MetaToolsConfig.from_data(
        {
            "Text": {"description": "Shout texts.", "tools": list(text_tools)},
            "Other": {"description": "Nothing much.", "tools": ["shout"]},
            "defaults": defaults,
        }
    )
    tools = [shout, dump, shout_once]
    return MetaManager.from_config(config, tools=tools, model=SamplingChatModel())


def answered(step: ScriptedHost, request: mcp_types.InputRequiredResult) -> dict[str, Any]:
    """The host's answer to the one sampling request, as the retry carries it."""
    sample = request.input_requests[SAMPLE_KEY]
    assert isinstance(sample, mcp_types.CreateMessageRequest)
    step.requests.append(sample.params)
    reply = step.steps[len(step.requests) - 1]
    if isinstance(reply, str):
        content: list[Any] = [mcp_types.TextContent(text=reply)]
        result = mcp_types.CreateMessageResultWithTools(
            role="assistant", model="m", content=content, stop_reason="endTurn"
        )
    else:
        name, arguments = reply  # type: ignore[misc]
        use = mcp_types.ToolUseContent(id=f"c{len(step.requests)}", name=name, input=arguments)
        result = mcp_types.CreateMessageResultWithTools(
            role="assistant", model="m", content=[use], stop_reason="toolUse"
        )
    return {SAMPLE_KEY: result}


async def first_round(server: Server[Any], name: str = "text") -> mcp_types.InputRequiredResult:
    async with Client(
        server, sampling_callback=ScriptedHost([]), sampling_capabilities=SAMPLING_TOOLS
    ) as client:
        result = await client.session.call_tool(name, TASK, allow_input_required=True)
    assert isinstance(result, mcp_types.InputRequiredResult)
    return result


async def retry(
    server: Server[Any], state: str | None, responses: dict[str, Any], name: str = "text"
) -> mcp_types.CallToolResult | mcp_types.InputRequiredResult | MCPError:
    """The client's retry with its answer and the state; a refusal is returned, not raised.

    `name` "text (other arguments)" retries tool `text` with another objective.
    """
    arguments = TASK
    if name == "text (other arguments)":
        name, arguments = "text", {**TASK, "objective": "Something else"}
    async with Client(
        server, sampling_callback=ScriptedHost([]), sampling_capabilities=SAMPLING_TOOLS
    ) as client:
        try:
            return await client.session.call_tool(
                name,
                arguments,
                input_responses=responses,
                request_state=state,
                allow_input_required=True,
            )
        except MCPError as exc:
            return exc


async def test_every_round_on_another_server_with_the_same_key_completes_the_call() -> None:
    host = ScriptedHost([("shout", {"text": "hi"}), "Shouted: HI"])
    async with router() as one, router() as two:
        servers = [build_server(one, state_keys=[KEY]), build_server(two, state_keys=[KEY])]
        step = await first_round(servers[0])
        assert step.request_state and "Shout it" not in step.request_state  # sealed: unreadable
        second = await retry(servers[1], step.request_state, answered(host, step))
        assert isinstance(second, mcp_types.InputRequiredResult)
        assert second.request_state is not None and len(second.request_state) < 4096
        last = await retry(servers[0], second.request_state, answered(host, second))
    assert isinstance(last, mcp_types.CallToolResult), last
    assert last.structured_content is not None
    assert last.structured_content["summary"] == "Shouted: HI"
    assert last.structured_content["executions"][0]["result"] == "HI"
    assert last.structured_content["usage"]["llm_calls"] == 2
    # The second request saw the tool's result: the run went on where it stopped.
    results = [b for m in host.requests[1].messages for b in m.content_as_list]
    assert any(isinstance(b, mcp_types.ToolResultContent) for b in results)


async def test_a_state_sealed_under_the_old_key_still_opens_during_a_rotation() -> None:
    host = ScriptedHost([("shout", {"text": "hi"}), "Shouted: HI"])
    async with router() as meta:
        step = await first_round(build_server(meta, state_keys=[OTHER_KEY]))
        rotating = build_server(meta, state_keys=[KEY, OTHER_KEY])  # new key first, old one still
        second = await retry(rotating, step.request_state, answered(host, step))
        assert isinstance(second, mcp_types.InputRequiredResult)
        last = await retry(
            build_server(meta, state_keys=[KEY]), second.request_state, answered(host, second)
        )
    assert isinstance(last, mcp_types.CallToolResult) and last.is_error is False


async def test_a_tampered_foreign_or_expired_state_is_refused_with_a_clear_error() -> None:
    host = ScriptedHost([("shout", {"text": "hi"})] * 4)
    async with router() as meta:
        ours = build_server(meta, state_keys=[KEY])
        step = await first_round(ours)
        state = step.request_state
        assert state is not None
        answer = answered(host, step)
        middle = len(state) // 2
        flipped = state[:middle] + ("A" if state[middle] != "A" else "B") + state[middle + 1 :]
        expired_state = (
            await first_round(build_server(meta, state_keys=[KEY], state_ttl_s=1e-9))
        ).request_state
        cases = {
            "tampered": (ours, flipped, "text"),
            "another key": (build_server(meta, state_keys=[OTHER_KEY]), state, "text"),
            "another service": (build_server(meta, name="other", state_keys=[KEY]), state, "text"),
            "another tool": (ours, state, "other"),
            "other arguments": (ours, state, "text (other arguments)"),
            "expired": (ours, expired_state, "text"),
        }
        for case, (server, sent, name) in cases.items():
            refused = await retry(server, sent, answer, name)
            assert isinstance(refused, MCPError), case
            assert refused.error.code == mcp_types.INVALID_PARAMS, case
            assert refused.error.message.startswith(REFUSED), case
            assert "call the tool again from the start" in refused.error.message


@asynccontextmanager
async def over_http(server: Server[Any], token: str) -> AsyncIterator[str]:
    async with asgi_server(http_app(server, token=token)) as base:
        yield f"{base}/mcp"


async def test_a_state_works_only_for_the_token_it_was_issued_to() -> None:
    """Two deployments sharing a state key but not a token: one's state is foreign to the other."""
    host = ScriptedHost([("shout", {"text": "hi"}), "done", ("shout", {"text": "hi"})])
    async with (
        router() as meta,
        over_http(build_server(meta, state_keys=[KEY]), "alice") as alice_url,
        over_http(build_server(meta, state_keys=[KEY]), "mallory") as mallory_url,
    ):
        urls = {"alice": alice_url, "mallory": mallory_url}

        @asynccontextmanager
        async def client(token: str) -> AsyncIterator[Client]:
            url = urls[token]
            headers = {"Authorization": f"Bearer {token}"}
            async with httpx2.AsyncClient(headers=headers, timeout=30) as http:
                transport = streamable_http_client(url, http_client=http)
                async with Client(
                    transport, sampling_callback=host, sampling_capabilities=SAMPLING_TOOLS
                ) as connected:
                    yield connected

        async with client("alice") as alice:
            step = await alice.session.call_tool("text", TASK, allow_input_required=True)
            assert isinstance(step, mcp_types.InputRequiredResult)
            answer = answered(ScriptedHost([("shout", {"text": "hi"})]), step)
            own = await alice.session.call_tool(
                "text",
                TASK,
                input_responses=answer,
                request_state=step.request_state,
                allow_input_required=True,
            )
        assert isinstance(own, mcp_types.InputRequiredResult)  # alice may go on
        async with client("mallory") as mallory:
            with pytest.raises(MCPError, match="invalid, expired or from another deployment"):
                await mallory.session.call_tool(
                    "text",
                    TASK,
                    input_responses=answer,
                    request_state=step.request_state,
                    allow_input_required=True,
                )


async def test_a_run_whose_state_outgrows_the_limit_fails_cleanly() -> None:
    host = ScriptedHost([("dump", {"size": 3000})])
    async with router(max_result_chars=4000) as meta:
        server = build_server(meta, state_keys=[KEY], max_state_bytes=2048)
        step = await first_round(server)  # the first state (prompts only) fits
        result = await retry(server, step.request_state, answered(host, step))
    assert isinstance(result, mcp_types.CallToolResult)
    assert result.is_error is True
    text = result.content[0].text  # type: ignore[union-attr]
    assert "above serve.max_state_bytes (2,048)" in text, text


async def test_a_retry_without_the_hosts_answer_is_told_what_is_missing() -> None:
    async with router() as meta:
        server = build_server(meta, state_keys=[KEY])
        step = await first_round(server)
        result = await retry(server, step.request_state, {})
    assert isinstance(result, mcp_types.CallToolResult) and result.is_error is True
    assert result.content[0].text == "the retry carries no answer for 'sample'"  # type: ignore[union-attr]


def test_the_state_key_comes_from_the_config_else_the_environment_and_must_be_long(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    long_key = "k" * 32
    monkeypatch.setenv(STATE_KEY_ENV, long_key)
    assert state_keys(ServeConfig()) == [long_key]
    assert state_keys(ServeConfig(state_keys=["c" * 40])) == ["c" * 40]
    monkeypatch.setenv(STATE_KEY_ENV, "too-short")
    with pytest.raises(ConfigError) as raised:
        state_keys(ServeConfig())
    assert (raised.value.source, raised.value.problems) == (
        STATE_KEY_ENV,
        [
            "the key is shorter than 32 bytes; generate one with"
            ' python -c "import secrets; print(secrets.token_hex(32))"'
        ],
    )
    monkeypatch.delenv(STATE_KEY_ENV)
    assert state_keys(ServeConfig()) == []


USED = "this call's request_state was used already"


async def test_a_state_from_a_deployment_with_other_categories_is_refused() -> None:
    """Staging and production share the key and the service name; their categories differ."""
    host = ScriptedHost([("shout", {"text": "hi"})])
    async with router() as staging, router(text_tools=("shout",)) as production:
        step = await first_round(build_server(staging, state_keys=[KEY]))
        refused = await retry(
            build_server(production, state_keys=[KEY]), step.request_state, answered(host, step)
        )
    assert isinstance(refused, MCPError), refused
    assert refused.error.code == mcp_types.INVALID_PARAMS
    assert refused.error.message.startswith(REFUSED)


async def test_a_state_sealed_before_a_reload_that_changed_the_tools_is_refused() -> None:
    host = ScriptedHost([("shout", {"text": "hi"})])
    async with router() as meta:
        server = build_server(meta, state_keys=[KEY])
        step = await first_round(server)
        edited = {
            "Text": {"description": "Shout texts.", "tools": ["shout"]},
            "Other": {"description": "Nothing much.", "tools": ["shout"]},
        }
        await meta.reload(MetaToolsConfig.from_data(edited))
        refused = await retry(server, step.request_state, answered(host, step))
    assert isinstance(refused, MCPError), refused
    assert refused.error.message.startswith(REFUSED)


async def test_a_state_works_once_so_a_replay_runs_no_tool_again() -> None:
    SHOUTED.clear()
    host = ScriptedHost([("shout_once", {"text": "hi"})])
    async with router(text_tools=("shout_once",)) as meta:
        server = build_server(meta, state_keys=[KEY])
        step = await first_round(server)
        answer = answered(host, step)
        first = await retry(server, step.request_state, answer)
        replayed = await retry(server, step.request_state, answer)
    assert isinstance(first, mcp_types.InputRequiredResult), first
    assert isinstance(replayed, MCPError), replayed
    assert replayed.error.code == mcp_types.INVALID_PARAMS
    assert replayed.error.message == (
        f"{USED}: each one works once, so that a step's tools never run twice;"
        " call the tool again from the start"
    )
    assert SHOUTED == ["hi"]


async def test_a_state_used_on_one_replica_is_refused_on_another_through_redis(
    redis_url: str,
) -> None:
    from meta_tools.serve.replay import UsedStates
    from meta_tools.support.redis_client import connect

    SHOUTED.clear()
    host = ScriptedHost([("shout_once", {"text": "hi"})])
    clients = [connect(redis_url), connect(redis_url)]
    try:
        async with (
            router(text_tools=("shout_once",)) as one,
            router(text_tools=("shout_once",)) as two,
        ):
            servers = [
                build_server(meta, state_keys=[KEY], used_states=UsedStates(client=client))
                for meta, client in ((one, clients[0]), (two, clients[1]))
            ]
            step = await first_round(servers[0])
            answer = answered(host, step)
            first = await retry(servers[0], step.request_state, answer)
            replayed = await retry(servers[1], step.request_state, answer)
    finally:
        for client in clients:
            await client.aclose()
    assert isinstance(first, mcp_types.InputRequiredResult), first
    assert isinstance(replayed, MCPError) and replayed.error.message.startswith(USED), replayed
    assert SHOUTED == ["hi"]


async def test_the_used_states_of_one_process_are_bounded_and_expire() -> None:
    from meta_tools.serve.replay import UsedStates

    used = UsedStates(max_entries=2)
    assert [await used.claim(s, 60) for s in ("a", "a", "b", "c")] == [True, False, True, True]
    assert await used.claim("a", 60) is True  # the oldest was forgotten to make room
    brief = UsedStates()
    assert await brief.claim("d", 1e-9) is True
    assert await brief.claim("d", 1e-9) is True  # expired: nothing to refuse any more
