"""Plumbing for MCP sources: a server's stderr tail, end-of-stream detection, results as values."""

from __future__ import annotations

import logging
import os
import threading
from collections import deque
from collections.abc import AsyncIterator, Callable, Mapping
from contextlib import AbstractAsyncContextManager, asynccontextmanager
from dataclasses import dataclass, field
from types import TracebackType
from typing import IO, Any, Literal, TextIO, cast

import anyio
import anyio.to_thread
import httpx2
import mcp_types
from mcp import MCPError
from mcp.client._transport import Transport, TransportStreams
from mcp.client.sse import sse_client
from mcp.client.streamable_http import streamable_http_client
from mcp.shared._httpx_utils import create_mcp_http_client
from mcp.shared._stream_protocols import ReadStream
from mcp.shared.message import SessionMessage
from pydantic import ValidationError

from ..._lifecycle import AsyncCloseable
from ...exceptions import ToolError, ToolExecutionError, ToolUnavailableError

__all__ = [
    "CALL_FAILURES",
    "HttpTransportFactory",
    "StderrTail",
    "TransportHealth",
    "WatchedTransport",
    "call_failure",
    "describe_failure",
    "result_value",
    "streamable_http_transport",
]

logger = logging.getLogger("meta_tools.mcp")

_TAIL_LINES = 20


class StderrTail:
    """A pipe for a subprocess's stderr that keeps its last lines (for error messages).

    A daemon thread reads the pipe, logs each line at DEBUG and keeps the last
    `_TAIL_LINES`; it ends at EOF, when the process and our copy of the write
    end are both closed.
    """

    def __init__(self, server: str) -> None:
        self._server = server
        self._lines: deque[str] = deque(maxlen=_TAIL_LINES)
        self._done = threading.Event()
        self._logging = True  # off once the session ends: late lines are kept, not logged
        read_fd, write_fd = os.pipe()
        self._writer: TextIO | None = cast(TextIO, os.fdopen(write_fd, "w", encoding="utf-8"))
        reader = os.fdopen(read_fd, "r", encoding="utf-8", errors="replace")
        thread = threading.Thread(
            target=self._drain, args=(reader,), name=f"mcp-stderr-{server}", daemon=True
        )
        thread.start()

    def writer(self) -> TextIO:
        """The write end to hand to the subprocess (ours is closed by `close_writer`)."""
        assert self._writer is not None
        return self._writer

    def stop_logging(self) -> None:
        self._logging = False

    def close_writer(self) -> None:
        """Drop our copy of the write end once the process holds its own."""
        if self._writer is not None:
            self._writer.close()
            self._writer = None

    def _drain(self, reader: IO[str]) -> None:
        with reader:
            for line in reader:
                text = line.rstrip()
                if text:
                    self._lines.append(text)
                    if self._logging:
                        logger.debug("MCP server %r stderr: %s", self._server, text)
        self._done.set()

    async def text(self, *, wait_s: float = 0.5) -> str:
        """The last lines; waits briefly for a dying process's last words."""
        self.close_writer()
        await anyio.to_thread.run_sync(self._done.wait, wait_s)
        return "\n".join(self._lines)


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


def _http_client(
    health: TransportHealth | None, headers: dict[str, str] | None, timeout: httpx2.Timeout
) -> httpx2.AsyncClient:
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


def _leaves(exc: BaseException) -> list[BaseException]:
    inner = getattr(exc, "exceptions", None)  # an exception group (duck-typed for Python 3.10)
    if isinstance(inner, tuple):
        return [leaf for member in inner for leaf in _leaves(member)]
    return [exc]


def describe_failure(exc: BaseException, stderr: str = "") -> str:
    """One line saying why a session could not be opened, plus the server's last stderr."""
    leaves = [e for e in _leaves(exc) if not isinstance(e, anyio.get_cancelled_exc_class())]
    first = leaves[0] if leaves else exc
    if isinstance(first, FileNotFoundError):
        reason = f"the command was not found ({first.filename or first})"
    elif isinstance(first, PermissionError):
        reason = f"the command cannot be run: {first.strerror}"
    elif isinstance(first, MCPError) and first.code == mcp_types.CONNECTION_CLOSED:
        reason = "the server closed the connection during the handshake (did it exit?)"
    elif isinstance(first, MCPError):
        reason = f"the server answered the handshake with an error: {first.message}"
    elif isinstance(first, TimeoutError):
        reason = str(first) or "the handshake timed out"
    elif isinstance(first, httpx2.ConnectError):
        reason = f"cannot connect: {first}"
    elif isinstance(first, httpx2.HTTPStatusError):
        reason = f"HTTP {first.response.status_code} from {first.request.url}"
    else:
        reason = f"{type(first).__name__}: {first}"
    if stderr:
        reason += f"; its stderr ended with:\n{stderr}"
    return reason


