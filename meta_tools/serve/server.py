"""The router as an MCP server: exactly the category tools, over stdio or streamable HTTP.

The entry point is `serve` (used by `meta-tools serve`); `build_server` and
`http_app` give the pieces for embedding.

`serve` enters the router (`async with`), serves until stdin closes (stdio) or
it is cancelled / gets SIGINT (HTTP), then closes the router. A config whose
`model.provider` is `"sampling"` gets a `SamplingChatModel` (the host's model); so does
a category whose model wraps one (`RecoveringModel(SamplingChatModel())`).

Each category tool returns its `CategoryResult` as JSON text and as structured
content; status `failed` sets `isError`. Every step is reported as MCP
progress, and a call whose host asked for progress reports at least every
`progress_every_s` seconds, also while its model thinks (hosts that reset their
timeout on progress keep waiting). A cancelled call cancels its running tools.
Clients are kept apart: each call's category memory is keyed by an identity
the server checked (`sessions`); a 2026-07-28 HTTP call without a token has none.

A host may send the user's own words with a call, `_meta["meta-tools/request"]`
(`REQUEST_META_KEY`): the category ranks its shortlist for them too and its model
reads them beside the objective, as with `MetaManager.call_tool(..., request=...)`
(see docs/hosts-request.md).
"""

from __future__ import annotations

import dataclasses
import json
import logging
import os
import signal
import uuid
import weakref
from collections.abc import AsyncIterator, Awaitable, Callable, Iterable, Sequence
from contextlib import asynccontextmanager
from typing import Any, Literal

import anyio
import mcp_types
from anyio.abc import TaskStatus
from mcp.server import Server, ServerRequestContext
from mcp.server.connection import Connection
from mcp.server.stdio import stdio_server
from mcp.server.subscriptions import InMemorySubscriptionBus, ListenHandler, ToolsListChanged
from mcp.shared.message import ServerMessageMetadata
from mcp_types.version import MODERN_PROTOCOL_VERSIONS

from .._version import __version__
from ..category.result import CategoryResult
from ..category.suspend import RunSuspended
from ..config import MemoryConfig, MetaToolsConfig, ResumeConfig, ServeConfig
from ..exceptions import CategoryNotFoundError, ClosedError, ToolArgumentsError
from ..llm.sampling import SamplingChatModel, host_supports_tool_sampling, sampling_host
from ..llm.wrapper import find_model
from ..router.from_config import serving_fallback
from ..router.manager import MAX_ARGUMENT_CHARS, CategoryCall, MetaManager
from ..router.ways_out import ALTERNATIVES, unsupported_message
from ..tools.base import BaseTool
from ..tools.mcp.model_sampling import ModelSampling
from .asks import HostAnswers, passed_up
from .capabilities import RouterServer
from .disconnect import cancel_on_disconnect
from .events import event_log
from .http import (
    BearerTokenMiddleware,
    Listen,
    http_app,
    serve_http,
)
from .progress import PROGRESS_EVERY_S, Progress
from .replay import UsedStates, used_states
from .resume import (
    SAMPLE_KEY,
    DeferredHost,
    Deployment,
    SealedStateBoundary,
    StateCodec,
    StateError,
    answer_of,
    state_keys,
    state_security,
)
from .resumption import resumable
from .sessions import SESSION_META_KEY, SessionKeys
from .unknown import unknown_category_error

__all__ = [
    "REQUEST_META_KEY",
    "SESSION_META_KEY",
    "BearerTokenMiddleware",
    "build_server",
    "http_app",
    "serve",
    "serve_router",
]

logger = logging.getLogger("meta_tools.server")

REQUEST_META_KEY = "meta-tools/request"
"""A `_meta` key a host may send on a category call: the user's request it came from."""

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


