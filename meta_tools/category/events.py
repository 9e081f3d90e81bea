"""Events of a category run: one per step, for progress reports and traces."""

from __future__ import annotations

import re
from collections.abc import Awaitable, Callable
from dataclasses import asdict, dataclass, field
from functools import cache
from typing import Any

__all__ = [
    "Evaluated",
    "EventSink",
    "ModelCalled",
    "RunEvent",
    "RunFinished",
    "RunStarted",
    "ToolFinished",
    "ToolsSelected",
    "TraceRecord",
    "record_kind",
]


@dataclass(frozen=True, slots=True)
class TraceRecord:
    """A line of a trace: its `kind` is its class's name in snake case (`RunStarted`:
    `run_started`), and `as_dict` gives it with its fields."""

    @property
    def kind(self) -> str:
        return record_kind(type(self))

    def as_dict(self) -> dict[str, Any]:
        return {"event": self.kind, **asdict(self)}


def record_kind(record: type[TraceRecord]) -> str:
    """The `kind` of a record class (`RunStarted`: `run_started`), its trace lines' `event`."""
    return _snake_case(record.__name__)


@cache
def _snake_case(name: str) -> str:
    return re.sub(r"(?<!^)(?=[A-Z])", "_", name).lower()


@dataclass(frozen=True, slots=True)
class RunEvent(TraceRecord):
    """Common fields: which run, of which category, at which round."""

    run_id: str
    category: str
    round: int


@dataclass(frozen=True, slots=True)
class RunStarted(RunEvent):
    objective: str = ""
    guards: str = ""  # the guard profile in force: its name and the guards added or taken


@dataclass(frozen=True, slots=True)
class ToolsSelected(RunEvent):
    tools: tuple[str, ...] = ()
    duration_s: float = 0.0
    prompt_tokens: int = 0
    completion_tokens: int = 0


@dataclass(frozen=True, slots=True)
class ToolFinished(RunEvent):
    tool: str = ""
    call_id: str = ""
    ok: bool = True
    duration_s: float = 0.0
    error: str | None = None
    arguments: dict[str, Any] | str = field(default_factory=dict)  # redacted
    result: str | None = None  # redacted and cut, as the LLM saw it


@dataclass(frozen=True, slots=True)
class ModelCalled(RunEvent):
    """One call of the category's LLM: what was new in its prompt, and its reply (redacted).

    `messages` holds only the messages added since the previous call of the run
    (the first call: the rendered system prompt and the task), so a trace holds
    each message once. A call the model did not answer has no `reply` and
    carries the `error` instead, so a failed run's trace still shows what was sent.
    """

    phase: str = ""  # "select", "evaluate" or "summary"
    messages: tuple[dict[str, Any], ...] = ()
    tools: tuple[str, ...] = ()
    reply: dict[str, Any] = field(default_factory=dict)
    duration_s: float = 0.0
    error: str | None = None  # redacted


@dataclass(frozen=True, slots=True)
class Evaluated(RunEvent):
    decision: str = ""  # "more_tools" or "final"
    duration_s: float = 0.0
    prompt_tokens: int = 0
    completion_tokens: int = 0


@dataclass(frozen=True, slots=True)
class RunFinished(RunEvent):
    status: str = ""
    duration_s: float = 0.0
    llm_calls: int = 0
    prompt_tokens: int = 0
    completion_tokens: int = 0
    error: str | None = None  # a failed run's summary: what went wrong (redacted)


EventSink = Callable[[RunEvent], Awaitable[None]]
