"""The transport to an MCP server, from its `mcp_servers` entry or a target given in code."""

from __future__ import annotations

import sys
from collections.abc import AsyncIterator, Callable
from contextlib import AbstractAsyncContextManager, asynccontextmanager
from pathlib import Path

import httpx2
from mcp import StdioServerParameters
from mcp.client.sse import sse_client
from mcp.client.stdio import stdio_client
from mcp.client.streamable_http import streamable_http_client

from ...config import HttpServerConfig, StdioServerConfig
from .health import Transport, TransportHealth, TransportStreams, watched_http_client
from .stderr import StderrTail

__all__ = [
    "HttpTransportFactory",
    "TransportTarget",
    "http_transport_factory",
    "open_transport",
    "stdio_parameters",
    "streamable_http_transport",
]


def stdio_parameters(config: StdioServerConfig, base_dir: str) -> StdioServerParameters:
    """`command: "python"` (or `"python3"`) is the router's own interpreter; `cwd` is config-relative."""
    command = sys.executable if config.command in ("python", "python3") else config.command
    cwd = None if config.cwd is None else str((Path(base_dir) / config.cwd).resolve())
    env = dict(config.env) or None
    return StdioServerParameters(command=command, args=list(config.args), env=env, cwd=cwd)


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
        watched_http_client(health, headers, timeout) as http,
        streamable_http_client(url, http_client=http) as streams,
    ):
        yield streams


class HttpTransportFactory:
    """A fresh transport per session for an HTTP `mcp_servers` entry (headers, timeout)."""

    def __init__(self, config: HttpServerConfig) -> None:
        self.config = config

    def __call__(
        self, health: TransportHealth | None = None
    ) -> AbstractAsyncContextManager[TransportStreams]:
        config = self.config
        if config.transport == "sse":

            def factory(
                headers: dict[str, str] | None = None,
                timeout: httpx2.Timeout | None = None,
                auth: httpx2.Auth | None = None,
            ) -> httpx2.AsyncClient:
                chosen = timeout or httpx2.Timeout(config.timeout_s, read=300.0)
                client = watched_http_client(health, headers, chosen)
                if auth is not None:
                    client.auth = auth
                return client

            return sse_client(
                config.url,
                headers=dict(config.headers),
                timeout=config.timeout_s,
                httpx_client_factory=factory,
            )
        return streamable_http_transport(
            config.url, health=health, headers=dict(config.headers), timeout_s=config.timeout_s
        )


def http_transport_factory(config: HttpServerConfig) -> HttpTransportFactory:
    """A fresh transport per session, with the configured headers and timeout."""
    return HttpTransportFactory(config)


TransportTarget = StdioServerParameters | str | HttpTransportFactory | Callable[[], Transport]
"""Stdio parameters, a streamable-HTTP URL, an `mcp_servers` HTTP entry, or a transport factory."""


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
