"""MCP servers as level-1 tool sources: one persistent session per server, owned by one task.

Lifecycle of an `McpToolSource`:

    async with McpToolSource("calc", StdioServerParameters(...)) as source:
        await source.connect()          # optional: a call connects on first use
        tool = source.get_tool("add")   # an `McpServerTool`, a BaseTool like any other
        await tool.call({"a": 1, "b": 2})

Entering starts a *supervisor* task. It alone enters and exits `mcp.Client`
(so the SDK's task groups and cancel scopes stay in one task), opens the
session when asked, lists the tools (all pages), refreshes them on
`tools/list_changed`, and stops the session when it ends: on close, when the
server's stream ends (a crashed subprocess), or when a call reported the
connection lost. Calls run in the caller's task, on the open session, at most
`max_concurrent_calls` at a time. A call that needs a session asks the
supervisor for one and waits; after a failed attempt, calls fail fast with
`ToolUnavailableError` until the backoff (0.5 s, doubling, at most 30 s) has
passed. Refreshes are coalesced and bounded: changes announced while a list
is under way or within `min_refresh_s` of the last one are listed once, and a
server that keeps announcing changes waits twice as long each time (at most
30 s), so a server answering every `tools/list` with another
`tools/list_changed` costs a few lists a minute, not a core. A list that
brings the very same tools changes nothing and notifies nobody. Leaving the context closes the session; for stdio the SDK closes the
server's stdin, waits 2 s, then sends SIGTERM and, 2 s later, SIGKILL to the
server's whole process group.
"""

from __future__ import annotations

import inspect
import logging
import math
from collections.abc import Awaitable, Callable
from contextlib import AsyncExitStack
from dataclasses import dataclass, field
from typing import Any, Literal

import anyio
import mcp_types
from mcp import Client, MCPError, StdioServerParameters
from mcp.client.session import IncomingMessage
from mcp.client.subscriptions import ListenNotSupportedError, SubscriptionLost
from mcp.server import Server
from mcp.server.mcpserver import MCPServer
from mcp_types.version import MODERN_PROTOCOL_VERSIONS
from pydantic import ValidationError
from typing_extensions import Self

from ...exceptions import ToolError, ToolExecutionError, ToolTimeoutError, ToolUnavailableError
from ...support.lifecycle import AsyncCloseable
from .asks import ElicitationHandler, SamplingHandler
from .calls import CallBook, InFlight, forward_progress
from .failures import CALL_FAILURES, call_failure, describe_failure, login_needed
from .health import Transport, TransportHealth, WatchedTransport
from .identity import CLIENT_INFO
from .listing import list_remote_tools, router_tools
from .results import result_value
from .stderr import StderrTail
from .tool import McpServerTool, PendingTool
from .transports import HttpTransportFactory, open_transport

__all__ = ["McpServerTool", "McpTarget", "McpToolSource", "PendingTool"]

logger = logging.getLogger("meta_tools.mcp")

McpTarget = MCPServer | Server[Any] | StdioServerParameters | str | Callable[[], Transport]
"""In-process server (tests), stdio parameters, streamable-HTTP URL, or a transport factory."""

ConnectMode = Literal["start", "first_use"]
SourceStatus = Literal["idle", "connecting", "ready", "failed", "closed"]

_BACKOFF_S = 0.5
_MAX_BACKOFF_S = 30.0
_CLOSE_GRACE_S = 10.0
_MIN_REFRESH_S = 1.0
_MAX_REFRESH_S = 30.0

SourceListener = Callable[["McpToolSource"], Awaitable[None] | None]
"""Told of a new tool set; an async listener is awaited before the next list."""


@dataclass
class _Attempt:
    """One connection attempt that callers wait on."""

    done: anyio.Event = field(default_factory=anyio.Event)
    error: str | None = None


