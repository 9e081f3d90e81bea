"""Guards of the reply stage: the model's reply as read, and the note that answers one it
did not mean. Every loop runs them (`kernel.run_rounds`); a flat agent runs only these."""

from __future__ import annotations

import logging
import re
from collections.abc import Callable, Mapping, Sequence
from functools import cache
from typing import ClassVar

from ..llm.recovery import arecover_turn, bare_name, is_empty_reply, looks_like_call, nudge
from ..llm.text_calls import TextCalls as WrittenCalls
from ..llm.types import (
    ANY_CATEGORY,
    AssistantTurn,
    ChatRequest,
    Message,
    ToolCall,
    ToolDefinition,
)
from ..support.text import sentence
from .base import Action, AskAgain, Guard, Leg, Loop, Replace, Route, Stage
from .main_checks import told_to_use
from .stages import ReplySeen

__all__ = [
    "EmptyReply",
    "ReplyGuard",
    "TextCalls",
    "ToldToUse",
    "UnreadCall",
    "WrittenResult",
    "hint_small_profile",
]


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
        " spelling of an offered tool as the calls they mean, as well as a category's"
        " calls to its own tools it was not offered; quotes of what the model read stay"
        " text."
    )

    async def on_reply(self, seen: ReplySeen) -> Action:
        reply = await arecover_turn(seen.reply, seen.request)
        if seen.loop == "main":  # a name that is no category may still mean one
            reply = await routable(reply, seen.request)
        elif seen.unoffered is not None:
            reply = await held_back(reply, seen.request, seen.unoffered)
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


class WrittenResult(ReplyGuard):
    name = "written_result"
    loops: ClassVar[frozenset[Loop]] = frozenset({"category", "main"})
    does = (
        "Takes a reply that is a tool's response the model wrote itself (`<tool_response>`,"
        " `<tool_result>`) or the earlier tasks its prompt showed (`<past_runs>`) as no"
        " answer, since no tool ran: the main agent runs the category it names (else the"
        " best-ranked one) for the message, or answers with the results it has; a"
        " category calls the tool it names when that requires nothing, else is asked"
        " again."
    )
    budget = 1
    text = (
        "{% if name %}Your reply names {{ name }} as a tool's response, but no tool ran."
        " To call it, use the tool-calling interface, with its arguments as a JSON"
        " object.{% elif past %}Your reply repeats the earlier tasks, which are context"
        " only. Do this task: call one of the offered tools through the tool-calling"
        " interface, or answer in plain text.{% else %}Your reply is a tool's response,"
        " but no tool ran: only a tool writes its response. Call one of the offered tools"
        " through the tool-calling interface, or answer in plain text.{% endif %}"
    )

    async def on_reply(self, seen: ReplySeen) -> Action:
        """Seen with the 1.5B in a chat: after a question answered from a category's
        result, it answered the next ones by writing `<tool_response>` blocks of tools
        that do not exist, with values it made up (2025-01-01 to 2025-03-01: "60" days).
        Its chat template shows tool messages so, and it went on the pattern. A block
        the conversation holds is a quote; a reply that explains the format (prose or a
        fence first) is an answer. A block that holds an offered tool's name alone
        (`<tool_result>Instant_Cameroon_News__Retrieve_data</tool_result>`) meant to
        call it: a tool that requires nothing is called (the 1.5B wrote that block again
        after each note), another's note says how."""
        reply = seen.reply
        text = "" if reply.tool_calls else (reply.text or "")
        past = _PAST_RUNS.match(text) is not None  # the loop's own fence: never a quote
        written = written_response(text)
        if written is None and not past:
            return None
        offered = {tool.name for tool in seen.request.tools}
        name = written.strip() if written and written.strip() in offered else None
        if written is not None and name is None and quoted(written, seen.request):
            return None
        if seen.loop == "main" and seen.called:
            return Replace(reply=AssistantTurn(text=""))  # the results are the answer
        if not self.within(seen.counts):
            return Replace(reply=AssistantTurn(text=""))
        seen.counts.add(self.name)
        if seen.loop == "main" and seen.category_for is not None:
            named = name or category_named_in(written or "")
            target = (named and seen.category_for(named)) or ANY_CATEGORY
            return Route((Leg(target, seen.text, seen.text),))
        if name is not None and seen.loop == "category" and not _requires(name, seen.request):
            return Replace(reply=AssistantTurn(tool_calls=[ToolCall(name=name)], recovered=1))
        note = self.say(name=name or "", past=past and written is None)
        return AskAgain([reply.as_message(), Message(role="user", content=note)])


_RESPONSE_TAG = re.compile(
    r"\A\s*(?:<tool_response>|<tool_result\b[^>]*>|<\|im_start\|>\s*tool\b|\[TOOL_RESULTS\])"
    r"\s*(?P<body>.*?)"
    r"\s*(?:</tool_response>|</tool_result>|<\|im_end\|>|\[/TOOL_RESULTS\]|\Z)",
    re.DOTALL,
)


