"""The HTTP app behind nginx: legacy sessions stay on their replica, forwarded headers, names."""

from __future__ import annotations

import logging
from pathlib import Path

import anyio
import httpx2
import pytest
from mcp import Client
from mcp.client.streamable_http import streamable_http_client

from meta_tools.serve.server import build_server, http_app
from tests.mcp.conftest import SAMPLING_TOOLS, ScriptedHost, asgi_server
from tests.serve.cluster import auth_headers, cluster
from tests.serve.test_resume import router

pytestmark = pytest.mark.anyio

INITIALIZE = {
    "jsonrpc": "2.0",
    "id": 1,
    "method": "initialize",
    "params": {
        "protocolVersion": "2025-11-25",
        "capabilities": {},
        "clientInfo": {"name": "probe", "version": "1"},
    },
}
JSON_SSE = {"Accept": "application/json, text/event-stream"}


async def test_legacy_sessions_stay_on_the_replica_that_opened_them(
    tmp_path: Path, redis_url: str
) -> None:
    session_ids: list[str] = []

    async def seen(response: httpx2.Response) -> None:
        found = response.headers.get("mcp-session-id")
        if found and found not in session_ids:
            session_ids.append(found)

    async def legacy_client(number: int, url: str) -> None:
        host = ScriptedHost([("shout", {"text": f"client {number}"}), f"done {number}"])
        hooks = {"response": [seen]}
        async with httpx2.AsyncClient(
            headers=auth_headers(), timeout=30, event_hooks=hooks
        ) as http:
            transport = streamable_http_client(url, http_client=http)
            async with Client(
                transport,
                mode="legacy",
                sampling_callback=host,
                sampling_capabilities=SAMPLING_TOOLS,
            ) as client:
                task = {"objective": "Shout it", "exact_input": f"client {number}"}
                result = await client.call_tool("text", task)
        assert result.is_error is False, result.content
        assert result.structured_content is not None
        assert result.structured_content["summary"] == f"done {number}"
        assert result.structured_content["executions"][0]["result"] == f"CLIENT {number}"

    with cluster(tmp_path, redis_url) as running:
        async with anyio.create_task_group() as group:
            for number in range(6):
                group.start_soon(legacy_client, number, running.url)
        assert len(session_ids) == 6
        assert {s.split(".", 1)[0] for s in session_ids} == {"replica1", "replica2"}

        # A session id of replica1 sent straight to replica2 was misrouted: not found there.
        async with httpx2.AsyncClient(headers={**auth_headers(), **JSON_SSE}, timeout=30) as http:
            ping = {"jsonrpc": "2.0", "id": 2, "method": "ping"}
            own = next(s for s in session_ids if s.startswith("replica1."))
            misrouted = await http.post(
                running.replicas[1].url, json=ping, headers={"mcp-session-id": own}
            )
            assert misrouted.status_code == 404

            # replica1 is gone: nginx sends its sessions' requests to replica2, which
            # does not know them (404): the client opens a new session.
            running.replicas[0].kill()
            orphaned = await http.post(running.url, json=ping, headers={"mcp-session-id": own})
            assert orphaned.status_code == 404
            fresh = await http.post(running.url, json=INITIALIZE)
            assert fresh.status_code == 200
            assert fresh.headers["mcp-session-id"].startswith("replica2.")


async def test_behind_nginx_the_public_name_forwarded_client_and_prefix_work(
    tmp_path: Path, redis_url: str
) -> None:
    with cluster(
        tmp_path, redis_url, allowed_hosts=["tools.example.com"], trusted_proxies=["127.0.0.1"]
    ) as running:
        async with httpx2.AsyncClient(timeout=30, headers=JSON_SSE) as http:
            public = await http.post(
                running.url,
                json=INITIALIZE,
                headers={**auth_headers(), "Host": "tools.example.com"},
            )
            foreign = await http.post(
                running.url, json=INITIALIZE, headers={**auth_headers(), "Host": "evil.example"}
            )
            anonymous = await http.post(
                running.url, json=INITIALIZE, headers={"X-Forwarded-For": "203.0.113.9"}
            )
        assert public.status_code == 200, public.text
        assert public.headers["mcp-session-id"].split(".", 1)[0] in ("replica1", "replica2")
        assert foreign.status_code == 421
        assert anonymous.status_code == 401
        # The replica saw the client nginx forwarded, not nginx itself.
        logs = "".join(r.output.text for r in running.replicas)
        assert "refused a request without the right token from 203.0.113.9" in logs


async def test_an_in_process_app_names_each_session_after_its_replica() -> None:
    from meta_tools.serve.proxy import ReplicaSessionIds

    seen: list[bytes] = []

    async def app(scope: dict, receive: object, send: object) -> None:  # type: ignore[type-arg]
        seen.append(dict(scope["headers"]).get(b"mcp-session-id", b""))
        await send(  # type: ignore[operator]
            {"type": "http.response.start", "status": 200, "headers": [(b"Mcp-Session-Id", b"abc")]}
        )
        await send({"type": "http.response.body", "body": b""})  # type: ignore[operator]

    tagged = ReplicaSessionIds(app, "r1")
    transport = httpx2.ASGITransport(app=tagged)
    async with httpx2.AsyncClient(transport=transport, base_url="http://t") as http:
        first = await http.post("/mcp")
        await http.post("/mcp", headers={"mcp-session-id": "r1.abc"})
        await http.post("/mcp", headers={"mcp-session-id": "r2.abc"})
    assert first.headers["mcp-session-id"] == "r1.abc"
    assert seen == [b"", b"abc", b"r2.abc"]  # its own prefix removed, another's kept (unknown)
    with pytest.raises(ValueError, match="replica name"):
        ReplicaSessionIds(app, "bad name")


@pytest.mark.parametrize(
    ("bind", "names", "host", "status"),
    [
        ("0.0.0.0", ["tools.example.com"], "tools.example.com", 200),
        ("0.0.0.0", ["tools.example.com"], "tools.example.com:443", 200),
        ("0.0.0.0", ["tools.example.com"], "evil.example", 421),
        ("0.0.0.0", [], "anything.example", 200),  # a wildcard bind alone cannot know its names
        ("127.0.0.1", ["tools.example.com"], "127.0.0.1:8000", 200),
        ("127.0.0.1", [], "tools.example.com", 421),
    ],
)
async def test_the_allow_list_has_the_bind_address_and_the_configured_public_names(
    bind: str, names: list[str], host: str, status: int
) -> None:
    async with router() as meta:
        app = http_app(build_server(meta), host=bind, allowed_hosts=names)
        async with (
            asgi_server(app) as base,
            httpx2.AsyncClient(timeout=30, headers=JSON_SSE) as http,
        ):
            answer = await http.post(f"{base}/mcp", json=INITIALIZE, headers={"Host": host})
    assert answer.status_code == status, answer.text


@pytest.mark.parametrize(
    ("bind", "token", "warned"),
    [("0.0.0.0", None, True), ("0.0.0.0", "s3cret-token", False), ("127.0.0.1", None, False)],
)
async def test_a_reachable_bind_without_a_token_is_warned_about(
    bind: str, token: str | None, warned: bool, caplog: pytest.LogCaptureFixture
) -> None:
    """SECURITY.md: a non-loopback host without a token logs a warning."""
    async with router() as meta:
        with caplog.at_level(logging.WARNING, logger="meta_tools.server"):
            http_app(build_server(meta), host=bind, token=token)
    found = [r for r in caplog.records if "without a token" in r.getMessage()]
    assert bool(found) is warned, [r.getMessage() for r in caplog.records]
