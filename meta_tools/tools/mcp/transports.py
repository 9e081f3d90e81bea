"""The transport to an MCP server: stdio parameters, a URL, or a transport factory."""

from __future__ import annotations

from collections.abc import AsyncIterator, Callable, Mapping
from contextlib import AbstractAsyncContextManager, asynccontextmanager
from dataclasses import dataclass, field
from typing import Literal

import httpx2
from mcp import StdioServerParameters
from mcp.client.sse import sse_client
from mcp.client.stdio import stdio_client
from mcp.client.streamable_http import streamable_http_client

from .health import Transport, TransportHealth, TransportStreams, watched_http_client
from .stderr import StderrTail

__all__ = [
    "HttpTransportFactory",
    "TransportTarget",
    "open_transport",
    "streamable_http_transport",
]


@asynccontextmanager
async def streamable_http_transport(
    url: str,
    *,
    health: TransportHealth | None = None,
    headers: dict[str, str] | None = None,
    timeout_s: float = 30.0,
    auth: httpx2.Auth | None = None,
) -> AsyncIterator[TransportStreams]:
    """A streamable-HTTP transport whose HTTP failures are counted in `health`."""
    timeout = httpx2.Timeout(timeout_s, read=max(timeout_s, 300.0))
    async with watched_http_client(health, headers, timeout) as http:
        if auth is not None:
            http.auth = auth
        async with streamable_http_client(url, http_client=http) as streams:
            yield streams


@dataclass(frozen=True)
class HttpTransportFactory:
    """A fresh transport per session for an HTTP MCP server (streamable HTTP or SSE).

    Attributes:
        transport: `"streamable_http"` or the legacy `"sse"`.
        url: the server's endpoint.
        headers: sent with every request.
        timeout_s: seconds per request (a streamed read may take up to 300 s).
        auth: makes a fresh `httpx2.Auth` per session (e.g. `OAuthLogin`, a stored OAuth
            login); its `Authorization` header is added beside `headers`.
    """

    transport: Literal["streamable_http", "sse"]
    url: str
    headers: Mapping[str, str] = field(default_factory=dict)
    timeout_s: float = 30.0
    auth: Callable[[], httpx2.Auth] | None = None

    def __call__(
        self, health: TransportHealth | None = None
    ) -> AbstractAsyncContextManager[TransportStreams]:
        auth = self.auth() if self.auth is not None else None
        if self.transport == "sse":
            timeout_s = self.timeout_s

            def factory(
                headers: dict[str, str] | None = None,
                timeout: httpx2.Timeout | None = None,
                auth: httpx2.Auth | None = None,
            ) -> httpx2.AsyncClient:
                chosen = timeout or httpx2.Timeout(timeout_s, read=300.0)
                client = watched_http_client(health, headers, chosen)
                if auth is not None:
                    client.auth = auth
                return client

            return sse_client(
                self.url,
                headers=dict(self.headers),
                timeout=self.timeout_s,
                httpx_client_factory=factory,
                auth=auth,
            )
        return streamable_http_transport(
            self.url, health=health, headers=dict(self.headers), timeout_s=self.timeout_s, auth=auth
        )


TransportTarget = StdioServerParameters | str | HttpTransportFactory | Callable[[], Transport]
"""Stdio parameters, a streamable-HTTP URL, an HTTP transport factory, or a transport factory."""


def open_transport(
    target: TransportTarget, server: str, health: TransportHealth
) -> tuple[Transport, StderrTail | None]:
    """A new transport to `target` whose failures count in `health`, and a stdio server's stderr."""
    if isinstance(target, StdioServerParameters):
        stderr = StderrTail(server)
        return stdio_client(target, errlog=stderr.writer()), stderr
    if isinstance(target, str):
        return streamable_http_transport(target, health=health), None
    if isinstance(target, HttpTransportFactory):
        return target(health), None
    return target(), None