class _Handlers:
    """The MCP request handlers over one MetaManager."""

    def __init__(
        self,
        meta: MetaManager,
        sessions: SessionKeys,
        codec: StateCodec,
        *,
        progress_every_s: float = PROGRESS_EVERY_S,
    ) -> None:
        self.meta = meta
        self.sessions = sessions
        self.codec = codec
        self.progress_every_s = progress_every_s
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

    async def call_tool(
        self, ctx: ServerRequestContext[Any, Any], params: mcp_types.CallToolRequestParams
    ) -> mcp_types.CallToolResult | mcp_types.InputRequiredResult:
        self._track(ctx)
        arguments = dict(params.arguments or {})
        try:
            checked = self.meta.check_call(params.name, arguments)
        except CategoryNotFoundError as exc:
            refused = unknown_category_error(ctx.protocol_version, exc)
            if refused is not None:
                raise refused from None
            return error_result(str(exc))
        except ToolArgumentsError as exc:
            return error_result(str(exc))
        request = (params.meta or {}).get(REQUEST_META_KEY)
        if isinstance(request, str) and len(request) <= MAX_ARGUMENT_CHARS:
            checked = dataclasses.replace(checked, request=request)
        elif request is not None:
            return error_result(_request_problem(request))
        session = self.sessions.key_for(ctx, params)
        if find_model(checked.category.model, SamplingChatModel) is None:
            return await _until_gone(ctx, lambda: self._run(checked, session, self._progress(ctx)))
        capabilities = ctx.session.client_capabilities
        if not host_supports_tool_sampling(capabilities):
            return error_result(unsupported_message(capabilities))
        if ctx.protocol_version in MODERN_PROTOCOL_VERSIONS:
            return await self._sampling_round(ctx, params, checked, session)
        with sampling_host(LegacyHost(ctx)):
            return await _until_gone(ctx, lambda: self._run(checked, session, self._progress(ctx)))

    def _progress(self, ctx: ServerRequestContext[Any, Any]) -> Progress:
        return Progress(ctx, every_s=self.progress_every_s)

    async def _run(
        self, checked: CategoryCall, session: str | None, progress: Progress
    ) -> mcp_types.CallToolResult:
        try:
            with passed_up(progress):  # a level-1 server's questions go to this host
                result = await progress.kept_alive(
                    lambda: self.meta.run(checked, session=session, on_event=progress)
                )
        except ClosedError as exc:
            return error_result(str(exc))
        return _to_result(result)

    async def _sampling_round(
        self,
        ctx: ServerRequestContext[Any, Any],
        params: mcp_types.CallToolRequestParams,
        checked: CategoryCall,
        session: str | None,
    ) -> mcp_types.CallToolResult | mcp_types.InputRequiredResult:
        """One request of a 2026-07-28 sampling call: start or go on, until the model is needed.

        `request_state` was unsealed (and checked) by the `SealedStateBoundary`.
        """
        answer = None
        if params.request_state is not None:
            try:
                point = self.codec.load(params.request_state)
                answer = answer_of(params)
            except StateError as exc:
                return error_result(str(exc))
            # The run may be going on in a category that the call was passed on to.
            called = point.declined[0] if point.declined else point.category
            if called != checked.category.name:
                return error_result("this request_state belongs to another category tool")
            try:
                running = self.meta.get_category(point.category)
            except CategoryNotFoundError as exc:
                return error_result(str(exc))
            checked = dataclasses.replace(checked, category=running, resume=point)
            session = point.state.session  # the client's, as sealed in the first round
        host = DeferredHost(answer)
        with sampling_host(host):
            try:
                return await self._run(checked, session, self._progress(ctx))
            except RunSuspended as stopped:
                suspended = stopped
        if host.deferred is None:  # a model of its own deferred, not the host's
            return error_result("the category's model deferred its answer to no MCP client")
        try:
            state = self.codec.dump(suspended.point)
        except StateError as exc:
            return error_result(str(exc))
        # The run stopped before the model call whose sampling request the host kept.
        request = mcp_types.CreateMessageRequest(params=host.deferred)
        return mcp_types.InputRequiredResult(
            input_requests={SAMPLE_KEY: request}, request_state=state
        )


class LegacyHost:
    """The host's model on a legacy connection (2025-11-25): sampled through the client, mid-call.

    (2026-07-28 connections: `resume.DeferredHost`.)
    """

    def __init__(self, ctx: ServerRequestContext[Any, Any]) -> None:
        self._ctx = ctx

    async def create_message(
        self, params: mcp_types.CreateMessageRequestParams
    ) -> mcp_types.CreateMessageResultWithTools:
        return await self._ctx.session.send_request(
            mcp_types.CreateMessageRequest(params=params),
            mcp_types.CreateMessageResultWithTools,
            metadata=ServerMessageMetadata(related_request_id=self._ctx.request_id),
        )


