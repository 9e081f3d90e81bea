"""The router as an MCP server: exactly the category tools, over stdio or streamable HTTP.

For the CLI (`meta_tools/cli/`), the one entry point is:

    async def serve(
        router: MetaManager | MetaToolsConfig | str | os.PathLike[str],
        *,
        transport: Literal["stdio", "http"] = "stdio",
        host: str = "127.0.0.1",
        port: int = 8000,                   # 0 picks a free port
        token: str | None = None,           # HTTP: require "Authorization: Bearer <token>"
        path: str = "/mcp",
        max_body_bytes: int = 1_048_576,    # HTTP: larger request bodies get 413
        task_status: TaskStatus[str] = anyio.TASK_STATUS_IGNORED,  # started(url or "stdio")
    ) -> None

`serve` enters the router (`async with`), serves until stdin closes (stdio) or
it is cancelled / gets SIGINT (HTTP), then closes the router. A config whose
`model.provider` is `"sampling"` gets a `SamplingChatModel` (the host's model).

Each category tool returns its `CategoryResult` as JSON text and as structured
content; status `failed` sets `isError`. Every step is reported as MCP
progress. A cancelled call cancels its running tools. Clients are kept apart:
each call's category memory is keyed by the client (HTTP session, legacy
connection, the stdio peer, or a `_meta["meta-tools/session"]` key the client
sends, namespaced by the bearer token or, without one, the connection); a
2026-07-28 HTTP call without that key has no memory across calls (its
unvalidated `Mcp-Session-Id` header is ignored).
"""

from __future__ import annotations

import contextlib
import json
import logging
import os
import signal
import socket
import threading
import uuid
import weakref
from collections.abc import AsyncIterator, Awaitable, Callable, Iterator, Mapping
from contextlib import asynccontextmanager
from types import FrameType
from typing import Any, Literal

import anyio
import mcp_types
from anyio.abc import TaskStatus
from mcp.server import Server, ServerRequestContext
from mcp.server.connection import Connection
from mcp.server.lowlevel.server import NotificationOptions
from mcp.server.request_state import RequestStateBoundary, RequestStateSecurity
from mcp.server.stdio import stdio_server
from mcp.server.subscriptions import InMemorySubscriptionBus, ListenHandler, ToolsListChanged
from mcp_types.version import MODERN_PROTOCOL_VERSIONS

from .. import __version__
from ..category.result import CategoryResult
from ..config import MetaToolsConfig
from ..exceptions import CategoryNotFoundError, ClosedError, ToolArgumentsError
from ..llm.sampling import (
    SamplingChatModel,
    host_supports_tool_sampling,
    sampling_host,
    unsupported_message,
)
from ..router.manager import MetaManager
from .disconnect import cancel_on_disconnect
from .http import BearerTokenMiddleware, connection_of, http_app, token_holder
from .sampling import LegacyHost, Progress, SuspendedRuns, error_result

__all__ = ["SESSION_META_KEY", "BearerTokenMiddleware", "build_server", "http_app", "serve"]

logger = logging.getLogger("meta_tools.server")

SESSION_META_KEY = "meta-tools/session"
"""A `_meta` key a client may send to keep its category memory across stateless calls."""

INSTRUCTIONS = (
    "Each tool is a category of concrete tools. Call it with `objective` (the goal) and "
    "`exact_input` (every value it needs); it picks and runs the right tools itself and returns "
    "a JSON result with a status, a summary and the tool calls it made."
)


def _to_result(result: CategoryResult) -> mcp_types.CallToolResult:
    text = result.to_json()
    return mcp_types.CallToolResult(
        content=[mcp_types.TextContent(text=text)],
        structured_content=json.loads(text),
        is_error=result.status == "failed",
    )


class _ConnectionIds:
    """A stable id per legacy connection (its `initialize` params live as long as it does)."""

    def __init__(self) -> None:
        self._ids: dict[int, str] = {}

    def key_for(self, marker: object) -> str:
        found = self._ids.get(id(marker))
        if found is None:
            found = self._ids[id(marker)] = f"conn:{uuid.uuid4().hex}"
            weakref.finalize(marker, self._ids.pop, id(marker), None)
        return found