_PAST_RUNS = re.compile(r"\A\s*<past_runs>")


def written_response(text: str) -> str | None:
    """The body of the tool response `text` opens with, as chat templates show one to the
    model (Qwen and Hermes `<tool_response>`, Mistral `[TOOL_RESULTS]`) or as a category
    fences one (`<tool_result>`), or None."""
    found = _RESPONSE_TAG.match(text)
    return found.group("body") if found else None


def quoted(body: str, request: ChatRequest) -> bool:
    """Whether `body` is in a user's message of the conversation (a quote of what the user
    pasted). A copy of an earlier tool message is no quote: seen with the 1.5B in one long
    chat, it answered new questions with earlier results copied whole."""
    squeezed = " ".join(body.split())
    return bool(squeezed) and any(
        squeezed in " ".join((message.content or "").split())
        for message in request.messages
        if message.role == "user"
    )


def _requires(name: str, request: ChatRequest) -> bool:
    """Whether the offered tool `name` requires an argument."""
    return any(bool(tool.parameters.get("required")) for tool in request.tools if tool.name == name)


def category_named_in(body: str) -> str | None:
    """The `category` a written response names (the router's result shape), or None."""
    found = re.search(r'"category"\s*:\s*"([^"]+)"', body)
    return found.group(1) if found else None


class EmptyReply(ReplyGuard):
    name = "empty_reply"
    loops: ClassVar[frozenset[Loop]] = frozenset({"category", "main"})
    does = (
        "Asks again when the model replies nothing before any call has worked; the main"
        " agent runs the best-ranked category for the message instead."
    )
    budget = 2
    text = (
        "Your reply was empty. Call one of the offered tools through the tool-calling"
        " interface, or reply in plain text."
    )

    async def on_reply(self, seen: ReplySeen) -> Action:
        """Seen with the 1.5B in a chat: after two questions answered from results, it
        replied to each next one with nothing at all (its first token ended the reply)."""
        if not is_empty_reply(seen.reply) or not self.within(seen.counts):
            return None
        if seen.loop == "main":
            if seen.called or seen.category_for is None:
                return None  # the results are the answer
            seen.counts.add(self.name)
            return Route((Leg(ANY_CATEGORY, seen.text, seen.text),))
        if not seen.empty_counts:
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
    names = _written_elsewhere(reply, request)
    return await _read_with(reply, request, [ToolDefinition(name=n) for n in sorted(names)])


async def held_back(
    reply: AssistantTurn,
    request: ChatRequest,
    tools: Callable[[], Mapping[str, ToolDefinition]],
) -> AssistantTurn:
    """`reply` with the calls it wrote as text to `tools()` (a category's own, not offered;
    built only for a reply that writes a call to a name not offered), read as calls to
    offered tools are: by name, in another case or separators, with a word in the plural
    (`recovery.meant_tool`).

    Seen with the 1.5B, offered two of a category's tools: it wrote a call to another
    (`fetch_weather_data`; `GET_quotes_by_year` for `GET_quote_by_Year`); told the name was
    not offered, it asked the user for the values it had just written, or declined. A
    native call to such a tool runs (the category runs any of its tools); one written as
    text now does too, its arguments checked against the tool's schema as any call's.
    """
    if not _written_elsewhere(reply, request):
        return reply
    return await _read_with(reply, request, list(tools().values()))


def _written_elsewhere(reply: AssistantTurn, request: ChatRequest) -> set[str]:
    """The names of the calls a reply no reading understood writes to tools `request`
    did not offer, with arguments (a bare name is data)."""
    if reply.tool_calls or not reply.unread_call or not reply.text:
        return set()
    reading = WrittenCalls(reply.text)
    offered = {tool.name for tool in request.tools}
    return {
        written.name
        for written in (*reading.tags, *reading.xml, *reading.json)
        if written.name not in offered
        and written.name.strip()
        and isinstance(written.arguments, dict)
        and not written.bare
    }


async def _read_with(
    reply: AssistantTurn, request: ChatRequest, extra: Sequence[ToolDefinition]
) -> AssistantTurn:
    """`reply` read again as if `request` had also offered `extra`; as it was when that
    reads no call."""
    if not extra:
        return reply
    widened = request.model_copy(update={"tools": [*request.tools, *extra]})
    read = await arecover_turn(reply.model_copy(update={"unread_call": None}), widened)
    return read if read.tool_calls else reply


_log = logging.getLogger("meta_tools.guards")


@cache
def hint_small_profile() -> None:
    """Say once per process (cached) that the model writes its calls as text, which the
    default profile takes as its answer: the 1.5B solved 0 of 45 demo tasks so, 38 to 39 under
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
