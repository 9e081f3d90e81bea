"""Resumable response streams: a host whose connection drops mid-call gets the call's result.

With an event log (`meta_tools.serve.events`), every 2025-11-25 response
stream starts with a priming event (an id, no data, and `retry`: how long to
wait before reconnecting) and each message carries an id. A host that loses
the stream sends `GET` with `Last-Event-ID`; `ResumeGate` checks that the
event is still kept for its session, and hands the stream to the new request:
the SDK replays what was missed and the rest follows live.

A call whose stream dropped is not cancelled at once (as it is without
resumption, see `disconnect`): it runs on for `grace_s`, and is cancelled
only if no resumption comes by then (`until_abandoned`).

Sessions live in the replica that opened them, so a resumption that reaches
another replica is refused in words (404) with what to do; so is one whose
events are no longer kept (410).
"""

from __future__ import annotations

import json
import logging
from collections.abc import AsyncIterator, Awaitable, Callable
from contextlib import asynccontextmanager
from dataclasses import dataclass
from typing import Any, TypeVar

import anyio
import mcp_types
from mcp.server import Server, ServerRequestContext
from mcp.server.streamable_http import (
    LAST_EVENT_ID_HEADER,
    MCP_SESSION_ID_HEADER,
    StreamableHTTPServerTransport,
)
from mcp.server.streamable_http_manager import StreamableHTTPASGIApp, StreamableHTTPSessionManager
from mcp.server.transport_security import TransportSecuritySettings
from starlette.applications import Starlette
from starlette.routing import Route
from starlette.types import ASGIApp, Receive, Scope, Send

from ..config import ResumeConfig
from .disconnect import DISCONNECTED, disconnected_event
from .events import EventLog, SessionEvents

__all__ = ["RESUMPTIONS", "Resumable", "ResumeGate", "Resumptions", "resumable", "resumable_app"]

logger = logging.getLogger("meta_tools.server")

T = TypeVar("T")

RESUMPTIONS = "meta_tools.resumptions"
"""The scope key of the `Resumptions` of the app serving the request."""


class _SessionScopedManager(StreamableHTTPSessionManager):
    """The SDK's session manager, giving each session its own view of the event log.

    The SDK hands every session one store and names streams by request id alone,
    which every session numbers from the same start. This hooks the SDK's own
    (private) admission of a session; the resumption tests fail if that changes.
    """

    def __init__(self, app: Server[Any], log: EventLog, **options: Any) -> None:
        super().__init__(app, event_store=SessionEvents(log, ""), **options)
        self._log = log

    def _admit_session(self, requestor: Any) -> StreamableHTTPServerTransport | None:
        transport = super()._admit_session(requestor)
        if transport is not None and transport.mcp_session_id is not None:
            transport._event_store = SessionEvents(self._log, transport.mcp_session_id)
        return transport


def resumable_app(
    server: Server[Any],
    log: EventLog,
    *,
    path: str,
    max_body_bytes: int,
    security: TransportSecuritySettings,
    retry_ms: int,
) -> ASGIApp:
    """The SDK's streamable-HTTP app with per-session event stores and a `retry` of `retry_ms`."""
    manager = _SessionScopedManager(
        server,
        log,
        retry_interval=retry_ms,
        security_settings=security,
        max_request_body_size=max_body_bytes,
    )
    return Starlette(
        routes=[Route(path, endpoint=StreamableHTTPASGIApp(manager))],
        lifespan=lambda _: manager.run(),
    )


class _Watch:
    """One running call's stream: the request that receives it now, and whether it is gone."""

    def __init__(self, gone: anyio.Event, close: Callable[[], Awaitable[None]]) -> None:
        self.gone = gone
        self.close = close
        self._changed = anyio.Event()

    def attach(self, gone: anyio.Event) -> None:
        """A resumption's request receives the stream from now on."""
        self.gone = gone
        self._changed.set()
        self._changed = anyio.Event()

    async def abandoned(self, grace_s: float) -> None:
        """Return once the stream's receiver is gone and no resumption came within `grace_s`."""
        while True:
            current = self.gone
            await current.wait()
            if self.gone is not current:
                continue  # resumed while the old receiver was still leaving
            changed = self._changed
            with anyio.move_on_after(grace_s):
                await changed.wait()
            if self.gone is current:
                return


class Resumptions:
    """The running calls whose streams can be resumed, by session and stream (one per call)."""

    def __init__(self, log: EventLog, settings: ResumeConfig) -> None:
        self.log = log
        self.settings = settings
        self._watches: dict[tuple[str, str], _Watch] = {}

    @asynccontextmanager
    async def watching(
        self, session: str, stream: str, gone: anyio.Event, close: Callable[[], Awaitable[None]]
    ) -> AsyncIterator[_Watch]:
        """Follow one call's stream while the call runs."""
        key = (session, stream)
        watch = self._watches[key] = _Watch(gone, close)
        try:
            yield watch
        finally:
            if self._watches.get(key) is watch:
                del self._watches[key]

    async def resumed(self, session: str, stream: str, gone: anyio.Event) -> None:
        """A request resumes the stream: it receives it from now on (the old receiver is closed)."""
        watch = self._watches.get((session, stream))
        if watch is not None:
            watch.attach(gone)
            # The SDK goes on live after its replay only once the old receiver is closed.
            await watch.close()


