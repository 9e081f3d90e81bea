"""The guard stages every round shares: the main agent's, the category's, and a flat loop's.

A round reads the model's reply, answers a reply it did not mean, runs the calls
and decides whether to go on. The loops differ in what a call is (a category, a
tool) and in how they end; these steps do not, so each guard of these stages is
written here once and every loop asks the same questions in the same order.
"""

from __future__ import annotations

import logging
from functools import cache
from typing import Literal

from ..guards import GuardCounts, Guards
from ..llm.recovery import arecover_turn, is_empty_reply, looks_like_call, nudge
from ..llm.types import AssistantTurn, ChatRequest, Message
from ..support.text import sentence

__all__ = ["read_reply", "repeat_verdict", "reply_note"]


async def read_reply(turn: AssistantTurn, request: ChatRequest, guards: Guards) -> AssistantTurn:
    """`turn` as the loop acts on it: with the calls it wrote as text read back when guard
    `text_calls` runs (quotes of what the model read stay text); else as it came."""
    if not guards.on("text_calls"):
        if not turn.tool_calls and looks_like_call(turn.text or ""):
            _hint_small_profile()
        return turn
    return await arecover_turn(turn, request)


_log = logging.getLogger("meta_tools.guards")


@cache
def _hint_small_profile() -> None:
    """Say once per process (cached) that the model writes its calls as text, which the
    default profile takes as its answer: the 1.5B solved 0 of 45 demo tasks so, 39 under
    `small`."""
    _log.warning(
        "the model wrote a tool call as text, which the guard profile in force ('capable')"
        " takes as its answer. Its name did not say it is small: for a small local model set"
        ' "guards": {"profile": "small"} in the config (or guards="small"), or name the'
        " model with its size (model.name, e.g. qwen2.5-coder:1.5b)"
    )


def reply_note(
    turn: AssistantTurn, guards: Guards, counts: GuardCounts, *, empty_counts: bool
) -> list[Message] | None:
    """The note that answers a reply the model did not mean, counted against its guard's
    budget; None to go on with the reply.

    Guard `unread_call`: the reply looks like a call that could not be read. Guard
    `empty_reply` (only where `empty_counts`: before anything worked): it is empty.
    """
    if turn.unread_call and guards.within("unread_call", counts):
        counts.add("unread_call")
        return nudge(turn, guards.text("unread_call", problem=sentence(turn.unread_call)))
    if empty_counts and guards.within("empty_reply", counts) and is_empty_reply(turn):
        counts.add("empty_reply")
        return [Message(role="user", content=guards.text("empty_reply"))]
    return None


def repeat_verdict(
    only_repeats: bool, guards: Guards, counts: GuardCounts
) -> Literal["go", "answer", "stop"]:
    """What follows a round (guard `repeat_rounds`): go on; tell the model to answer,
    because every call repeated one that had worked; or stop, because it did so again."""
    if not guards.on("repeat_rounds"):
        return "go"
    if not only_repeats:
        counts.reset("repeat_rounds")
        return "go"
    return "stop" if counts.add("repeat_rounds") >= guards.budget("repeat_rounds") else "answer"
