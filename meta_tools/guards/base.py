"""What a guard is: a hook at one stage of a round, and the actions it may return.

A guard (`Guard`, one subclass per rule) reads what its stage sees and returns an
action; the loop carries the action out, and no guard calls back into a loop:

- `Allow` (None): nothing to do, the next guard is asked;
- `Replace`: the reply, the calls or the answer read otherwise;
- `AskAgain`: answer the reply with a note and ask the model again;
- `Hold`: calls answered with why instead of run;
- `Route`: a category call of the router's own (the main agent);
- `Stop`: end with what the calls found (or a decline), without the model's words.

A guard's *budget* has one meaning everywhere: how often it may act in one
category run or one question (None: no limit). Its *text* is a Jinja2 template a
user may override with `guards/<name>.j2` in the prompts folder.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import Any, ClassVar, Literal, Protocol

from ..llm.types import AssistantTurn, Message, ToolCall

__all__ = [
    "Action",
    "AskAgain",
    "Guard",
    "GuardCounts",
    "Hold",
    "Leg",
    "Loop",
    "Ran",
    "Replace",
    "Result",
    "Route",
    "RunView",
    "Stage",
    "Stop",
]

Stage = Literal["request", "reply", "names", "calls", "results", "answer"]
"""Where a guard acts: on the model's reply as read, on the names it calls (and a
category's objective), on the calls, on what they returned, or on its answer."""
Loop = Literal["category", "main", "flat", "router"]
"""The loop a guard serves: a category's, the main agent's, a flat agent's over concrete
tools (the benchmarks' retrieval side), or the router's retry."""


@dataclass(frozen=True, slots=True)
class Replace:
    """Read the reply, the calls or the answer as this instead."""

    reply: AssistantTurn | None = None
    calls: list[ToolCall] | None = None
    answer: str | None = None
    status: str | None = None
    """The status the answer ends a category run with (None: the one it had)."""


@dataclass(frozen=True, slots=True)
class AskAgain:
    """Answer the reply with `messages` and ask the model again."""

    messages: list[Message]


@dataclass(frozen=True, slots=True)
class Hold:
    """Answer these calls with why (call id -> text) instead of running them."""

    notes: dict[str, str]


@dataclass(frozen=True, slots=True)
class Leg:
    """One category call of the router's own: `target` (a category's name or
    `any_category`) for `objective` with `exact_input`. `handed_on_by`: the category
    that did the first part of the task and left this one (`found`: what it found)."""

    target: str
    objective: str
    exact_input: str
    handed_on_by: str | None = None
    found: str = ""


@dataclass(frozen=True, slots=True)
class Route:
    """Category calls of the router's own, run in order (the main agent)."""

    legs: tuple[Leg, ...]


@dataclass(frozen=True, slots=True)
class Stop:
    """End now: with what the calls found, or (`declined`) as a decline saying why."""

    declined: str = ""


Action = Replace | AskAgain | Hold | Route | Stop | None


@dataclass(slots=True)
class GuardCounts:
    """How often each guard acted in one run or one question: the guards' one counter."""

    counts: dict[str, int] = field(default_factory=dict)

    def __getitem__(self, name: str) -> int:
        return self.counts.get(name, 0)

    def add(self, name: str) -> int:
        """Count one more act of `name`; the new count."""
        self.counts[name] = self.counts.get(name, 0) + 1
        return self.counts[name]

    def reset(self, name: str) -> None:
        self.counts.pop(name, None)


class Ran(Protocol):
    """A tool call a category ran (`category.result.Execution`), as its guards read it."""

    @property
    def tool(self) -> str: ...
    @property
    def arguments(self) -> Any: ...
    @property
    def ok(self) -> bool: ...
    @property
    def result(self) -> str | None: ...
    @property
    def error(self) -> str | None: ...
    @property
    def round(self) -> int: ...


class RunView(Protocol):
    """A category run (`category.run.RunState`), as its guards read it."""

    @property
    def objective(self) -> str: ...
    @property
    def exact_input(self) -> str: ...
    @property
    def request(self) -> str: ...
    @property
    def iteration(self) -> int: ...
    @property
    def executions(self) -> Sequence[Ran]: ...
    @property
    def past_runs(self) -> Sequence[dict[str, str]]: ...
    @property
    def messages(self) -> Sequence[Message]: ...
    @property
    def has_results(self) -> bool: ...
    @property
    def task_chars(self) -> int: ...
    @property
    def guarded(self) -> GuardCounts: ...


class Result(Protocol):
    """A category's result (`category.result.CategoryResult`), as the main agent's guards
    read it."""

    @property
    def category(self) -> str: ...
    @property
    def status(self) -> str: ...
    @property
    def summary(self) -> str: ...
    @property
    def remainder(self) -> str | None: ...
    @property
    def question(self) -> str | None: ...
    @property
    def executions(self) -> Sequence[Ran]: ...


class Guard:
    """One rule that second-guesses the model: a hook at one stage of a round.

    A subclass says what it is (its class attributes) and implements the hook of its
    stage (`on_reply`, `on_names`, `on_calls`, `on_results`, `on_answer`); each returns
    an action or None. A guard of the request stage has no hook: it is a rule the loop
    reads as it builds its request (`Guards.tools_a_call`, `Guards.routes_first`). The
    profile in force (`Guards`) asks its guards in the order of `guards.ALL` and builds
    one instance of each, with the budget and the text the config gives.

    Attributes:
        name: how configs, traces and docs name it.
        stage: where in a round it acts.
        loops: the loops it serves.
        does: what it does, in one sentence (docs and `meta-tools` listings).
        budget: how often it may act in one run or question (None: no limit).
        text: the model-facing text it sends, a Jinja2 template ("" for none).
    """

    name: ClassVar[str]
    stage: ClassVar[Stage]
    loops: ClassVar[frozenset[Loop]]
    does: ClassVar[str]
    budget: ClassVar[int | None] = None
    text: ClassVar[str] = ""

    __slots__ = ("_say", "limit")

    def __init__(self, limit: int | None, say: Callable[..., str]) -> None:
        self.limit = limit
        """How often it may act in one run or question (None: no limit)."""
        self._say = say

    def within(self, counts: GuardCounts) -> bool:
        """Whether it may act once more in the run or question `counts` counts."""
        return self.limit is None or counts[self.name] < self.limit

    def say(self, **values: Any) -> str:
        """Its text for the model, rendered with `values`."""
        return self._say(**values)

    def __repr__(self) -> str:
        return f"<guard {self.name}>"
