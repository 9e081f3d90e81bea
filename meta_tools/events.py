"""What a run reports, step by step: pass an `EventSink` to follow a category run or the main agent.

    RunEvent                  common fields: run_id, category, round
    ├── RunStarted            a category run began (its objective)
    ├── ToolsSelected         the tools offered this round
    ├── ModelCalled           one model request: what was new in it, and the reply or error
    ├── ToolFinished          one tool call ended (arguments, result or error, duration)
    ├── Evaluated             the model judged a round's results (more tools, or final)
    └── RunFinished           the run ended (status, usage, error)
    EventSink                 an async callable that receives each RunEvent
    CategoryCalled            a category call began: the model asked for it, or the router (`by`)
    CategoryReturned          a category call came back to the main agent
    AgentStep                 CategoryCalled | CategoryReturned | RunEvent, as MainAgent reports

Each name is imported on first use, like the top level's.
"""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from .agent import AgentStep, CategoryCalled, CategoryReturned
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

__all__ = [
    "AgentStep",
    "CategoryCalled",
    "CategoryReturned",
    "Evaluated",
    "EventSink",
    "ModelCalled",
    "RunEvent",
    "RunFinished",
    "RunStarted",
    "ToolFinished",
    "ToolsSelected",
]

_HOMES = {
    "AgentStep": "meta_tools.agent",
    "CategoryCalled": "meta_tools.agent",
    "CategoryReturned": "meta_tools.agent",
} | dict.fromkeys(
    ("Evaluated", "EventSink", "ModelCalled", "RunEvent", "RunFinished", "RunStarted",
     "ToolFinished", "ToolsSelected"),
    "meta_tools.category.events",
)  # fmt: skip


def __getattr__(name: str) -> Any:
    home = _HOMES.get(name)
    if home is None:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    value = getattr(importlib.import_module(home), name)
    globals()[name] = value
    return value


def __dir__() -> list[str]:
    return sorted({*globals(), *__all__})