def _describe_block(block: mcp_types.ContentBlock) -> str:
    if isinstance(block, mcp_types.TextContent):
        return block.text
    if isinstance(block, mcp_types.ImageContent | mcp_types.AudioContent):
        kind = "image" if isinstance(block, mcp_types.ImageContent) else "audio"
        return f"[{kind} {block.mime_type}, {len(block.data)} base64 characters]"
    if isinstance(block, mcp_types.EmbeddedResource):
        resource = block.resource
        if isinstance(resource, mcp_types.TextResourceContents):
            return resource.text
        return f"[resource {resource.uri} ({resource.mime_type or 'binary'})]"
    if isinstance(block, mcp_types.ResourceLink):
        return f"[resource link {block.uri}]"
    return f"[{type(block).__name__}]"


def result_value(result: mcp_types.CallToolResult, *, text_only: bool = False) -> Any:
    """The structured content when present (and wanted), else the content as text."""
    if not text_only and result.structured_content is not None:
        return result.structured_content
    return "\n".join(_describe_block(block) for block in result.content)


@asynccontextmanager
async def streamable_http_transport(
    url: str,
    *,
    health: TransportHealth | None = None,
    headers: dict[str, str] | None = None,
    timeout_s: float = 30.0,
) -> AsyncIterator[TransportStreams]:
    """A streamable-HTTP transport whose HTTP failures are counted in `health`."""
    timeout = httpx2.Timeout(timeout_s, read=max(timeout_s, 300.0))
    async with (
        _http_client(health, headers, timeout) as http,
        streamable_http_client(url, http_client=http) as streams,
    ):
        yield streams


@dataclass(frozen=True)
class HttpTransportFactory:
    """A fresh transport per session for an HTTP MCP server (streamable HTTP or SSE).

    Attributes:
        transport: `"streamable_http"` or the legacy `"sse"`.
        url: the server's endpoint.
        headers: sent with every request.
        timeout_s: seconds per request (a streamed read may take up to 300 s).
    """

    transport: Literal["streamable_http", "sse"]
    url: str
    headers: Mapping[str, str] = field(default_factory=dict)
    timeout_s: float = 30.0

    def __call__(
        self, health: TransportHealth | None = None
    ) -> AbstractAsyncContextManager[TransportStreams]:
        if self.transport == "sse":
            timeout_s = self.timeout_s

            def factory(
                headers: dict[str, str] | None = None,
                timeout: httpx2.Timeout | None = None,
                auth: httpx2.Auth | None = None,
            ) -> httpx2.AsyncClient:
                chosen = timeout or httpx2.Timeout(timeout_s, read=300.0)
                client = _http_client(health, headers, chosen)
                if auth is not None:
                    client.auth = auth
                return client

            return sse_client(
                self.url,
                headers=dict(self.headers),
                timeout=self.timeout_s,
                httpx_client_factory=factory,
            )
        return streamable_http_transport(
            self.url, health=health, headers=dict(self.headers), timeout_s=self.timeout_s
        )


CALL_FAILURES = (
    MCPError,
    ValidationError,
    httpx2.HTTPError,
    OSError,
    anyio.BrokenResourceError,
    anyio.ClosedResourceError,
)
"""What a call on an open session may raise (anything else is a bug and propagates)."""


def call_failure(
    exc: BaseException, server: str, tool: str, *, lost: bool
) -> tuple[ToolError, str | None]:
    """The tool error for a failed call, and why the session is broken (None: it is not).

    `lost` is the transport's state (see `TransportHealth`). An error reply from a
    live server is a tool error carrying its message, whatever its code.
    """
    if lost:
        gone = f"MCP server {server!r} closed the connection while {tool!r} was running;"
        return (
            ToolUnavailableError(f"{gone} it is reconnected on the next call"),
            "the connection closed during a call",
        )
    if isinstance(exc, MCPError):
        refused = f"MCP server {server!r} answered the call to {tool!r} with an error"
        return ToolExecutionError(f"{refused} ({exc.code}): {exc.message}"), None
    if isinstance(exc, ValidationError):
        invalid = f"MCP server {server!r} returned an invalid result for {tool!r}"
        return ToolExecutionError(f"{invalid}: {exc.error_count()} problem(s)"), None
    unreachable = f"MCP server {server!r} could not be reached during {tool!r}: {exc}"
    return ToolUnavailableError(unreachable), f"the transport failed ({type(exc).__name__})"