def _request_problem(request: object) -> str:
    """Why a `_meta` request cannot be used: not a string, or too long."""
    if not isinstance(request, str):
        return (
            f"_meta[{REQUEST_META_KEY!r}] must be a string (the user's request), not"
            f" {type(request).__name__}; leave it out when there is none"
        )
    return (
        f"_meta[{REQUEST_META_KEY!r}] has {len(request):,} characters, more than"
        f" {MAX_ARGUMENT_CHARS:,}; send the user's last message, not the conversation"
    )


def error_result(message: str) -> mcp_types.CallToolResult:
    """A tool-level error the calling model can read."""
    return mcp_types.CallToolResult(content=[mcp_types.TextContent(text=message)], is_error=True)


async def _until_gone(
    ctx: ServerRequestContext[Any, Any], run: Callable[[], Awaitable[mcp_types.CallToolResult]]
) -> mcp_types.CallToolResult:
    """Run a call; on a legacy HTTP session, cancel it when its client disconnects for good.

    With resumable streams, for good means: not back within `serve.resume.grace_s`.

    (2026-07-28 requests are cancelled by the SDK itself.)
    """
    if ctx.protocol_version in MODERN_PROTOCOL_VERSIONS:
        return await run()
    stream = resumable(ctx)  # then the client may come back for the result
    if stream is not None:
        result = await stream.until_abandoned(ctx.request, run)
    else:
        result = await cancel_on_disconnect(ctx.request, run)
    if result is None:
        logger.info("a client disconnected mid-call; its run was cancelled")
        return error_result("the client disconnected; the call was cancelled")
    return result


_SERVE = ServeConfig()
"""The `serve` section's defaults, which `build_server` shares."""


def build_server(
    meta: MetaManager,
    *,
    name: str = "meta-tools",
    default_session: str | None = None,
    state_keys: Sequence[str] = (),
    state_ttl_s: float = _SERVE.state_ttl_s,
    max_state_bytes: int = _SERVE.max_state_bytes,
    used_states: UsedStates | None = None,
    progress_every_s: float = PROGRESS_EVERY_S,
) -> Server[dict[str, Any]]:
    """The low-level MCP server exposing exactly `meta`'s category tools.

    Args:
        meta: the router (started and closed by the caller).
        name: the server's name (with a digest of the categories, the deployment
            its sealed `request_state` belongs to).
        default_session: the memory key of a client that has no other identity
            (stdio has exactly one client).
        state_keys: secrets (>= 32 bytes) sealing the `request_state` of 2026-07-28
            sampling calls, shared by every replica (the first seals, all open);
            none: a key of this process only (a single replica).
        state_ttl_s: how long a client may take to answer a sampling request.
        max_state_bytes: the largest `request_state` (compressed run state) sent.
        used_states: where the states already used are remembered (shared by the
            replicas: in Redis); none: in this process.
        progress_every_s: the longest a call goes without a progress notification
            when its host asked for progress (> 0).
    """
    handlers = _Handlers(
        meta,
        SessionKeys(default_session),
        StateCodec(max_state_bytes),
        progress_every_s=progress_every_s,
    )

    @asynccontextmanager
    async def lifespan(_: Server[dict[str, Any]]) -> AsyncIterator[dict[str, Any]]:
        unsubscribe = meta.on_categories_changed(handlers.announce_tools_changed)
        try:
            yield {}
        finally:
            unsubscribe()

    server: Server[dict[str, Any]] = RouterServer(
        name,
        version=__version__,
        instructions=INSTRUCTIONS,
        lifespan=lifespan,
        on_list_tools=handlers.list_tools,
        on_call_tool=handlers.call_tool,
        on_subscriptions_listen=ListenHandler(handlers.events),
    )
    # Seal the request_state of suspended runs (secrecy, integrity, expiry, bound to the
    # request and the deployment), and open each one once.
    security = state_security(state_keys, state_ttl_s)
    server.middleware.append(
        SealedStateBoundary(
            security, deployment=Deployment(name, meta), used=used_states or UsedStates()
        )
    )
    return server


