"""The MCP host's model as the categories' model, in both protocol eras.

Legacy connections (2025-11-25): `LegacyHost` sends `sampling/createMessage`
to the client in the middle of the call.

2026-07-28: a server cannot call the client mid-call. `SuspendedRuns` runs
the category call in a task of its own; each time the category's model needs
an answer, the call returns `InputRequiredResult` (the sampling request, and
the run's id as `request_state`); the client answers and retries with the
same state, and the suspended run resumes. Runs live in a bounded store; a
run whose client does not come back within `ttl_s` fails and is dropped, and
a cancelled round cancels its run (and so its running tools).
"""

from __future__ import annotations

import logging
import time
import uuid
from collections.abc import AsyncIterator, Awaitable, Callable
from contextlib import asynccontextmanager
from dataclasses import dataclass, field
from typing import Any

import anyio
import mcp_types
from anyio.abc import TaskGroup
from anyio.streams.memory import MemoryObjectReceiveStream, MemoryObjectSendStream
from mcp.server import ServerRequestContext
from mcp.shared.message import ServerMessageMetadata
from pydantic import ValidationError

from .._text import valid_utf8
from ..category.events import (
    Evaluated,
    ModelCalled,
    RunEvent,
    RunFinished,
    RunStarted,
    ToolFinished,
    ToolsSelected,
)
from ..exceptions import ModelError
from ..llm.sampling import sampling_host

__all__ = ["LegacyHost", "Progress", "SuspendedRuns", "error_result"]

logger = logging.getLogger("meta_tools.server")


def describe_event(event: RunEvent) -> str:
    """One progress line per step of a category run."""
    match event:
        case RunStarted():
            return f"{event.category}: started"
        case ToolsSelected(tools=tools):
            return f"{event.category}: selected {', '.join(tools) or 'no tool'}"
        case ToolFinished(tool=tool, ok=True, duration_s=took):
            return f"{event.category}: {tool} finished in {took:.2f} s"
        case ToolFinished(tool=tool, error=error):
            return f"{event.category}: {tool} failed: {error}"
        case Evaluated(decision=decision):
            step = "more tools" if decision == "more_tools" else "the summary"
            return f"{event.category}: evaluated the results; next: {step}"
        case RunFinished(status=status):
            return f"{event.category}: finished ({status})"
    return f"{event.category}: {event.kind}"


class Progress:
    """An event sink that reports each step as MCP progress to the request being served.

    `ctx` is the request to report to; for a suspended run it changes each round
    (and is None between rounds, when there is nobody to tell).
    """

    def __init__(self, ctx: ServerRequestContext[Any, Any] | None) -> None:
        self.ctx = ctx
        self.steps = 0

    async def __call__(self, event: RunEvent) -> None:
        ctx = self.ctx
        if ctx is None or isinstance(event, ModelCalled):  # prompts are for traces only
            return
        self.steps += 1
        try:
            await ctx.session.report_progress(self.steps, None, valid_utf8(describe_event(event)))
        except (anyio.BrokenResourceError, anyio.ClosedResourceError) as exc:
            logger.debug("progress not delivered (the client left): %r", exc)


RunCall = Callable[[Progress], Awaitable[mcp_types.CallToolResult]]
"""Runs one category call reporting to the given sink, and returns the MCP result."""


class LegacyHost:
    """Samples through the client of a legacy connection, mid-call."""

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


@dataclass(frozen=True, slots=True)
class _Sample:
    key: str
    params: mcp_types.CreateMessageRequestParams


@dataclass(frozen=True, slots=True)
class _Done:
    result: mcp_types.CallToolResult


@dataclass(eq=False)
class _Run:
    id: str
    progress: Progress = field(default_factory=lambda: Progress(None))
    scope: anyio.CancelScope = field(default_factory=anyio.CancelScope)
    touched: float = field(default_factory=time.monotonic)
    pending_key: str | None = None
    rounds: int = 0
    busy: bool = False

    def __post_init__(self) -> None:
        # one item in flight each way, so neither side ever blocks on a send
        self.out_send: MemoryObjectSendStream[_Sample | _Done]
        self.out_receive: MemoryObjectReceiveStream[_Sample | _Done]
        self.out_send, self.out_receive = anyio.create_memory_object_stream[_Sample | _Done](1)
        self.in_send: MemoryObjectSendStream[mcp_types.CreateMessageResultWithTools]
        self.in_receive: MemoryObjectReceiveStream[mcp_types.CreateMessageResultWithTools]
        self.in_send, self.in_receive = anyio.create_memory_object_stream[
            mcp_types.CreateMessageResultWithTools
        ](1)


