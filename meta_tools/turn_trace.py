"""The main agent's side of a trace: one record per step of a turn (a user message answered).

    TurnEvent                 common fields: run_id (the turn's, `turn_…`), round
    ├── TurnStarted           a user message reached the main agent (agent, session, request,
    │                         the guard profile in force and why)
    ├── AgentReplied          its model answered: the categories offered, those it called
    ├── CategoryAsked         a category call began, by the model or by the router
    ├── CategoryAnswered      it came back: who answered, who declined first, what is left
    └── TurnFinished          the answer, and how it came about (outcome, usage, time)

A `TurnTrace` writes them for one turn; the category runs the turn starts carry its
id as `turn_id` (see `tracing.Tracer.turn`). Texts are redacted and cut to
`TEXT_CHARS`, and a turn keeps only counts and a bounded list of names, so a trace
line is small and nothing of one turn outlives it.
"""

from __future__ import annotations

import time
from collections.abc import Awaitable, Callable
from dataclasses import dataclass
from typing import Literal

from .category.events import TraceRecord, record_kind
from .category.result import CategoryResult
from .llm.base import ChatModel
from .llm.types import AssistantTurn, ChatRequest, ToolCall
from .support.redaction import Redactor
from .support.text import clipped

__all__ = [
    "TEXT_CHARS",
    "TURN_EVENTS",
    "AgentReplied",
    "CategoryAnswered",
    "CategoryAsked",
    "Outcome",
    "TurnEvent",
    "TurnFinished",
    "TurnStarted",
    "TurnTrace",
]

#: The most characters of a request, objective, input, reply or answer a record keeps.
TEXT_CHARS = 2000
#: The most category names a turn's record lists (a turn runs at most rounds × calls).
_MAX_NAMES = 32

#: How a turn ended: the model's own words; an answer the router wrote from the
#: category results (the model said nothing, or numbers no result holds); out of
#: rounds (asked to answer with no tools); no answer; the model failed; cancelled.
Outcome = Literal["answered", "from_results", "out_of_rounds", "no_answer", "failed", "cancelled"]
#: How the main agent's loop came to its answer (what `Outcome` says of an answer).
Reached = Literal["answered", "from_results", "out_of_rounds"]


@dataclass(frozen=True, slots=True)
class TurnEvent(TraceRecord):
    """Common fields: which turn, and the main agent's LLM call it came after (0: none yet)."""

    run_id: str
    round: int


@dataclass(frozen=True, slots=True)
class TurnStarted(TurnEvent):
    agent: str = ""
    session: str = ""
    request: str = ""  # redacted and cut
    guards: str = ""  # the guard profile in force and why (`ProfileChoice.line`)


@dataclass(frozen=True, slots=True)
class AgentReplied(TurnEvent):
    """One call of the main agent's model: the category tools it was offered, in rank
    order, and what it answered (calls by name, and its text, as written)."""

    tools: tuple[str, ...] = ()
    calls: tuple[str, ...] = ()
    text: str | None = None  # redacted and cut
    duration_s: float = 0.0
    prompt_tokens: int = 0
    completion_tokens: int = 0
    error: str | None = None  # the model failed: no reply


@dataclass(frozen=True, slots=True)
class CategoryAsked(TurnEvent):
    """A category call: the category runs it starts carry `call_id` as `main_call_id`.
    `by` is "router" for a call of the router's own (the rest a category left, or the
    category a reply told the user to use)."""

    call_id: str = ""
    category: str = ""
    by: Literal["model", "router"] = "model"
    objective: str = ""  # redacted and cut
    exact_input: str = ""  # redacted and cut


@dataclass(frozen=True, slots=True)
class CategoryAnswered(TurnEvent):
    """A category call came back. `category` is the one that answered; `declined` those
    that declined it first (the router retried the next-ranked one); `remainder` the
    part it left undone; `error` why the call did not run."""

    call_id: str = ""
    called: str = ""
    category: str = ""
    status: str = ""
    declined: tuple[str, ...] = ()
    tool_calls: int = 0
    summary: str = ""  # redacted and cut (a category's summary is redacted already)
    remainder: str | None = None
    question: str | None = None
    error: str | None = None


@dataclass(frozen=True, slots=True)
class TurnFinished(TurnEvent):
    outcome: Outcome = "answered"
    answer: str = ""  # redacted and cut
    categories: tuple[str, ...] = ()  # every category that ran, in order, retries too
    tool_calls: int = 0
    llm_calls: int = 0  # the main agent's own
    prompt_tokens: int = 0
    completion_tokens: int = 0
    duration_s: float = 0.0
    error: str | None = None


#: The `event` of every line a turn writes; a trace's other lines are its category runs'.
TURN_EVENTS = frozenset(
    record_kind(record)
    for record in (TurnStarted, AgentReplied, CategoryAsked, CategoryAnswered, TurnFinished)
)

Write = Callable[[TurnEvent], Awaitable[None]]


