"""The state of one category call: plain data (`RunState`) and the live parts around it (`Run`).

`RunState` is everything the loop has decided so far (messages, executions,
failure counts, the round, the names of the tools offered), as a dataclass
that pydantic writes to JSON and reads back, so that a run can be carried
between two model answers. `Run` adds what cannot travel: the event sink,
the tool objects offered and the start time.
"""

from __future__ import annotations

import time
import uuid
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field

from ..guards.base import GuardCounts
from ..guards.findings import nothing_found
from ..llm.types import Message
from ..tools.base import BaseTool
from .events import EventSink, RunEvent
from .result import Execution, RunUsage

__all__ = ["FAILURES_BEFORE_WITHDRAWAL", "Run", "RunState"]

#: A tool that failed this often in one run is no longer offered in that run.
FAILURES_BEFORE_WITHDRAWAL = 2


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
        return nothing_found(self.executions)

    def count_failure(self, tool: str) -> None:
        """Count a failure of `tool`; withdraw it after `FAILURES_BEFORE_WITHDRAWAL`."""
        self.failures[tool] = self.failures.get(tool, 0) + 1
        if self.failures[tool] >= FAILURES_BEFORE_WITHDRAWAL and tool not in self.withdrawn:
            self.withdrawn.append(tool)


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
