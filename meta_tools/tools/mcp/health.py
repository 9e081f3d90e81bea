"""Whether an MCP session's transport still works: the only judge of "the connection was lost".

The transport is watched where it breaks (the server's stream ends, a write fails,
an HTTP request or response body breaks off), never through error replies, which
a server may send for its own reasons. This module is the one place that uses the
SDK's private transport types (`Transport`, `TransportStreams`, `ReadStream`) and
its HTTP client defaults.
"""

from __future__ import annotations

from collections.abc import AsyncIterator, Callable
from types import TracebackType
from typing import Any, cast

import anyio
import httpx2
from mcp.client._transport import Transport, TransportStreams
from mcp.shared._httpx_utils import create_mcp_http_client
from mcp.shared._stream_protocols import ReadStream
from mcp.shared.message import SessionMessage

from ...support.lifecycle import AsyncCloseable

__all__ = [
    "Transport",
    "TransportHealth",
    "TransportStreams",
    "WatchedTransport",
    "watched_http_client",
]


class TransportHealth:
    """How often one session's transport failed: the only source of "the connection was lost".

    An error *reply* never counts, whatever its code: a server may answer
    `-32000` (the SDK's own "connection closed") or `-32001` ("request
    timeout") for its own reasons. What counts is the transport itself: the
    server's stream ended, a write to it failed, or (HTTP) a request or a
    response body broke off.
    """

    def __init__(self) -> None:
        self.failures = 0

    def failed(self) -> None:
        self.failures += 1


def _counts(exc: BaseException) -> bool:
    """A transport error that means the server is gone (a slow answer is left to our deadline)."""
    return isinstance(exc, httpx2.TransportError) and not isinstance(exc, httpx2.TimeoutException)


class _WatchedBody(httpx2.AsyncByteStream):
    def __init__(self, inner: Any, health: TransportHealth) -> None:
        self._inner = inner
        self._health = health

    async def __aiter__(self) -> AsyncIterator[bytes]:
        try:
            async for chunk in self._inner:
                yield chunk
        except BaseException as exc:
            if _counts(exc):
                self._health.failed()
            raise

    async def aclose(self) -> None:
        await self._inner.aclose()


class _WatchedHttp(httpx2.AsyncBaseTransport):
    """An HTTP transport that reports broken requests and response bodies to `health`."""

    def __init__(self, health: TransportHealth) -> None:
        self._inner = httpx2.AsyncHTTPTransport()
        self._health = health

    async def handle_async_request(self, request: httpx2.Request) -> httpx2.Response:
        try:
            response = await self._inner.handle_async_request(request)
        except BaseException as exc:
            if _counts(exc):
                self._health.failed()
            raise
        response.stream = _WatchedBody(response.stream, self._health)
        return response

    async def aclose(self) -> None:
        await self._inner.aclose()


def watched_http_client(
    health: TransportHealth | None, headers: dict[str, str] | None, timeout: httpx2.Timeout
) -> httpx2.AsyncClient:
    """An HTTP client for an MCP session whose broken requests count in `health` (if given)."""
    if health is None:
        return create_mcp_http_client(headers=headers, timeout=timeout)
    return httpx2.AsyncClient(headers=headers, timeout=timeout, transport=_WatchedHttp(health))


class _WatchedRead(AsyncCloseable):
    """Delegates to a read stream and reports when it ends."""

    def __init__(self, inner: ReadStream[SessionMessage | Exception], on_end: Callable[[], None]):
        self._inner = inner
        self._on_end = on_end

    def __getattr__(self, name: str) -> Any:  # e.g. `last_context` of context-aware streams
        return getattr(self._inner, name)

    async def receive(self) -> SessionMessage | Exception:
        try:
            return await self._inner.receive()
        except (anyio.EndOfStream, anyio.ClosedResourceError, anyio.BrokenResourceError):
            self._on_end()
            raise

    async def aclose(self) -> None:
        await self._inner.aclose()

    def __aiter__(self) -> _WatchedRead:
        return self

    async def __anext__(self) -> SessionMessage | Exception:
        try:
            return await self.receive()
        except anyio.EndOfStream:
            raise StopAsyncIteration from None


class _WatchedWrite(AsyncCloseable):
    """Delegates to a write stream and reports when a send finds it broken."""

    def __init__(self, inner: Any, on_end: Callable[[], None]) -> None:
        self._inner = inner
        self._on_end = on_end

    def __getattr__(self, name: str) -> Any:
        return getattr(self._inner, name)

    async def send(self, item: Any) -> None:
        try:
            await self._inner.send(item)
        except (anyio.BrokenResourceError, anyio.ClosedResourceError):
            self._on_end()
            raise

    async def aclose(self) -> None:
        await self._inner.aclose()


class WatchedTransport:
    """A transport that calls `on_end` when the server's side ends (a crash) or breaks on a write."""

    def __init__(self, inner: Transport, on_end: Callable[[], None]) -> None:
        self._inner = inner
        self._on_end = on_end

    async def __aenter__(self) -> TransportStreams:
        read, write = await self._inner.__aenter__()
        return _WatchedRead(read, self._on_end), cast(Any, _WatchedWrite(write, self._on_end))

    async def __aexit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> bool | None:
        return await self._inner.__aexit__(exc_type, exc, tb)