def serve_router(
    config: MetaToolsConfig | str | os.PathLike[str], *, tools: Iterable[BaseTool] = ()
) -> MetaManager:
    """The router a config serves: with no `model` section and no key, on the host's model.

    Its MCP servers' questions during a call (elicitation, sampling) go to the host
    of the call (`asks.HostAnswers`); a sampling request the host cannot answer goes
    to the router's own model, when it has one.

    Raises:
        ConfigError: every problem of the file.
    """
    loaded = config if isinstance(config, MetaToolsConfig) else MetaToolsConfig.load(config)
    fallback = serving_fallback(loaded)
    if fallback is not None:
        logger.warning("%s: the categories use the MCP host's own model (sampling)", fallback)
        host = HostAnswers()
        model: SamplingChatModel | None = SamplingChatModel(ways_out=ALTERNATIVES)
    else:
        # A host that cannot sample leaves the servers' requests to the router's model.
        host = HostAnswers(sampling=ModelSampling(lambda: meta.model))
        model = None
    meta = MetaManager.from_config(
        loaded, tools=tools, model=model, elicitation=host.elicit, sampling=host.sample
    )
    return meta


def _router(router: MetaManager | MetaToolsConfig | str | os.PathLike[str]) -> MetaManager:
    return router if isinstance(router, MetaManager) else serve_router(router)


async def serve(
    router: MetaManager | MetaToolsConfig | str | os.PathLike[str],
    *,
    transport: Literal["stdio", "http"] = "stdio",
    host: str = "127.0.0.1",
    port: int = 8000,
    token: str | None = None,
    path: str = "/mcp",
    max_body_bytes: int = 1_048_576,
    replica: str | None = None,
    progress_every_s: float = PROGRESS_EVERY_S,
    resume: ResumeConfig | None = None,
    task_status: TaskStatus[str] = anyio.TASK_STATUS_IGNORED,
) -> None:
    """Serve the router's category tools over MCP until stdin closes or this is cancelled.

    `replica` (HTTP) names this process in its session ids (see `ReplicaSessionIds`).
    `progress_every_s`: the longest a call goes without a progress notification
    when its host asked for progress. `resume` (HTTP) replaces the config's
    `serve.resume`: what is kept so that a host can resume a dropped stream.

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
            server = build_server(
                meta,
                default_session=f"stdio:{uuid.uuid4().hex}",
                progress_every_s=progress_every_s,
            )
            async with stdio_server() as (read, write):
                task_status.started("stdio")
                options = server.create_initialization_options()  # declares list_changed
                await server.run(read, write, options)
            return
        settings = meta.config.serve if meta.config is not None else ServeConfig()
        memory = meta.config.memory if meta.config is not None else MemoryConfig()
        resuming = resume or settings.resume
        async with used_states(memory) as used, event_log(memory, resuming) as events:
            mcp_server = build_server(
                meta,
                state_keys=state_keys(settings),
                state_ttl_s=settings.state_ttl_s,
                max_state_bytes=settings.max_state_bytes,
                used_states=used,
                progress_every_s=progress_every_s,
            )
            app = http_app(
                mcp_server,
                host=host,
                token=token,
                path=path,
                max_body_bytes=max_body_bytes,
                allowed_hosts=settings.allowed_hosts,
                allowed_origins=settings.allowed_origins,
                replica=replica,
                events=events,
                resume=resuming,
            )
            listen = Listen(host, port, path, settings.trusted_proxies)
            await serve_http(app, listen, task_status, caught)
    # Only now that every MCP session and subprocess is closed: let the signal act.
    for number in reversed(caught):
        if signal.getsignal(number) == signal.SIG_IGN:
            # Started with it ignored (a shell's background job), the service still
            # stopped for it: it acts as by default, so the exit status says so.
            default = signal.default_int_handler if number == signal.SIGINT else signal.SIG_DFL
            signal.signal(number, default)
        signal.raise_signal(number)
