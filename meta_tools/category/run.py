"""The state of one category call: plain data (`RunState`) and the live parts around it (`Run`).

`RunState` is everything the loop has decided so far (messages, executions,
failure counts, the round, the names of the tools offered), as a dataclass
that pydantic writes to JSON and reads back, so that a run can be carried
between two model answers. `Run` adds what cannot travel: the event sink,
the tool objects offered and the start time.
"""

from __future__ import annotations

import json
import time
import uuid
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass, field
from typing import Any

from ..guards import GuardCounts
from ..llm.types import Message
from ..tools.base import BaseTool
from .events import EventSink, RunEvent
from .result import Execution, RunUsage

__all__ = ["FAILURES_BEFORE_WITHDRAWAL", "Run", "RunState", "found_nothing", "leaves"]

#: A tool that failed this often in one run is no longer offered in that run.
FAILURES_BEFORE_WITHDRAWAL = 2
#: A result longer than this holds something: `found_nothing` never parses it.
_NOTHING_CHARS = 4096
#: Texts that say how a call went, not what it found (`{"status": "ok", "items": []}`).
_STATUS_WORDS = frozenset(
    {"", "ok", "success", "succeeded", "done", "none", "null", "empty", "not found"}
    | {"no results", "no results found", "no matches", "no matches found", "nothing found"}
)

#: Keys whose empty lists say that nothing went wrong.
_PROBLEM_KEYS = frozenset(
    {"errors", "error", "warnings", "failures", "failed", "issues", "problems"}
)


@dataclass(slots=True)
class RunState:
    """What one category call has done so far; private to the call.

    Plain data: `pydantic.TypeAdapter(RunState)` writes it to JSON and reads it back.
    """

    objective: str
    exact_input: str
    session: str | None = None
    request: str = ""
    """The user's message the call came from, when the caller knows it: context only."""
    run_id: str = field(default_factory=lambda: uuid.uuid4().hex[:16])
    messages: list[Message] = field(default_factory=list)
    executions: list[Execution] = field(default_factory=list)
    failures: dict[str, int] = field(default_factory=dict)
    withdrawn: list[str] = field(default_factory=list)
    usage: RunUsage = field(default_factory=RunUsage)
    iteration: int = 0
    offered: list[str] = field(default_factory=list)
    """Names of the tools the next LLM call is offered."""
    traced: int = 0
    """How many of `messages` a `ModelCalled` event has reported (each is reported once)."""
    past_runs: list[dict[str, str]] = field(default_factory=list)
    """The session's past runs (objective, summary) when this run started, shown to the LLM."""
    guarded: GuardCounts = field(default_factory=GuardCounts)
    """How often each guard acted in this run (`meta_tools.guards`)."""

    @property
    def used(self) -> list[str]:
        """The tools this run has called, in first-use order."""
        return list(dict.fromkeys(e.tool for e in self.executions))

    @property
    def task_chars(self) -> int:
        """Characters of the task (objective, exact input, request): what the loop's
        notes quote and its checks read."""
        return len(self.objective) + len(self.exact_input) + len(self.request)

    @property
    def has_results(self) -> bool:
        """Some call of this run has worked: there is a result to answer from."""
        return any(e.ok for e in self.executions)

    @property
    def found_nothing(self) -> list[str]:
        """The tools whose calls worked and found nothing, when no call found anything."""
        worked = [e for e in self.executions if e.ok]
        if not worked or not all(found_nothing(e.result, e.arguments) for e in worked):
            return []
        return list(dict.fromkeys(e.tool for e in worked))

    def count_failure(self, tool: str) -> None:
        """Count a failure of `tool`; withdraw it after `FAILURES_BEFORE_WITHDRAWAL`."""
        self.failures[tool] = self.failures.get(tool, 0) + 1
        if self.failures[tool] >= FAILURES_BEFORE_WITHDRAWAL and tool not in self.withdrawn:
            self.withdrawn.append(tool)


def found_nothing(result: str | None, arguments: dict[str, Any] | str = "") -> bool:
    """Whether a tool's result is JSON whose lists and objects are all empty, whose
    numbers are all 0 and whose texts only repeat the call's `arguments`:
    `[]`, `{"query": "line 1", "total_matches": 0, "matches": []}` for query "line 1".

    A search that found nothing has not answered a task that asked for what it would
    find. Seen with the 1.5B on demo x4: sent "find line 1 of notes.txt" to the text
    category, it searched the text "notes.txt", found no match, and answered "line 1".
    A result with no list (`{"words": 0}`, `{}`, no text: an action's "done") is a
    finding, and so is a text the call was not given other than a status ("ok")
    (demo d3: `shift_date` gave `{"result": "2025-04-15", ..., "notes": []}`).
    """
    if not result or len(result) > _NOTHING_CHARS:
        return False
    try:
        value = json.loads(result)
    except ValueError:
        return False
    given = {_plain(str(value)) for value in leaves(arguments)}
    return isinstance(value, list | dict) and _holds_nothing(value, given)


def _holds_nothing(value: Any, given: set[str]) -> bool:
    if isinstance(value, list):
        return not value
    if isinstance(value, dict):
        # An empty list of errors is good news, not an empty finding: an action that
        # reports `{"status": "ok", "errors": []}` has done what it was asked.
        inner = [
            v
            for k, v in value.items()
            if isinstance(v, list | dict) and str(k).casefold() not in _PROBLEM_KEYS
        ]
        numbers = [
            v for v in value.values() if isinstance(v, int | float) and not isinstance(v, bool)
        ]
        said = [v for v in value.values() if isinstance(v, str) and not _echo(v, given)]
        nothing_inside = all(_holds_nothing(v, given) for v in inner)
        return bool(inner) and nothing_inside and not any(numbers) and not said
    return False


def leaves(value: Any) -> Iterator[Any]:
    """The values inside a JSON value (a call's arguments), at any depth: its texts that
    are not blank and its numbers; no booleans and no nulls."""
    if isinstance(value, bool) or value is None:
        return
    if isinstance(value, dict):
        for item in value.values():
            yield from leaves(item)
    elif isinstance(value, list):
        for item in value:
            yield from leaves(item)
    elif str(value).strip():
        yield value


def _plain(text: str) -> str:
    """A text as an echo is compared: the path marks around it do not count (the
    call's folder `data/` comes back as `data`)."""
    return text.strip().strip("./")


def _echo(text: str, given: set[str]) -> bool:
    """Whether a result's text repeats the call's arguments or says only how it went."""
    status = " ".join(text.replace("_", " ").replace("-", " ").casefold().split()).rstrip(".")
    return _plain(text) in given or status in _STATUS_WORDS


@dataclass
class Run:
    """One category call in flight: its state, and where its events and tools come from."""

    state: RunState
    sink: EventSink | None = None
    tools: list[BaseTool] = field(default_factory=list)
    """The tools the next LLM call is offered (their names are `state.offered`)."""
    started: float = field(default_factory=time.perf_counter)

    def offer(self, tools: Sequence[BaseTool]) -> None:
        """Offer `tools` to the next LLM call (and record their names in the state)."""
        self.tools = list(tools)
        self.state.offered = [t.name for t in tools]

    async def emit(self, event: Callable[[], RunEvent]) -> None:
        """Send `event()` to the sink; without a sink the event is not even built.

        Pass the event's class with its fields bound (`functools.partial`).
        """
        if self.sink is not None:
            await self.sink(event())