class McpToolSource(AsyncCloseable):
    """One MCP server whose tools become level-1 tools.

    Args:
        name: the server's name in the config (named in every error).
        target: what to connect to (see `McpTarget`).
        prefix: when set, tools are named `prefix_toolname`.
        connect: `"start"` opens the session when the router starts; `"first_use"` when a
            category that may need it is first called.
        timeout_s: limit for connecting and for each call's answer.
        mode: the protocol era to negotiate (`"auto"` or `"legacy"`).
        max_concurrent_calls: calls in flight on this server at once; more wait their turn.
        min_refresh_s: at least this long between two refreshes of the tool list on
            `tools/list_changed`; doubled while the server keeps announcing changes.
        elicitation: answers the server's questions to the user during a call (`asks`);
            the session declares elicitation only with one.
        sampling: answers the server's requests for a model's message during a call;
            the session declares sampling only with one.
    """

    def __init__(
        self,
        name: str,
        target: McpTarget,
        *,
        prefix: str | None = None,
        connect: ConnectMode = "start",
        timeout_s: float = 30.0,
        mode: Literal["auto", "legacy"] = "auto",
        max_concurrent_calls: int = 32,
        min_refresh_s: float = _MIN_REFRESH_S,
        elicitation: ElicitationHandler | None = None,
        sampling: SamplingHandler | None = None,
    ) -> None:
        self.name = name
        self.calls = CallBook(name, elicitation=elicitation, sampling=sampling)
        self.min_refresh_s = min_refresh_s
        self.prefix = prefix
        self.connect_mode: ConnectMode = connect
        self.timeout_s = timeout_s
        self.mode = mode
        self._target = target
        self.url = (
            target
            if isinstance(target, str)
            else target.url
            if isinstance(target, HttpTransportFactory)
            else None
        )
        self._stderr: StderrTail | None = None
        self._limiter = anyio.CapacityLimiter(max_concurrent_calls)
        self._tools: dict[str, McpServerTool] = {}
        self._listing: list[mcp_types.Tool] | None = None  # as the server last listed it
        self._listed = False
        self._listeners: list[SourceListener] = []
        self._status: SourceStatus = "idle"
        self._last_error: str | None = None
        self.left_out: list[str] = []
        """Listed tools that need task augmentation (`execution.taskSupport: "required"`)."""
        self._failures = 0
        self._retry_at = 0.0
        self._client: Client | None = None
        self._attempt: _Attempt | None = None
        self._wake = anyio.Event()
        self._session_stop: anyio.Event | None = None
        self._session_scope: anyio.CancelScope | None = None
        self._health = TransportHealth()
        self._refresh_wanted = anyio.Event()
        self._stack: AsyncExitStack | None = None
        self._stopped = anyio.Event()
        self._closing = False
        self._ready = False

    def __repr__(self) -> str:
        return f"<McpToolSource {self.name!r} {self._status} tools={len(self._tools)}>"

    # -- what the router sees -----------------------------------------------------------
    @property
    def status(self) -> SourceStatus:
        return self._status

    @property
    def listed(self) -> bool:
        """True once the tools were listed (they are kept while the server is down)."""
        return self._listed

    @property
    def last_error(self) -> str | None:
        return self._last_error

    def tools(self) -> list[McpServerTool]:
        """The current tools, under their router names."""
        return list(self._tools.values())

    def get_tool(self, name: str) -> McpServerTool | None:
        return self._tools.get(name)

    def may_provide(self, name: str) -> bool:
        """Whether a not-yet-listed server could provide a tool called `name`."""
        if self._listed:
            return name in self._tools
        return self.prefix is None or name.startswith(f"{self.prefix}_")

    def subscribe(self, listener: SourceListener) -> Callable[[], None]:
        """Call `listener(source)` whenever the tool set changes; returns an unsubscribe.

        An async listener is awaited: the next refresh waits for it, so slow work
        there (rebuilding indexes) slows the refreshes, not the event loop.
        """
        self._listeners.append(listener)
        return lambda: self._listeners.remove(listener) if listener in self._listeners else None

    # -- lifecycle ----------------------------------------------------------------------
    async def __aenter__(self) -> Self:
        if self._stack is not None or self._closing:
            raise RuntimeError(f"MCP source {self.name!r} was already entered")
        stack = AsyncExitStack()
        group = await stack.enter_async_context(anyio.create_task_group())
        self._stack = stack
        await group.start(self._supervise)
        return self

    def begin_close(self) -> None:
        """Start closing without waiting (so several sources wind down at once)."""
        if self._closing:
            return
        self._closing = True
        self._wake.set()
        if self._session_stop is not None:
            self._session_stop.set()
        if self._status == "connecting" and self._session_scope is not None:
            self._session_scope.cancel()

    async def aclose(self) -> None:
        """Close the session (ending a stdio subprocess); closing twice is harmless.

        Must run in the task that entered the source (as `async with` does).
        """
        self.begin_close()
        stack, self._stack = self._stack, None
        if stack is None:
            self._status = "closed"
            return
        with anyio.move_on_after(_CLOSE_GRACE_S, shield=True):
            await self._stopped.wait()
        if not self._stopped.is_set() and self._session_scope is not None:
            self._session_scope.cancel()
        await stack.aclose()
        self._status = "closed"

    # -- connecting -----------------------------------------------------------------------
    async def connect(self) -> None:
        """Open the session unless it is open, and wait for the outcome.

        Raises:
            ToolUnavailableError: the server could not be reached (the message says why and
                when the next attempt will be made).
        """
        if self._client is not None:
            return
        if self._closing or self._stack is None:
            state = "closed" if self._closing else "not started (enter it with `async with`)"
            raise ToolUnavailableError(f"MCP server {self.name!r} is {state}")
        if self._attempt is None:
            wait = self._retry_at - anyio.current_time()
            if self._failures and wait > 0:
                raise ToolUnavailableError(
                    f"MCP server {self.name!r} is unavailable: {self._last_error};"
                    f" the next attempt is in {wait:.1f} s"
                )
            self._attempt = _Attempt()
            self._wake.set()
        attempt = self._attempt
        with anyio.move_on_after(self.timeout_s + _CLOSE_GRACE_S):
            await attempt.done.wait()
        if attempt.error is not None or self._client is None:
            reason = attempt.error or f"no session within {self.timeout_s:g} s"
            raise ToolUnavailableError(f"MCP server {self.name!r} is unavailable: {reason}")

    async def _supervise(self, *, task_status: anyio.abc.TaskStatus[None]) -> None:
        task_status.started()
        try:
            while not self._closing:
                await self._wake.wait()
                self._wake = anyio.Event()
                if self._closing:
                    break
                if self._attempt is None:
                    continue  # woken by a stop that raced a finished session
                self._ready = False
                try:
                    await self._run_session()
                except Exception as exc:  # every failure of one session, reported to its callers
                    await self._session_failed(exc)
                finally:
                    self._client = None
                    if self._status == "ready":
                        self._status = "idle"
                    if self._stderr is not None:
                        self._stderr.stop_logging()
                        self._stderr.close_writer()  # also when connecting was cancelled
        finally:
            self._stopped.set()
            self._finish_attempt("the source is closed" if self._closing else None)

    async def _run_session(self) -> None:
        stop = self._session_stop = anyio.Event()
        self._status = "connecting"
        with anyio.CancelScope() as scope:
            self._session_scope = scope
            scope.deadline = anyio.current_time() + self.timeout_s
            async with AsyncExitStack() as stack:
                client = await stack.enter_async_context(self._client_for(stop.set))
                if self._stderr is not None:
                    self._stderr.close_writer()
                group = await stack.enter_async_context(anyio.create_task_group())
                capabilities = client.server_capabilities.tools
                modern = client.protocol_version in MODERN_PROTOCOL_VERSIONS
                if modern and capabilities is not None and capabilities.list_changed:
                    # subscribe before listing, so that no change falls in between
                    await group.start(self._listen, client, stop)
                await self._list_tools(client)
                scope.deadline = math.inf
                self._client, self._status, self._ready = client, "ready", True
                self._failures, self._last_error = 0, None
                self._finish_attempt(None)
                logger.info("MCP server %r connected (%s)", self.name, client.protocol_version)
                group.start_soon(self._refresh_on_change, client)
                await stop.wait()
                self._client, self._status = None, "idle"
                group.cancel_scope.cancel()
        if scope.cancelled_caught and not self._ready and not self._closing:
            raise TimeoutError(f"no answer within {self.timeout_s:g} s")

    def _client_for(self, on_end: Callable[[], None]) -> Client:
        options: dict[str, Any] = {
            "mode": self.mode,
            "message_handler": self._on_message,
            "read_timeout_seconds": self.timeout_s,
            "cache": None,  # the tool list is ours to keep, refreshed on list_changed
            "logging_callback": self.calls.log,  # a call's log lines are its progress
            "log_level": "info",
            "client_info": CLIENT_INFO,
        }
        # Declared only where someone can answer (the SDK declares what has a callback).
        if self.calls.elicitation is not None:
            options["elicitation_callback"] = self.calls.elicit
        if self.calls.sampling is not None:
            options["sampling_callback"] = self.calls.sample
        target = self._target
        health = self._health = TransportHealth()
        if isinstance(target, MCPServer | Server):
            return Client(target, **options)
        transport, self._stderr = open_transport(target, self.name, health)

        def ended() -> None:
            health.failed()
            on_end()

        return Client(WatchedTransport(transport, ended), **options)

    async def _session_failed(self, exc: Exception) -> None:
        stderr = await self._stderr.text() if self._stderr is not None else ""
        reason = describe_failure(exc, stderr)
        if self._ready:
            logger.warning("MCP server %r: the session ended with an error: %s", self.name, reason)
            return
        self._failures += 1
        delay = min(_BACKOFF_S * 2 ** (self._failures - 1), _MAX_BACKOFF_S)
        self._retry_at = anyio.current_time() + delay
        self._status = "failed"
        failed = f"could not be reached at {self.url}" if self.url else "could not be started"
        login = login_needed(exc)
        self._last_error = f"{failed}: {reason}" if login is None else login.why
        logger.warning(
            "MCP server %r %s (next attempt in %.1f s)", self.name, self._last_error, delay
        )
        self._finish_attempt(self._last_error)

    def _finish_attempt(self, error: str | None) -> None:
        attempt, self._attempt = self._attempt, None
        if attempt is not None:
            attempt.error = error
            attempt.done.set()

    def _mark_broken(self, reason: str) -> None:
        """A call saw the connection fail: stop this session; the next call opens a new one."""
        if self._client is None:
            return
        logger.warning("MCP server %r: %s; reconnecting on the next call", self.name, reason)
        self._client = None
        self._status = "idle"
        if self._session_stop is not None:
            self._session_stop.set()

    # -- the tool list --------------------------------------------------------------------
    async def _list_tools(self, client: Client) -> None:
        listed = await list_remote_tools(client, self.name)
        if self._listed and listed == self._listing:
            return  # the same tools: nothing to rebuild, nobody to tell
        self._tools, self.left_out = router_tools(self, listed, self.prefix)
        self._listing, self._listed = listed, True
        for listener in list(self._listeners):
            told = listener(self)
            if inspect.isawaitable(told):
                await told

    async def _on_message(self, message: IncomingMessage) -> None:
        if isinstance(message, mcp_types.ToolListChangedNotification):
            self._refresh_wanted.set()
        elif isinstance(message, Exception):
            logger.debug("MCP server %r: transport reported %r", self.name, message)

    async def _refresh_on_change(self, client: Client) -> None:
        """List again on each announced change: coalesced, and at a bounded rate.

        Every change announced before a refresh starts is served by it. A change
        announced within the interval after the last refresh waits for its end, and
        the interval doubles (up to `_MAX_REFRESH_S`): a server that announces a change
        after every list is listed ever less often. A change after a quiet interval
        is listed at once, and the interval is back to `min_refresh_s`.
        """
        interval = self.min_refresh_s
        last = -math.inf
        while True:
            await self._refresh_wanted.wait()
            wait = last + interval - anyio.current_time()
            if wait > 0:
                await anyio.sleep(wait)  # changes announced meanwhile are listed once
                interval = min(interval * 2, max(_MAX_REFRESH_S, self.min_refresh_s))
            else:
                interval = self.min_refresh_s
            self._refresh_wanted = anyio.Event()
            last = anyio.current_time()
            try:
                await self._list_tools(client)
            except (MCPError, ValidationError, anyio.BrokenResourceError) as exc:
                logger.warning("MCP server %r: cannot refresh its tools: %s", self.name, exc)

    async def _listen(
        self,
        client: Client,
        stop: anyio.Event,
        *,
        task_status: anyio.abc.TaskStatus[None] = anyio.TASK_STATUS_IGNORED,
    ) -> None:
        """Follow `tools/list_changed` on a 2026-07-28 connection (a `subscriptions/listen` stream)."""
        started = False
        try:
            async with client.listen(tools_list_changed=True) as subscription:
                task_status.started()
                started = True
                async for _event in subscription:
                    self._refresh_wanted.set()
        except SubscriptionLost:
            if not stop.is_set():
                self._mark_broken("its event stream was lost")
        except (MCPError, ListenNotSupportedError, TimeoutError) as exc:
            logger.info("MCP server %r: no tools/list_changed events: %s", self.name, exc)
        finally:
            if not started:
                task_status.started()

    # -- calling ------------------------------------------------------------------------
    async def call_tool(self, name: str, arguments: dict[str, Any]) -> Any:
        """Call the server's tool `name` (its own name, without prefix).

        Returns the structured content when the server sent it, else the text content.

        Raises:
            ToolUnavailableError: no session could be opened, or the connection was lost.
            ToolTimeoutError: the server did not answer within `timeout_s`.
            ToolExecutionError: the tool reported an error (its message) or the server refused.
        """
        await self.connect()
        client = self._client
        if client is None:
            raise ToolUnavailableError(f"MCP server {self.name!r} disconnected; try again")
        health, failures = self._health, self._health.failures
        async with self._limiter:
            with self.calls.call(name) as running:
                result = await self._send(client, name, arguments, running, health, failures)
        if result is None:
            late = f"MCP server {self.name!r} did not answer {name!r} within {self.timeout_s:g} s"
            raise _with_notes(ToolTimeoutError(late), running.declined)
        if result.is_error:
            message = result_value(result, text_only=True) or f"{name!r} failed"
            raise _with_notes(ToolExecutionError(message), running.declined)
        return result_value(result)

    async def _send(
        self,
        client: Client,
        name: str,
        arguments: dict[str, Any],
        running: InFlight,
        health: TransportHealth,
        failures: int,
    ) -> mcp_types.CallToolResult | None:
        """One `tools/call`, its progress passed on; None when it ran out of time."""

        async def on_progress(progress: float, total: float | None, message: str | None) -> None:
            await forward_progress(running, self.name, progress, total, message)

        # Our own deadline: the SDK's would surface as an MCPError that a server can forge.
        with anyio.move_on_after(self.timeout_s):
            try:
                return await client.call_tool(
                    name,
                    arguments,
                    read_timeout_seconds=self.timeout_s + _CLOSE_GRACE_S,
                    progress_callback=on_progress if running.progress is not None else None,
                )
            except CALL_FAILURES as exc:
                lost = health.failures > failures or self._closing
                error, broken = call_failure(exc, self.name, name, lost=lost)
                if broken is not None:
                    self._mark_broken(broken)
                raise _with_notes(error, running.declined) from None
        return None


def _with_notes(error: ToolError, declined: list[str]) -> ToolError:
    """`error`, with the questions declined during the call, so that the model knows why."""
    if declined:
        error.args = (f"{error}; " + "; ".join(declined),)
    return error
