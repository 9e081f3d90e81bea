"""What a main agent reports while it answers: its category calls, beside the runs' events."""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from dataclasses import dataclass
from typing import Literal

from ..category.events import RunEvent
from ..category.result import CategoryResult
from ..llm.types import ToolCall
from ..turn_trace import TurnTrace

__all__ = ["AgentStep", "CategoryCalled", "CategoryReturned", "StepSink", "traced"]


@dataclass(frozen=True, slots=True)
class CategoryCalled:
    """A category call began: one the main agent's model asked for, or (`by="router"`) one
    of the router's own (the rest a category left undone, or a category the reply named)."""

    call: ToolCall
    by: Literal["model", "router"] = "model"


@dataclass(frozen=True, slots=True)
class CategoryReturned:
    """A category call came back: a result, or an error the model is told about."""

    call: ToolCall
    result: CategoryResult | None = None
    error: str | None = None


AgentStep = CategoryCalled | CategoryReturned | RunEvent
StepSink = Callable[[AgentStep], Awaitable[None]]


def traced(trace: TurnTrace, on_step: StepSink | None) -> StepSink:
    """A step sink that records the category calls in `trace`, then passes each step on."""

    async def sink(step: AgentStep) -> None:
        if isinstance(step, CategoryCalled):
            await trace.called(step.call, by=step.by)
        elif isinstance(step, CategoryReturned):
            await trace.returned(step.call, step.result, step.error)
        if on_step is not None:
            await on_step(step)

    return sink
