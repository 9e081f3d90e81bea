"""Tracing of category calls and main-agent turns: JSON lines for `--trace FILE`, OpenTelemetry spans.

A `Tracer` sees every call of the main agent (`MetaManager.call_tool`) and
every step event of the category run behind it. It writes one JSON line per
step event (and one per LLM call, with the new messages of its prompt and its
reply, secrets redacted), each carrying the ids that tie it together: `main_call_id` (the
main agent's call), `run_id` (the category run) and, for tool events,
`call_id` (the level-1 tool call). With OpenTelemetry it also emits spans
`main call → category → step → tool`; without an SDK configured these cost
next to nothing, and without `opentelemetry-api` they are skipped.

A `MainAgent` adds its own side (`Tracer.turn`): one line per record of
`turn_trace` (the message, each reply of its model with the categories offered
and called, each category call and what came back, the answer), under the
turn's `run_id`; the category runs of the turn carry it as `turn_id`, and their
spans nest in a `turn` span.

Steps are reported after they finish (with their duration), so step and
tool spans are created after the fact with explicit start and end times.
"""

from __future__ import annotations

import json
import time
import uuid
from collections import OrderedDict
from collections.abc import AsyncIterator, Mapping
from contextlib import asynccontextmanager
from contextvars import ContextVar
from dataclasses import dataclass, field
from pathlib import Path
from typing import IO, TYPE_CHECKING, Any

import anyio
import anyio.to_thread

from .category.events import (
    Evaluated,
    EventSink,
    ModelCalled,
    RunEvent,
    RunFinished,
    RunStarted,
    ToolFinished,
    ToolsSelected,
)
from .support.redaction import Redactor
from .support.text import valid_utf8
from .turn_trace import TurnEvent, TurnTrace

if TYPE_CHECKING:
    from opentelemetry.context import Context
    from opentelemetry.trace import Span, TracerProvider
    from opentelemetry.trace import Tracer as OtelTracer

__all__ = ["JsonlTrace", "Tracer", "fan_out"]

_MAX_OPEN_RUNS = 1024
#: The main-agent turn the current task works for: its category runs carry the id. Set
#: for the span of one turn (`Tracer.turn`), and copied into the tasks it starts.
_TURN: ContextVar[str | None] = ContextVar("meta_tools_turn", default=None)


def fan_out(*sinks: EventSink | None) -> EventSink | None:
    """One sink that forwards each event to every given sink, in order (None when there are none)."""
    chosen = [s for s in sinks if s is not None]
    if not chosen:
        return None
    if len(chosen) == 1:
        return chosen[0]

    async def sink(event: RunEvent) -> None:
        for target in chosen:
            await target(event)

    return sink


class JsonlTrace:
    """Appends records to a file, one JSON object per line, flushed line by line.

    Writes run in a worker thread (the event loop never waits on the disk) under
    a lock, so lines keep the order in which events happened.
    """

    def __init__(self, path: str | Path) -> None:
        self.path = Path(path)
        self._file: IO[str] | None = self.path.open("a", encoding="utf-8")
        self._lock = anyio.Lock()
        self._seq = 0

    async def write(self, record: Mapping[str, Any]) -> None:
        """Append `record` with a sequence number and a timestamp."""
        async with self._lock:
            if self._file is None:
                return
            self._seq += 1
            line = json.dumps(
                {"seq": self._seq, "ts": round(time.time(), 6), **record},
                ensure_ascii=False,
                default=str,
            )
            line = valid_utf8(line)  # an LLM's reply may carry a lone surrogate
            await anyio.to_thread.run_sync(self._write_line, self._file, line)

    @staticmethod
    def _write_line(file: IO[str], line: str) -> None:
        file.write(line + "\n")
        file.flush()

    async def aclose(self) -> None:
        """Close the file; closing twice is harmless."""
        async with self._lock:
            if self._file is not None:
                self._file.close()
                self._file = None


@dataclass
class _RunSpans:
    """The open OpenTelemetry state of one category run."""

    span: Span
    context: Context
    round_tools: list[tuple[ToolFinished, int]] = field(default_factory=list)


