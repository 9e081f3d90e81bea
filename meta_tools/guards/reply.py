"""Guards of the reply stage: the model's reply as read, and the note that answers one it
did not mean. Every loop runs them (`kernel.run_rounds`); a flat agent runs only these."""

from __future__ import annotations

import logging
from functools import cache
from typing import ClassVar

from ..llm.recovery import arecover_turn, bare_name, is_empty_reply, looks_like_call, nudge
from ..llm.text_calls import TextCalls as WrittenCalls
from ..llm.types import ANY_CATEGORY, AssistantTurn, ChatRequest, Message, ToolDefinition
from ..support.text import sentence
from .base import Action, AskAgain, Guard, Leg, Loop, Replace, Route, Stage
from .main_checks import told_to_use
from .stages import ReplySeen

__all__ = ["EmptyReply", "ReplyGuard", "TextCalls", "ToldToUse", "UnreadCall", "hint_small_profile"]


class ReplyGuard(Guard):
    """A guard of the reply stage."""

    stage: ClassVar[Stage] = "reply"

    async def on_reply(self, seen: ReplySeen) -> Action:
        raise NotImplementedError


class TextCalls(ReplyGuard):
    name = "text_calls"
    loops: ClassVar[frozenset[Loop]] = frozenset({"category", "main", "flat"})
    does = (
        "Reads tool calls written as text (bare JSON, fences, tags) and calls to a near"
        " spelling of an offered tool as the calls they mean; quotes of what the model"
        " read stay text."
    )

    async def on_reply(self, seen: ReplySeen) -> Action:
        reply = await arecover_turn(seen.reply, seen.request)
        if seen.loop == "main":  # a name that is no category may still mean one
            reply = await routable(reply, seen.request)
        return Replace(reply=reply) if reply is not seen.reply else None


class UnreadCall(ReplyGuard):
    name = "unread_call"
    loops: ClassVar[frozenset[Loop]] = frozenset({"category", "main", "flat"})
    does = (
        "Answers a reply that looks like a call but cannot be read with a note, so that"
        " the model writes it again."
    )
    budget = 2
    text = (
        "Your reply looks like a tool call, but it could not be read: {{ problem }}"
        " Call one of the offered tools through the tool-calling interface, with its"
        " arguments as a JSON object. If none of them fits, say so in plain text."
    )

    async def on_reply(self, seen: ReplySeen) -> Action:
        reply = seen.reply
        if not reply.unread_call or not self.within(seen.counts):
            return None
        seen.counts.add(self.name)
        return AskAgain(nudge(reply, self.say(problem=sentence(reply.unread_call))))


class EmptyReply(ReplyGuard):
    name = "empty_reply"
    loops: ClassVar[frozenset[Loop]] = frozenset({"category"})
    does = "Asks again when the model replies nothing before any call has worked."
    budget = 2
    text = (
        "Your reply was empty. Call one of the offered tools through the tool-calling"
        " interface, or reply in plain text."
    )

    async def on_reply(self, seen: ReplySeen) -> Action:
        if not seen.empty_counts or not self.within(seen.counts):
            return None
        if not is_empty_reply(seen.reply):
            return None
        seen.counts.add(self.name)
        return AskAgain([Message(role="user", content=self.say())])


class ToldToUse(ReplyGuard):
    name = "told_to_use"
    loops: ClassVar[frozenset[Loop]] = frozenset({"main"})
    does = (
        'Runs the category a main-agent reply tells the user to use ("use the `files`'
        ' tool"), or the one a call it could not write names, instead of answering.'
    )
    budget = 1

    async def on_reply(self, seen: ReplySeen) -> Action:
        """The category a reply without calls sends the message to, before any category
        was called.

        The reply is a call still unreadable after the notes (the 1.5B offered a category
        named "tools" replied `<tools></tools>` again): the category the reply names
        alone ("call numbers"), else the one that ranks best for the message. Or the
        reply tells the user to use a category or tool: the one it names first. The
        model then answers with the result.
        """
        reply, category_for = seen.reply, seen.category_for
        if reply.tool_calls or seen.called or category_for is None:
            return None
        if not self.within(seen.counts):
            return None
        target: str | None
        if reply.unread_call:
            bare = bare_name(reply.text or "")
            target = (bare and category_for(bare)) or ANY_CATEGORY
        else:
            target = told_to_use(reply.text or "", category_for)
        if target is None:
            return None
        seen.counts.add(self.name)
        text = seen.text
        return Route((Leg(target, text, text),))


async def routable(reply: AssistantTurn, request: ChatRequest) -> AssistantTurn:
    """`reply` with the calls it wrote as text to names that are no category.

    Recovery reads only calls to offered tools. Seen with the 1.5B: it writes
    `performance_monitor_metrics` (a tool it read of as "performance monitor
    metrics") as a JSON call, again after every nudge; offered one category, it
    called the service its description names ("QR Code Generator") instead. Such a
    call is read as a native one would be, and the names stage routes it (a tool's
    name to its category, any other name as `any_category`); a name with no
    arguments is data, and calls quoted from the conversation are never read.
    """
    if reply.tool_calls or not reply.unread_call or not reply.text:
        return reply
    reading = WrittenCalls(reply.text)
    offered = {tool.name for tool in request.tools}
    names = {
        written.name
        for written in (*reading.tags, *reading.xml, *reading.json)
        if written.name not in offered
        and written.name.strip()
        and isinstance(written.arguments, dict)
        and not written.bare
    }
    if not names:
        return reply
    extra = [ToolDefinition(name=name) for name in sorted(names)]
    widened = request.model_copy(update={"tools": [*request.tools, *extra]})
    read = await arecover_turn(reply.model_copy(update={"unread_call": None}), widened)
    return read if read.tool_calls else reply


_log = logging.getLogger("meta_tools.guards")


@cache
def hint_small_profile() -> None:
    """Say once per process (cached) that the model writes its calls as text, which the
    default profile takes as its answer: the 1.5B solved 0 of 45 demo tasks so, 39 under
    `small`."""
    _log.warning(
        "the model wrote a tool call as text, which the guard profile in force ('capable')"
        " takes as its answer. Its name did not say it is small: for a small local model set"
        ' "guards": {"profile": "small"} in the config (or guards="small"), or name the'
        " model with its size (model.name, e.g. qwen2.5-coder:1.5b)"
    )


def writes_calls_as_text(reply: AssistantTurn) -> bool:
    """Whether a reply no guard read holds what looks like a call written as text."""
    return not reply.tool_calls and looks_like_call(reply.text or "")
