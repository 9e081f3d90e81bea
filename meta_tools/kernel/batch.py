"""A round's calls as every loop runs them: the same call twice runs once, and a round
of nothing but calls that already succeeded is a repeat (guard `repeat_rounds`)."""

from __future__ import annotations

from collections.abc import Callable, Collection, Sequence
from typing import TypeVar

from ..llm.types import ToolCall, call_key

__all__ = ["call_key", "once", "only_repeats"]

Call = TypeVar("Call", bound=ToolCall)


def once(calls: Sequence[Call], key: Callable[[Call], str]) -> list[tuple[Call, Call]]:
    """Each call with the call that runs for it: itself, or the first earlier call of
    the reply with the same key (whose result it gets)."""
    first: dict[str, Call] = {}
    return [(call, first.setdefault(key(call), call)) for call in calls]


def only_repeats(keys: Collection[str], succeeded: Collection[str]) -> bool:
    """Whether a round's calls (their keys) all repeat calls that already succeeded."""
    return bool(keys) and all(key in succeeded for key in keys)