@dataclass(frozen=True)
class Resumable:
    """A running call's resumable stream: which one, and how to close its current receiver."""

    resumptions: Resumptions
    session: str
    stream: str
    close: Callable[[], Awaitable[None]]

    async def until_abandoned(self, request: Any, call: Callable[[], Awaitable[T]]) -> T | None:
        """Run `call`; cancel it (and return None) once its stream is gone for good.

        Gone for good: dropped, and not resumed within `serve.resume.grace_s`.
        """
        gone = disconnected_event(request)
        if gone is None:
            return await call()
        grace_s = self.resumptions.settings.grace_s
        result: list[T] = []
        async with (
            self.resumptions.watching(self.session, self.stream, gone, self.close) as watch,
            anyio.create_task_group() as group,
        ):

            async def abandon() -> None:
                await watch.abandoned(grace_s)
                logger.info(
                    "a client left mid-call and did not resume within %g s (serve.resume.grace_s)",
                    grace_s,
                )
                group.cancel_scope.cancel()

            group.start_soon(abandon)
            result.append(await call())
            group.cancel_scope.cancel()
        return result[0] if result else None


def resumable(ctx: ServerRequestContext[Any, Any]) -> Resumable | None:
    """The call's resumable stream, or None: no event log, an older protocol, or no session."""
    scope = getattr(ctx.request, "scope", None)
    if ctx.close_sse_stream is None or not isinstance(scope, dict):
        return None
    resumptions = scope.get(RESUMPTIONS)
    session = dict(scope.get("headers") or []).get(MCP_SESSION_ID_HEADER.encode())
    if not isinstance(resumptions, Resumptions) or not session or ctx.request_id is None:
        return None
    return Resumable(
        resumptions, session.decode("latin-1"), str(ctx.request_id), ctx.close_sse_stream
    )


def _refusal(status: int, message: str) -> tuple[dict[str, Any], dict[str, Any]]:
    body = json.dumps(
        {
            "jsonrpc": "2.0",
            "id": None,
            "error": {"code": mcp_types.INVALID_REQUEST, "message": message},
        }
    ).encode()
    start = {
        "type": "http.response.start",
        "status": status,
        "headers": [
            (b"content-type", b"application/json"),
            (b"content-length", str(len(body)).encode()),
        ],
    }
    return start, {"type": "http.response.body", "body": body}


class ResumeGate:
    """ASGI middleware (inside `DisconnectWatch`): checks resumptions, hands streams over.

    A `GET` with `Last-Event-ID` is refused in words when its session belongs to
    another replica (404) or its event is no longer kept (410); otherwise the
    call's stream is handed to it. Every request carries the `Resumptions`.
    """

    def __init__(self, app: ASGIApp, resumptions: Resumptions) -> None:
        self.app = app
        self.resumptions = resumptions

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        scope[RESUMPTIONS] = self.resumptions
        headers = dict(scope.get("headers") or [])
        last = headers.get(LAST_EVENT_ID_HEADER.encode())
        session = headers.get(MCP_SESSION_ID_HEADER.encode())
        if scope["method"] != "GET" or not last or not session:
            await self.app(scope, receive, send)
            return
        refusal = await self._check(session.decode("latin-1"), last.decode("latin-1"), scope)
        if refusal is not None:
            for message in refusal:
                await send(message)
            return
        await self.app(scope, receive, send)

    async def _check(
        self, session: str, last: str, scope: Scope
    ) -> tuple[dict[str, Any], dict[str, Any]] | None:
        owner, dot, _ = session.partition(".")
        if dot:
            logger.warning("refused a resumption of a session of replica %r", owner[:32])
            return _refusal(
                404,
                f"this stream's session was opened by replica {owner[:32]!r}, not by this one;"
                " a session lives in the replica that opened it, so a resumption (GET with"
                " Last-Event-ID) must reach that replica: route requests by the replica name"
                " that starts the Mcp-Session-Id (see the deploy guide). If that replica is"
                " gone, its calls are lost: open a new session and call the tool again",
            )
        found = await self.resumptions.log.after(session, last)
        if found is None:
            bounds = self.resumptions.settings
            return _refusal(
                410,
                f"the events after Last-Event-ID {last[:80]!r} are not kept for this session:"
                f" a stream's last {bounds.max_events} events are kept for {bounds.ttl_s:g} s"
                f" after its last one, {bounds.max_streams} streams at most (serve.resume);"
                " call the tool again",
            )
        gone = scope.get(DISCONNECTED)
        if isinstance(gone, anyio.Event):
            await self.resumptions.resumed(session, found.stream, gone)
        return None