class _SpanBuilder:
    """Turns the step events of one main call into OpenTelemetry spans."""

    def __init__(self, tracer: OtelTracer, parent: Context) -> None:
        self._tracer = tracer
        self._parent = parent
        self._runs: OrderedDict[str, _RunSpans] = OrderedDict()

    def handle(self, event: RunEvent) -> None:
        now = time.time_ns()
        if isinstance(event, RunStarted):
            self._start_run(event, now)
            return
        run = self._runs.get(event.run_id)
        if run is None:
            return
        if isinstance(event, ToolFinished):
            run.round_tools.append((event, now))
            return
        if isinstance(event, ModelCalled):  # prompts go to the JSON lines, not to spans
            return
        self._flush_round(run)
        if isinstance(event, ToolsSelected):
            self._step(run, "select", event.duration_s, now, self._llm_attributes(event))
        elif isinstance(event, Evaluated):
            attributes = self._llm_attributes(event)
            attributes["meta_tools.decision"] = event.decision
            self._step(run, f"evaluate {event.round}", event.duration_s, now, attributes)
        elif isinstance(event, RunFinished):
            run.span.set_attributes(
                {
                    "meta_tools.status": event.status,
                    "meta_tools.rounds": event.round,
                    "meta_tools.llm_calls": event.llm_calls,
                    "meta_tools.prompt_tokens": event.prompt_tokens,
                    "meta_tools.completion_tokens": event.completion_tokens,
                }
            )
            run.span.end(end_time=now)
            del self._runs[event.run_id]

    def close(self) -> None:
        """End spans of runs that never finished (their call was cancelled or raised)."""
        for run in self._runs.values():
            self._flush_round(run)
            run.span.set_attribute("meta_tools.status", "interrupted")
            run.span.end()
        self._runs.clear()

    def _start_run(self, event: RunStarted, now: int) -> None:
        from opentelemetry import trace

        span = self._tracer.start_span(
            f"category {event.category}",
            context=self._parent,
            start_time=now,
            attributes={
                "meta_tools.category": event.category,
                "meta_tools.run_id": event.run_id,
                "meta_tools.objective": event.objective,
            },
        )
        self._runs[event.run_id] = _RunSpans(span, trace.set_span_in_context(span, self._parent))
        while len(self._runs) > _MAX_OPEN_RUNS:
            _, oldest = self._runs.popitem(last=False)
            oldest.span.end()

    @staticmethod
    def _llm_attributes(event: ToolsSelected | Evaluated) -> dict[str, Any]:
        attributes: dict[str, Any] = {
            "meta_tools.prompt_tokens": event.prompt_tokens,
            "meta_tools.completion_tokens": event.completion_tokens,
        }
        if isinstance(event, ToolsSelected):
            attributes["meta_tools.tools"] = list(event.tools)
        return attributes

    def _step(
        self, run: _RunSpans, name: str, duration_s: float, end: int, attributes: dict[str, Any]
    ) -> Span:
        span = self._tracer.start_span(
            name,
            context=run.context,
            start_time=end - int(duration_s * 1e9),
            attributes=attributes,
        )
        span.end(end_time=end)
        return span

    def _flush_round(self, run: _RunSpans) -> None:
        """One `execute` step span per round, holding a span for each tool call."""
        if not run.round_tools:
            return
        from opentelemetry import trace
        from opentelemetry.trace import Status, StatusCode

        starts = [end - int(e.duration_s * 1e9) for e, end in run.round_tools]
        first, last = min(starts), max(end for _, end in run.round_tools)
        step = self._tracer.start_span(
            f"execute {run.round_tools[0][0].round}",
            context=run.context,
            start_time=first,
            attributes={"meta_tools.tools": [e.tool for e, _ in run.round_tools]},
        )
        inside = trace.set_span_in_context(step, run.context)
        for (event, end), start in zip(run.round_tools, starts, strict=True):
            span = self._tracer.start_span(
                f"tool {event.tool}",
                context=inside,
                start_time=start,
                attributes={"meta_tools.tool": event.tool, "meta_tools.call_id": event.call_id},
            )
            if not event.ok:
                span.set_status(Status(StatusCode.ERROR, event.error or "failed"))
            span.end(end_time=end)
        step.end(end_time=last)
        run.round_tools.clear()


