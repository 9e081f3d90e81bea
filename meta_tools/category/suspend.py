"""A category run between two model answers, as data: what a stateless replica needs to go on.

When the category's model cannot answer within the current request (an MCP
host on the 2026-07-28 protocol answers sampling in its *next* request), the
model raises `AnswerLater`; the loop stops right before that model call and
raises `RunSuspended` with a `SuspendedRun`: the run's state (messages,
executions, failure counts, round, offered tool names) and where it stopped.
Whoever serves the next request (any replica) passes it back to
`CategoryManager.run(..., resume=...)`, and the loop makes the same model
call again, which this time gets its answer.
"""

from __future__ import annotations

from typing import Literal

from pydantic import BaseModel, Field

from ..llm.types import ChatRequest
from .result import RunUsage
from .run import RunState

__all__ = ["RunSuspended", "SuspendedPhase", "SuspendedRun"]


SuspendedPhase = Literal["loop", "summary"]
"""Before a model call of the loop, or of the summary at the iteration limit."""


class SuspendedRun(BaseModel):
    """Where a run stopped: before a model call of the loop, or of the summary at the limit."""

    version: Literal[1] = 1
    category: str
    phase: SuspendedPhase
    elapsed_s: float = Field(ge=0)
    state: RunState
    declined: list[str] = Field(default_factory=list)
    """Categories that declined this call before `category` ran it (the router's retry)."""
    declined_usage: RunUsage = Field(default_factory=RunUsage)
    """What the runs of the `declined` categories cost, added to the result's usage."""


class RunSuspended(BaseException):
    """The run stopped before a model call whose answer comes with a later request.

    A `BaseException`, so that no `except Exception` on the way mistakes it for a fault.

    Attributes:
        point: where the run stopped, to pass back as `resume`.
        request: the model call it stopped before (made again on resume).
    """

    def __init__(self, point: SuspendedRun, request: ChatRequest) -> None:
        super().__init__(f"category {point.category!r} waits for its model")
        self.point = point
        self.request = request
