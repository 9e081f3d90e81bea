"""What a category remembers between runs: a bounded memory of past runs per session.

A `SessionMemory` keeps the objective and summary of recent runs per session,
shown to the category's LLM as context. (One run's own state is `RunState`.)
"""

from __future__ import annotations

from collections import OrderedDict, deque

from .result import truncate

__all__ = ["SessionMemory"]


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
