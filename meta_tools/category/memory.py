"""What a category remembers: one run's private memory, and a bounded memory of past runs.

A `RunMemory` lives for one invocation only, so concurrent runs never see
each other's messages or failures. A `SessionMemory` keeps the objective and
summary of recent runs per session, shown to the category's LLM as context.
"""

from __future__ import annotations

import time
from collections import Counter, OrderedDict, deque
from collections.abc import Callable
from dataclasses import dataclass, field

from ..llm.types import Message
from .events import EventSink, RunEvent
from .result import Execution, RunUsage, truncate

__all__ = ["FAILURES_BEFORE_WITHDRAWAL", "RunMemory", "SessionMemory"]

#: A tool that failed this often in one run is no longer offered in that run.
FAILURES_BEFORE_WITHDRAWAL = 2


@dataclass
class RunMemory:
    """The private memory of one invocation."""

    run_id: str
    objective: str
    sink: EventSink | None
    messages: list[Message] = field(default_factory=list)
    started: float = field(default_factory=time.perf_counter)
    executions: list[Execution] = field(default_factory=list)
    failures: Counter[str] = field(default_factory=Counter)
    withdrawn: list[str] = field(default_factory=list)
    usage: RunUsage = field(default_factory=RunUsage)
    iteration: int = 0

    async def emit(self, make: Callable[[], RunEvent]) -> None:
        """Send `make()` to the sink; the event is not even built without one."""
        if self.sink is not None:
            await self.sink(make())

    def count_failure(self, tool: str) -> None:
        """Count a failure of `tool`; withdraw it after `FAILURES_BEFORE_WITHDRAWAL`."""
        self.failures[tool] += 1
        if self.failures[tool] >= FAILURES_BEFORE_WITHDRAWAL and tool not in self.withdrawn:
            self.withdrawn.append(tool)


class SessionMemory:
    """Past runs (objective and summary) per session, bounded both ways.

    Each session keeps its last `size` runs; beyond `max_sessions` sessions the
    least recently used one is forgotten. `size=0` remembers nothing, and a run
    without a session is neither shown past runs nor remembered.
    """

    def __init__(self, size: int, *, max_sessions: int = 256) -> None:
        self.size = size
        self.max_sessions = max_sessions
        self._sessions: OrderedDict[str, deque[dict[str, str]]] = OrderedDict()

    def past_runs(self, session: str | None) -> list[dict[str, str]]:
        return list(self._sessions.get(session, ())) if session is not None else []

    def remember(self, session: str | None, objective: str, summary: str) -> None:
        if self.size == 0 or session is None:
            return
        key = session
        runs = self._sessions.get(key)
        if runs is None:
            runs = self._sessions[key] = deque(maxlen=self.size)
            while len(self._sessions) > self.max_sessions:
                self._sessions.popitem(last=False)
        self._sessions.move_to_end(key)
        runs.append({"objective": truncate(objective, 200), "summary": truncate(summary, 300)})

    def resized(self, size: int) -> SessionMemory:
        """This memory itself when `size` is its size (so it stays shared), else a copy."""
        if size == self.size:
            return self
        copy = SessionMemory(size, max_sessions=self.max_sessions)
        copy._sessions = OrderedDict(
            (key, deque(runs, maxlen=size)) for key, runs in self._sessions.items()
        )
        return copy