class TurnTrace:
    """Writes the records of one turn of a main agent, through `write`.

    Made afresh for each turn (`tracing.Tracer.turn`): what it keeps (counts, the
    names of the categories that ran, the last reply's text) is that turn's alone.

    Args:
        write: where each record goes.
        run_id: the turn's id.
        redactor: scrubs the config's secrets from every text recorded.
    """

    def __init__(self, write: Write, run_id: str, *, redactor: Redactor | None = None) -> None:
        self.run_id = run_id
        self._write = write
        self._redactor = redactor or Redactor()
        self._began = time.perf_counter()
        self._round = 0
        self._categories: dict[str, None] = {}
        self._tool_calls = 0
        self._prompt_tokens = 0
        self._completion_tokens = 0
        self._answer: str | None = None
        self._reached: Reached = "answered"

    def _text(self, text: str) -> str:
        return clipped(self._redactor.text(text), TEXT_CHARS)

    async def start(self, request: str, *, agent: str, session: str, guards: str = "") -> None:
        """Record that the user message `request` reached `agent`, under `guards`."""
        started = TurnStarted(
            self.run_id, 0, agent=agent, session=session, request=self._text(request), guards=guards
        )
        await self._write(started)

    def model(self, model: ChatModel) -> ChatModel:
        """`model`, with each of its calls recorded as an `AgentReplied`."""
        return _RecordedModel(model, self)

    async def replied(
        self,
        request: ChatRequest,
        reply: AssistantTurn | None,
        duration_s: float,
        *,
        error: str | None = None,
    ) -> None:
        """Record one call of the main agent's model: its reply, or the `error` instead."""
        self._round += 1
        usage = reply.usage if reply is not None else None
        prompt, completion = (usage.prompt_tokens, usage.completion_tokens) if usage else (0, 0)
        self._prompt_tokens += prompt
        self._completion_tokens += completion
        text = None if reply is None or reply.text is None else self._text(reply.text)
        await self._write(
            AgentReplied(
                self.run_id,
                self._round,
                tools=tuple(t.name for t in request.tools),
                calls=tuple(c.name for c in reply.tool_calls) if reply is not None else (),
                text=text,
                duration_s=round(duration_s, 6),
                prompt_tokens=prompt,
                completion_tokens=completion,
                error=None if error is None else self._text(error),
            )
        )

    async def called(self, call: ToolCall, *, by: Literal["model", "router"]) -> None:
        """Record that the category call `call` began."""
        arguments = call.arguments if isinstance(call.arguments, dict) else {}
        objective, given = arguments.get("objective", ""), arguments.get("exact_input", "")
        await self._write(
            CategoryAsked(
                self.run_id,
                self._round,
                call_id=call.id,
                category=call.name,
                by=by,
                objective=self._text(str(objective)),
                exact_input=self._text(str(given)),
            )
        )

    async def returned(
        self, call: ToolCall, result: CategoryResult | None, error: str | None
    ) -> None:
        """Record what the category call `call` came back with."""
        if result is None:
            await self._write(
                CategoryAnswered(
                    self.run_id,
                    self._round,
                    call_id=call.id,
                    called=call.name,
                    error=self._text(error or ""),
                )
            )
            return
        declined = tuple(result.declined or ())
        for name in (*declined, result.category):
            if len(self._categories) < _MAX_NAMES:
                self._categories.setdefault(name)
        self._tool_calls += len(result.executions)
        await self._write(
            CategoryAnswered(
                self.run_id,
                self._round,
                call_id=call.id,
                called=call.name,
                category=result.category,
                status=result.status,
                declined=declined,
                tool_calls=len(result.executions),
                summary=self._text(result.summary),
                remainder=None if result.remainder is None else self._text(result.remainder),
                question=None if result.question is None else self._text(result.question),
            )
        )

    def answered(self, answer: str, reached: Reached = "answered") -> None:
        """Note the turn's answer and how the loop came to it, recorded when it finishes."""
        self._answer, self._reached = answer, reached

    async def finish(self, error: BaseException | None = None) -> None:
        """Record how the turn ended: with the answer noted, or with `error`."""
        outcome: Outcome
        if error is not None:
            outcome = "failed" if isinstance(error, Exception) else "cancelled"
        elif not self._answer:
            outcome = "no_answer"
        else:
            outcome = self._reached
        why = None
        if isinstance(error, Exception):
            why = self._text(f"{type(error).__name__}: {error}")
        await self._write(
            TurnFinished(
                self.run_id,
                self._round,
                outcome=outcome,
                answer=self._text(self._answer or ""),
                categories=tuple(self._categories),
                tool_calls=self._tool_calls,
                llm_calls=self._round,
                prompt_tokens=self._prompt_tokens,
                completion_tokens=self._completion_tokens,
                duration_s=round(time.perf_counter() - self._began, 6),
                error=why,
            )
        )


class _RecordedModel:
    """A `ChatModel` that records each call of the one it wraps in a turn's trace."""

    def __init__(self, model: ChatModel, trace: TurnTrace) -> None:
        self._model = model
        self._trace = trace

    async def complete(self, request: ChatRequest) -> AssistantTurn:
        began = time.perf_counter()
        try:
            reply = await self._model.complete(request)
        except Exception as exc:
            took = time.perf_counter() - began
            await self._trace.replied(request, None, took, error=f"{type(exc).__name__}: {exc}")
            raise
        await self._trace.replied(request, reply, time.perf_counter() - began)
        return reply
