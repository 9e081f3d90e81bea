"""`ScriptedModel`: a `ChatModel` that replays a script, for tests and benchmarks."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import TypeAlias

from ..exceptions import ScriptExhaustedError
from .types import AssistantTurn, ChatRequest

__all__ = ["ScriptStep", "ScriptedModel"]

ScriptStep: TypeAlias = AssistantTurn | Callable[[ChatRequest], AssistantTurn]
"""A fixed turn, or a function that builds the turn from the request it answers."""


class ScriptedModel:
    """Answers each request with the next step of a script, and records the requests.

    A step is an `AssistantTurn` (returned as is, not copied) or a function of
    the `ChatRequest`. Built with `from_function`, the model answers every
    request with the same function and never runs out.

    Example:
        >>> model = ScriptedModel([AssistantTurn(text="hi")])
        >>> # await model.complete(request) -> the turn; model.requests == [request]
    """

    __slots__ = ("_function", "_next", "_steps", "requests")

    def __init__(self, steps: Sequence[ScriptStep]) -> None:
        self._steps: tuple[ScriptStep, ...] = tuple(steps)
        self._next = 0
        self._function: Callable[[ChatRequest], AssistantTurn] | None = None
        self.requests: list[ChatRequest] = []

    @classmethod
    def from_function(cls, function: Callable[[ChatRequest], AssistantTurn]) -> ScriptedModel:
        """Build a model that answers every request with `function(request)`, forever."""
        model = cls(())
        model._function = function
        return model

    @property
    def remaining(self) -> int:
        """Steps not yet used; always 0 for a model built by `from_function`."""
        return len(self._steps) - self._next

    async def complete(self, request: ChatRequest) -> AssistantTurn:
        """Record `request` and answer it with the next step.

        Raises:
            ScriptExhaustedError: every step has been used.
        """
        self.requests.append(request)
        if self._function is not None:
            return self._function(request)
        index = self._next
        if index >= len(self._steps):
            raise ScriptExhaustedError(self._exhausted_message(request))
        self._next = index + 1
        step = self._steps[index]
        return step if isinstance(step, AssistantTurn) else step(request)

    def assert_complete(self) -> None:
        """Check that the whole script was used.

        Raises:
            AssertionError: some steps were never reached.
        """
        if self.remaining:
            raise AssertionError(
                f"ScriptedModel has {self.remaining} unused step(s) of {len(self._steps)}:"
                f" it was called {len(self.requests)} time(s)"
            )

    def _exhausted_message(self, request: ChatRequest) -> str:
        last = request.messages[-1] if request.messages else None
        said = f"; the last message was {last.role} {last.content[:200]!r}" if last else ""
        return (
            f"ScriptedModel was called {len(self.requests)} time(s) but its script has"
            f" {len(self._steps)} step(s): add a step for this request{said}"
        )

    def __repr__(self) -> str:
        if self._function is not None:
            return f"ScriptedModel.from_function({self._function!r})"
        return f"ScriptedModel(steps={len(self._steps)}, remaining={self.remaining})"
