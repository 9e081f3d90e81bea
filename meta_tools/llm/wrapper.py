"""`ModelWrapper`: a chat model that adds to another one, and the way back to the one inside.

A wrapper (`RecoveringModel`, a counting or logging model) changes what `complete`
returns and nothing else, so code that asks what kind of model runs a category
(`serve` looks for the MCP host's model) must look through it: `find_model`.
"""

from __future__ import annotations

from typing import Protocol, TypeVar, runtime_checkable

from .base import ChatModel
from .types import AssistantTurn, ChatRequest

__all__ = ["ModelWrapper", "find_model", "innermost"]

M = TypeVar("M")


@runtime_checkable
class ModelWrapper(Protocol):
    """A `ChatModel` whose answers come from the model it wraps, `inner`."""

    @property
    def inner(self) -> ChatModel:
        """The wrapped model (itself perhaps a wrapper)."""
        ...

    async def complete(self, request: ChatRequest) -> AssistantTurn:
        """The inner model's turn, with what this wrapper adds."""
        ...


def find_model(model: ChatModel, kind: type[M]) -> M | None:
    """`model` if it is a `kind`, else the first `kind` among the models it wraps; else None."""
    seen: set[int] = set()
    current: ChatModel | None = model
    while current is not None and id(current) not in seen:
        if isinstance(current, kind):
            return current
        seen.add(id(current))
        current = current.inner if isinstance(current, ModelWrapper) else None
    return None


def innermost(model: object) -> object:
    """The model at the bottom of `model`'s wrappers (`model` itself when it wraps none):
    the one whose name and address say what answers."""
    seen: set[int] = set()
    while isinstance(model, ModelWrapper) and id(model) not in seen:
        seen.add(id(model))
        model = model.inner
    return model