class _ResumableHost:
    """A suspended run's sampling: hand the request to the round, wait for the next round."""

    def __init__(self, run: _Run, ttl_s: float) -> None:
        self._run = run
        self._ttl_s = ttl_s

    async def create_message(
        self, params: mcp_types.CreateMessageRequestParams
    ) -> mcp_types.CreateMessageResultWithTools:
        run = self._run
        run.rounds += 1
        await run.out_send.send(_Sample(f"sample-{run.rounds}", params))
        try:
            with anyio.fail_after(self._ttl_s):
                return await run.in_receive.receive()
        except TimeoutError:
            raise ModelError(
                f"the MCP host did not answer the sampling request within {self._ttl_s:g} s"
            ) from None


class SuspendedRuns:
    """Category calls waiting for the host's model on 2026-07-28 connections (bounded).

    Args:
        max_runs: calls that may wait at once; one more is refused with an error result.
        ttl_s: how long a run waits for its client to come back.
    """

    def __init__(self, *, max_runs: int = 128, ttl_s: float = 300.0) -> None:
        self.max_runs = max_runs
        self.ttl_s = ttl_s
        self._runs: dict[str, _Run] = {}
        self._group: TaskGroup | None = None

    def __len__(self) -> int:
        return len(self._runs)

    @asynccontextmanager
    async def running(self) -> AsyncIterator[SuspendedRuns]:
        """Own the runs' tasks; leaving cancels every run still waiting."""
        async with anyio.create_task_group() as group:
            self._group = group
            try:
                yield self
            finally:
                self._group = None
                group.cancel_scope.cancel()

    def _prune(self) -> None:
        limit = time.monotonic() - 2 * self.ttl_s
        for run in [r for r in self._runs.values() if r.touched < limit and not r.busy]:
            run.scope.cancel()
            self._runs.pop(run.id, None)

    async def step(
        self,
        ctx: ServerRequestContext[Any, Any],
        params: mcp_types.CallToolRequestParams,
        call: RunCall,
    ) -> mcp_types.CallToolResult | mcp_types.InputRequiredResult:
        """Start a run (first round) or resume it with the client's answer; return the next step."""
        self._prune()
        if params.request_state is None:
            started = self._start(call)
            if isinstance(started, mcp_types.CallToolResult):
                return started
            run = started
        else:
            found = self._resume(params)
            if isinstance(found, mcp_types.CallToolResult):
                return found
            run = found
        run.busy, run.touched = True, time.monotonic()
        run.progress.ctx = ctx
        try:
            outcome = await run.out_receive.receive()
        except BaseException:  # the round was cancelled (or the server stops): so is the run
            run.scope.cancel()
            self._runs.pop(run.id, None)
            raise
        finally:
            run.busy = False
            run.progress.ctx = None
        if isinstance(outcome, _Sample):
            run.pending_key = outcome.key
            request = mcp_types.CreateMessageRequest(params=outcome.params)
            return mcp_types.InputRequiredResult(
                input_requests={outcome.key: request}, request_state=run.id
            )
        self._runs.pop(run.id, None)
        return outcome.result

    def _start(self, call: RunCall) -> _Run | mcp_types.CallToolResult:
        if self._group is None:
            return error_result("the router is shutting down; call again later")
        if len(self._runs) >= self.max_runs:
            return error_result(
                f"{self.max_runs} calls are already waiting for their host's model; try again later"
            )
        run = _Run(id=uuid.uuid4().hex)
        self._runs[run.id] = run
        self._group.start_soon(self._main, run, call)
        return run

    def _resume(self, params: mcp_types.CallToolRequestParams) -> _Run | mcp_types.CallToolResult:
        run = self._runs.get(params.request_state or "")
        if run is None:
            return error_result(
                "this call waited too long for the host's model (or the router restarted);"
                " call the tool again"
            )
        if run.busy:
            return error_result("this call is already being resumed by another request")
        answer = (params.input_responses or {}).get(run.pending_key or "")
        if answer is None:
            return error_result(f"the retry carries no answer for {run.pending_key!r}")
        try:
            reply = mcp_types.CreateMessageResultWithTools.model_validate(
                answer.model_dump(by_alias=True, mode="json", exclude_none=True)
            )
        except ValidationError as exc:
            return error_result(
                f"the host's answer is not a sampling result: {exc.error_count()} problem(s)"
            )
        run.in_send.send_nowait(reply)
        return run

    async def _main(self, run: _Run, call: RunCall) -> None:
        with run.scope, sampling_host(_ResumableHost(run, self.ttl_s)):
            try:
                result = await call(run.progress)
            except Exception:  # a bug must end this run only, not the server's task group
                logger.exception("suspended category call %s crashed", run.id)
                result = error_result("the router failed on this call (see its log)")
            run.out_send.send_nowait(_Done(result))


def error_result(message: str) -> mcp_types.CallToolResult:
    """A tool-level error the calling model can read."""
    return mcp_types.CallToolResult(content=[mcp_types.TextContent(text=message)], is_error=True)