class _Handlers:
    """The MCP request handlers over one MetaManager."""

    def __init__(self, meta: MetaManager, default_session: str | None) -> None:
        self.meta = meta
        self.default_session = default_session
        self._connections = _ConnectionIds()
        self._legacy_connections: weakref.WeakSet[Connection] = weakref.WeakSet()
        self.events = InMemorySubscriptionBus()
        self._output_schema = CategoryResult.model_json_schema()

    def _track(self, ctx: ServerRequestContext[Any, Any]) -> None:
        """Remember legacy connections: they get `tools/list_changed` as a notification."""
        if ctx.protocol_version not in MODERN_PROTOCOL_VERSIONS:
            # The lowlevel context exposes no public handle on the connection; the
            # weak set forgets it when the client is gone.
            self._legacy_connections.add(ctx.session._connection)

    async def announce_tools_changed(self) -> None:
        """Tell every client that the category tools changed (after a hot reload).

        2026-07-28 clients hear it on their `subscriptions/listen` stream; legacy
        connections get a notification. A client that went away is skipped.
        """
        await self.events.publish(ToolsListChanged())
        for connection in list(self._legacy_connections):
            try:
                await connection.send_tool_list_changed()
            except (anyio.ClosedResourceError, anyio.BrokenResourceError) as exc:
                logger.debug("tools/list_changed not delivered to a closed session: %r", exc)

    async def list_tools(
        self, ctx: ServerRequestContext[Any, Any], params: mcp_types.PaginatedRequestParams | None
    ) -> mcp_types.ListToolsResult:
        self._track(ctx)
        tools = [
            tool.model_copy(update={"output_schema": self._output_schema})
            for tool in self.meta.list_tools()
        ]
        return mcp_types.ListToolsResult(tools=tools)

    def session_key(
        self, ctx: ServerRequestContext[Any, Any], params: mcp_types.CallToolRequestParams
    ) -> str | None:
        """Whose category memory this call uses (see the module docstring); None: no memory.

        Only identities the server has checked count: a legacy HTTP session (the SDK
        validates its `Mcp-Session-Id`), a legacy connection, the stdio peer. A
        2026-07-28 request's `Mcp-Session-Id` is not validated, so it is ignored. A
        client-chosen `_meta` key is namespaced by who sends it: the bearer token's
        holder, else the checked peer, else the connection, so two clients saying "main"
        stay apart.
        """
        meta: Mapping[str, Any] = params.meta or {}
        chosen = meta.get(SESSION_META_KEY)
        legacy = ctx.protocol_version not in MODERN_PROTOCOL_VERSIONS
        peer: str | None = self.default_session
        if legacy:
            headers = getattr(ctx.request, "headers", None)
            http_session = headers.get("mcp-session-id") if headers is not None else None
            if http_session:
                peer = f"http:{http_session}"
            elif ctx.session.client_params:
                peer = self._connections.key_for(ctx.session.client_params)
        if not (isinstance(chosen, str) and chosen):
            return peer
        # Per token holder; else per checked peer (legacy session, stdio); else per connection.
        owner = token_holder(ctx.request) or peer or connection_of(ctx.request)
        return f"{owner}:{chosen[:200]}" if owner else None

    async def call_tool(
        self, ctx: ServerRequestContext[Any, Any], params: mcp_types.CallToolRequestParams
    ) -> mcp_types.CallToolResult | mcp_types.InputRequiredResult:
        self._track(ctx)
        arguments = dict(params.arguments or {})
        try:
            checked = self.meta.check_call(params.name, arguments)
        except (CategoryNotFoundError, ToolArgumentsError) as exc:
            return error_result(str(exc))
        session = self.session_key(ctx, params)

        async def call(progress: Progress) -> mcp_types.CallToolResult:
            try:
                result = await self.meta.run(checked, session=session, on_event=progress)
            except ClosedError as exc:
                return error_result(str(exc))
            return _to_result(result)

        if not isinstance(checked.category.model, SamplingChatModel):
            return await _until_gone(ctx, lambda: call(Progress(ctx)))
        capabilities = ctx.session.client_capabilities
        if not host_supports_tool_sampling(capabilities):
            return error_result(unsupported_message(capabilities))
        if ctx.protocol_version in MODERN_PROTOCOL_VERSIONS:
            runs: SuspendedRuns = ctx.lifespan_context["runs"]
            return await runs.step(ctx, params, call)
        with sampling_host(LegacyHost(ctx)):
            return await _until_gone(ctx, lambda: call(Progress(ctx)))


async def _until_gone(
    ctx: ServerRequestContext[Any, Any], run: Callable[[], Awaitable[mcp_types.CallToolResult]]
) -> mcp_types.CallToolResult:
    """Run a call; on a legacy HTTP session, cancel it when its client disconnects.

    (2026-07-28 requests are cancelled by the SDK itself.)
    """
    if ctx.protocol_version in MODERN_PROTOCOL_VERSIONS:
        return await run()
    result = await cancel_on_disconnect(ctx.request, run)
    if result is None:
        logger.info("a client disconnected mid-call; its run was cancelled")
        return error_result("the client disconnected; the call was cancelled")
    return result