class Tracer:
    """Records every main call and its category steps as JSON lines and/or OpenTelemetry spans.

    Set it on a router (`meta.tracer = Tracer(jsonl="trace.jsonl")`) and every
    `MetaManager.call_tool` is traced, whoever calls it (the CLI, the MCP
    server, your own agent loop).

    Args:
        jsonl: a file to append one JSON line per step event to.
        otel: emit OpenTelemetry spans (when `opentelemetry-api` is installed).
        tracer_provider: where spans go; the application's global provider by default.
    """

    def __init__(
        self,
        *,
        jsonl: str | Path | None = None,
        otel: bool = True,
        tracer_provider: TracerProvider | None = None,
    ) -> None:
        self.jsonl = JsonlTrace(jsonl) if jsonl is not None else None
        self._otel = _otel_tracer(tracer_provider) if otel else None

    @asynccontextmanager
    async def main_call(self, name: str, *, call_id: str | None = None) -> AsyncIterator[EventSink]:
        """Trace one call of the main agent to category `name`; yields the sink for its events."""
        main_call_id = call_id or f"main_{uuid.uuid4().hex[:16]}"
        turn_id = _TURN.get()
        ids = {"main_call_id": main_call_id} | ({"turn_id": turn_id} if turn_id else {})

        async def write(event: RunEvent) -> None:
            if self.jsonl is not None:
                await self.jsonl.write({**ids, **event.as_dict()})

        if self._otel is None:
            yield write
            return
        from opentelemetry import trace

        with self._otel.start_as_current_span(
            f"meta_tools.call {name}",
            attributes={"meta_tools.category": name, "meta_tools.main_call_id": main_call_id},
        ) as span:
            spans = _SpanBuilder(self._otel, trace.set_span_in_context(span))

            async def sink(event: RunEvent) -> None:
                spans.handle(event)
                await write(event)

            try:
                yield sink
            finally:
                spans.close()

    @asynccontextmanager
    async def turn(
        self,
        request: str,
        *,
        agent: str,
        session: str = "",
        redactor: Redactor | None = None,
        guards: str = "",
    ) -> AsyncIterator[TurnTrace]:
        """Trace one turn of a main agent, the answer to the user message `request`.

        Yields the turn's `TurnTrace` (its start is written already); the category
        calls made inside carry its id. The end is written however the turn ends:
        with the answer noted (`TurnTrace.answered`), or the error that stopped it.
        """
        run_id = f"turn_{uuid.uuid4().hex[:16]}"

        async def write(event: TurnEvent) -> None:
            if self.jsonl is not None:
                await self.jsonl.write(event.as_dict())

        trace = TurnTrace(write, run_id, redactor=redactor)
        token = _TURN.set(run_id)
        try:
            await trace.start(request, agent=agent, session=session, guards=guards)
            if self._otel is None:
                yield trace
            else:
                attributes = {"meta_tools.agent": agent, "meta_tools.turn_id": run_id}
                with self._otel.start_as_current_span(
                    f"meta_tools.turn {agent}", attributes=attributes
                ):
                    yield trace
        except BaseException as exc:
            with anyio.CancelScope(shield=True):
                await trace.finish(exc)
            raise
        else:
            await trace.finish()
        finally:
            _TURN.reset(token)

    async def aclose(self) -> None:
        """Close the trace file; closing twice is harmless."""
        if self.jsonl is not None:
            await self.jsonl.aclose()


def _otel_tracer(provider: TracerProvider | None) -> OtelTracer | None:
    try:
        from opentelemetry import trace
    except ImportError:
        return None
    return trace.get_tracer("meta_tools", tracer_provider=provider)