def build_server(
    meta: MetaManager,
    *,
    name: str = "meta-tools",
    default_session: str | None = None,
    max_suspended_runs: int = 128,
    suspended_run_ttl_s: float = 300.0,
) -> Server[dict[str, Any]]:
    """The low-level MCP server exposing exactly `meta`'s category tools.

    Args:
        meta: the router (started and closed by the caller).
        name: the server's name (also the audience of its sealed `request_state`).
        default_session: the memory key of a client that has no other identity
            (stdio has exactly one client).
        max_suspended_runs: 2026-07-28 sampling calls that may wait for their host at once.
        suspended_run_ttl_s: how long such a call waits for its host to come back.
    """
    handlers = _Handlers(meta, default_session)

    @asynccontextmanager
    async def lifespan(_: Server[dict[str, Any]]) -> AsyncIterator[dict[str, Any]]:
        runs = SuspendedRuns(max_runs=max_suspended_runs, ttl_s=suspended_run_ttl_s)
        unsubscribe = meta.on_categories_changed(handlers.announce_tools_changed)
        try:
            async with runs.running():
                yield {"runs": runs}
        finally:
            unsubscribe()

    server: Server[dict[str, Any]] = Server(
        name,
        version=__version__,
        instructions=INSTRUCTIONS,
        lifespan=lifespan,
        on_list_tools=handlers.list_tools,
        on_call_tool=handlers.call_tool,
        on_subscriptions_listen=ListenHandler(handlers.events),
    )
    # Seal the request_state of suspended runs (integrity, expiry, bound to the request).
    security = RequestStateSecurity.ephemeral(ttl=suspended_run_ttl_s)
    server.middleware.append(RequestStateBoundary(security, default_audience=name))
    return server


def _router(router: MetaManager | MetaToolsConfig | str | os.PathLike[str]) -> MetaManager:
    if isinstance(router, MetaManager):
        return router
    return MetaManager.from_config(router)


async def serve(
    router: MetaManager | MetaToolsConfig | str | os.PathLike[str],
    *,
    transport: Literal["stdio", "http"] = "stdio",
    host: str = "127.0.0.1",
    port: int = 8000,
    token: str | None = None,
    path: str = "/mcp",
    max_body_bytes: int = 1_048_576,
    task_status: TaskStatus[str] = anyio.TASK_STATUS_IGNORED,
) -> None:
    """Serve the router's category tools over MCP until stdin closes or this is cancelled.

    Raises:
        ConfigError: the config (or its tool lists against the MCP servers) is invalid.
        OSError: the HTTP port cannot be bound.
    """
    meta = _router(router)
    if token:
        meta.add_secrets([token])  # never shown, also when given on the command line
    caught: list[int] = []
    async with meta:
        if transport == "stdio":
            server = build_server(meta, default_session=f"stdio:{uuid.uuid4().hex}")
            async with stdio_server() as (read, write):
                task_status.started("stdio")
                options = server.create_initialization_options(
                    notification_options=NotificationOptions(tools_changed=True)
                )
                await server.run(read, write, options)
            return
        await _serve_http(meta, host, port, token, path, max_body_bytes, task_status, caught)
    # Only now that every MCP session and subprocess is closed: let the signal act.
    for number in reversed(caught):
        signal.raise_signal(number)


async def _serve_http(
    meta: MetaManager,
    host: str,
    port: int,
    token: str | None,
    path: str,
    max_body_bytes: int,
    task_status: TaskStatus[str],
    caught: list[int],
) -> None:
    import uvicorn

    class GracefulServer(uvicorn.Server):
        """uvicorn that records SIGINT/SIGTERM instead of re-raising them on shutdown.

        uvicorn re-raises a caught signal as soon as it stops, which would kill
        the process before the router closes its MCP sessions; `serve` re-raises
        them after that.
        """

        def handle_exit(self, sig: int, frame: FrameType | None) -> None:
            caught.append(sig)
            super().handle_exit(sig, frame)

        @contextlib.contextmanager
        def capture_signals(self) -> Iterator[None]:
            if threading.current_thread() is not threading.main_thread():
                yield
                return
            handled = (signal.SIGINT, signal.SIGTERM)
            previous = {sig: signal.signal(sig, self.handle_exit) for sig in handled}
            try:
                yield
            finally:
                for sig, handler in previous.items():
                    signal.signal(sig, handler)

    app = http_app(
        build_server(meta), host=host, token=token, path=path, max_body_bytes=max_body_bytes
    )
    sock = socket.socket(socket.AF_INET6 if ":" in host else socket.AF_INET)
    try:
        sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        sock.bind((host, port))
        sock.listen(128)
    except OSError as exc:
        sock.close()  # a taken port must not leak the socket
        raise OSError(exc.errno, f"cannot listen on {host}:{port}: {exc.strerror}") from exc
    bound = sock.getsockname()[1]
    shown = f"[{host}]" if ":" in host else host
    config = uvicorn.Config(app, log_level="warning", lifespan="on", timeout_graceful_shutdown=5)
    server = GracefulServer(config)

    async def run() -> None:
        with anyio.CancelScope(shield=True):  # a cancelled serve() still shuts down gracefully
            await server.serve(sockets=[sock])
        group.cancel_scope.cancel()  # uvicorn stopped by itself (e.g. SIGINT)

    try:
        async with anyio.create_task_group() as group:
            group.start_soon(run)
            task_status.started(f"http://{shown}:{bound}{path}")
            try:
                await anyio.sleep_forever()
            finally:
                server.should_exit = True
    finally:
        sock.close()
