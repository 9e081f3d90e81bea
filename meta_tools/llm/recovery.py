"""Tool calls written as text: read them back into `ToolCall`s.

Small and local models often answer a tool call in `content` instead of
`tool_calls`: bare ``{"name": ..., "arguments": {...}}``, a fenced ```json
block, several calls in a row or in a list, wrapped in a tag (``<tool_call>``,
even ``<tool_result>``), with the last brace missing, in XML form
(``<function name="x"><arguments><k>v</k></arguments></function>``), as one tag
(``<tool_call tool="x" arguments={...}>``), as an element named after the tool
(``<x k="v">``, ``<x><k>v</k></x>``, when the keys fit its schema), or as
arguments alone beside prose that names the tool. `recover_turn` turns such a turn into the calls it meant, but only
calls that name an offered tool; when the text looks like a call yet none can be read, it says why, so
that the loop can tell the model to try again.

Never recovered, and never answered as an unreadable call either:

- a *quote*: a call that the request already holds in text the model did not
  write (a tool result, the user's words, the system prompt; `llm.quotes`),
  in any form. A reply that repeats a page's ``{"name": "send_money", ...}`` is
  telling about the page; running it would let the page's author call tools.
  Asking the model to "make that call properly" would do the same, so a quote
  is plain text. Arguments written alone are a quote when the request holds
  that JSON object anywhere.
- *data with a name*: ``{"name": "Alice Martin"}`` is a call only when it names
  an offered tool, and an object whose arguments are no JSON object only when
  it names one (``{"action": "Final Answer", "action_input": "..."}`` is an answer).

Reading is linear in the reply and bounded (`llm.text_calls`); `arecover_turn`
reads long texts in a worker thread, off the event loop.
"""

from __future__ import annotations

import bisect
import contextlib
import re
from collections.abc import Callable, Collection, Mapping, Sequence
from dataclasses import dataclass
from functools import cache, partial
from typing import Any

from ..support.json_text import MAX_DEPTH, depth_within, loads
from ..support.off_loop import INLINE_CHARS, by_size
from ..support.suggest import did_you_mean_tool, tool_text
from ..support.text import clipped
from .base import ChatModel
from .owned import close_model
from .quotes import Quotes
from .text_calls import CALL_MARK, TextCalls, Written
from .types import (
    RESERVED_TOOL_NAMES,
    AssistantTurn,
    ChatRequest,
    Message,
    ToolCall,
    ToolDefinition,
)

__all__ = [
    "INLINE_CHARS",
    "MAX_RECOVERED_CALLS",
    "RecoveringModel",
    "Recovery",
    "arecover_turn",
    "bare_name",
    "calls_in_text",
    "is_empty_reply",
    "looks_like_call",
    "meant_tool",
    "nudge",
    "recover_calls",
    "recover_turn",
    "repetition",
    "same_tool",
]

#: Calls read from one reply; those written after them stay text. (A category runs 16 a
#: round; the main agent runs all of a turn's calls at once.)
MAX_RECOVERED_CALLS = 64

#: A reply's end looked at for a repetition loop, the longest piece looked for, and the
#: characters it must repeat over.
_LOOP_WINDOW = 1_200
_MAX_LOOP_PIECE = 100
_MIN_LOOP_CHARS = 120
#: Tags, fences and separators that may surround or follow a call written as text.
_WRAPPING = re.compile(r"(?:\s|```(?:json)?|</?[A-Za-z_][\w-]*(?:\s[^<>]*)?>|[,\[\]])*")
#: A reply of bare tags and fences only: neither a call nor an answer (`[]` says "no
#: call"; a tag with attributes is judged as an element call, or is text).
_MARKUP_ONLY = re.compile(r"\s*(?:(?:```(?:json)?|</?[A-Za-z_][\w-]*\s*/?>)\s*)+")
#: A fenced tool result (`category.turns.fence_result`) as a model copies it, to its
#: closing tag or the end of the reply, in the `<tool_response>` of Qwen's template or not.
_RESULT_FENCE = re.compile(
    r"(?:<\s*tool_response\s*>\s*)?"
    r'<\s*tool_result\s+tool\s*=\s*"(?P<tool>[^"<>]{1,200})"[^>]{0,200}>'
    r".*?(?:<\s*/\s*tool_result\s*>(?:\s*<\s*/\s*tool_response\s*>)?|\Z)",
    re.IGNORECASE | re.DOTALL,
)
#: Where a call can be written at all.
_MAY_HOLD_CALL = re.compile(r"[{<\[]")
#: A reply that is only a tool's name, as an order: "call search_files" (the 1.5B, after a
#: failed call). Never run as written: the text may be copied from a tool result.
_BARE_NAME = re.compile(
    r"(?:(?:call|use|run)\s+)?[`'\"]?(?P<name>[\w.-]{1,64})[`'\"]?\.?", re.IGNORECASE
)
#: Stripped replies longer than this are no bare name (one is at most 64 characters) and
#: are not matched: the pattern's optional parts backtrack on long runs of whitespace.
_BARE_NAME_CHARS = 80
#: Calls and marks of a reply looked for, as written, in the request's texts (each look
#: reads them all); and the characters compared from a mark on.
_MAX_VERBATIM_CHECKS = 64
_MARK_CHARS = 32

Properties = dict[str, Any]


@dataclass(frozen=True, slots=True)
class Recovery:
    """What the text of a turn held.

    Attributes:
        calls: the calls read from it, each naming an offered tool.
        text: the text with those calls (and their wrapping) taken out.
        problem: why a text that looks like a call gave none, else None.
    """

    calls: list[ToolCall]
    text: str
    problem: str | None = None


def looks_like_call(text: str) -> bool:
    """True when `text` has the marks of a tool call (`{"name": ...`, a `<tool_call>` tag)."""
    return bool(CALL_MARK.search(text))


#: A name's words: capitals (an acronym), a capitalised or lower-case word, digits, and
#: runs of other letters (so that a name in another script keeps its words).
_WORD = re.compile(r"[A-Z]+(?![a-z])|[A-Z]?[a-z]+|[0-9]+|[^\W\dA-Za-z_]+")


def _spelling(name: str) -> str:
    """`name` without case, separators or plural endings: `GET_quotes_by_year`,
    `getQuoteByYear` and `GET_quote_by_Year` all read `getquotebyyear`."""
    return "".join(_words(name))


def _words(name: str) -> list[str]:
    """`name`'s words in lower case and singular (`GET_quotes_by_year`: get, quote, by, year)."""
    return [_singular(word.lower()) for word in _WORD.findall(name)]


def _singular(word: str) -> str:
    return word[:-1] if len(word) > 3 and word.endswith("s") and not word.endswith("ss") else word


def offered_name(name: str, offered: Collection[str]) -> str | None:
    """The offered tool `name` means: itself, or the one offered name it writes in
    another case, with other separators or a word in the plural (the 1.5B wrote
    `GET_quotes_by_year` for the offered `GET_quote_by_Year`, and told the name was
    not offered, gave up); None when it means none, or several."""
    if name in offered:
        return name
    key = _spelling(name)
    found = [tool for tool in offered if _spelling(tool) == key] if key else []
    return found[0] if len(found) == 1 else None


def meant_tool(name: str, arguments: object, offered: Mapping[str, Properties]) -> str | None:
    """The offered tool a call means: `offered_name`'s, else the one tool whose name has
    every word of `name` and whose schema the call's `arguments` fit (`_fits`).

    Seen with the 1.5B: the main agent's objective for "What is line 2 of notes.txt?"
    was `read`, and the files category called `read(path, start_line, max_lines)`;
    told `did you mean 'read_file'?`, it declined. A name that several tools hold, or
    arguments another tool's schema would take, mean none: the model is told instead.

    A tool's function written under another service's name means the one offered tool
    with that function whose schema takes the call's arguments (`_same_function`).

    A name of two words or more that every fitting tool's name starts with is a
    family's (a service's) name: it means the first of them offered, the best-ranked.
    Seen with the 1.5B: `dna2protein` with `{"dna": ...}`, where `dna2protein__DNA2AminoAcid`
    and `dna2protein__DNA2mRNA` both take `dna`; told the name was not offered, it declined.
    """
    found = offered_name(name, offered)
    if found is not None or not isinstance(arguments, dict):
        return _control_shaped(found, arguments, offered) or found
    if not arguments:
        return _same_function(name, arguments, offered)
    words = _words(name)
    fitting = [
        tool
        for tool, schema in offered.items()
        if tool not in RESERVED_TOOL_NAMES
        and set(words) <= set(_words(tool))
        and _fits(arguments, schema)
    ]
    if not words or not fitting:
        return _same_function(name, arguments, offered)
    family = len(words) >= 2 and all(_words(tool)[: len(words)] == words for tool in fitting)
    return fitting[0] if len(fitting) == 1 or family else None


def _control_shaped(
    tool: str | None, arguments: object, offered: Mapping[str, Properties]
) -> str | None:
    """The offered control call (`request_input`, `decline`) whose arguments a call to
    the offered `tool` gives, when that tool takes none of them.

    Seen with the 1.5B on the StableToolBench tuning samples, three times:
    `Translate_it__options({"missing": [...], "question": "Please provide the languages"})`.
    The tool ran (it ignored what it did not take) and counted as a wrong call, while the
    model was asking for input. A tool that takes one of the arguments is called as
    written; a name not offered is answered as such, and the model can correct itself.
    """
    if tool is None or tool in RESERVED_TOOL_NAMES or not isinstance(arguments, dict):
        return None
    if not arguments or arguments.keys() & set(offered[tool].get("properties") or {}):
        return None
    shaped = [
        control
        for control in RESERVED_TOOL_NAMES
        if control in offered and _fits(arguments, offered[control])
    ]
    return shaped[0] if len(shaped) == 1 else None


def _same_function(
    name: str, arguments: dict[str, Any], offered: Mapping[str, Properties]
) -> str | None:
    """The one offered tool whose function (the part after a service's `__`) `name` writes
    under another service's name, and whose schema has every argument the call gives.

    Seen with the 1.5B: `Password_Generator_API__Generate_Password`, with the eight
    arguments of the offered `Password_Generator__Generate_Password`, beside the offered
    `Password_Generator_API__Base`; told the name was not offered, it declined. And
    `Amazon_Data_v3__Categories_List` with no arguments, for `Amazon_Data_v2__Categories_List`.
    """
    service, _, function = name.rpartition("__")
    if not service or not function:
        return None
    key = _spelling(function)
    same = [
        tool
        for tool, schema in offered.items()
        if "__" in tool and _spelling(tool.rpartition("__")[2]) == key and _takes(arguments, schema)
    ]
    return same[0] if len(same) == 1 else None


def _judge(
    written: Written, offered: Mapping[str, Properties], documents: Mapping[str, str]
) -> tuple[ToolCall | None, str | None]:
    """`written` as a call to an offered tool; else None and, if it meant to be one, why not.

    An element named after a tool is a call only when its arguments fit the tool's
    schema: `<search>` in prose, or markup that shares a tool's name, is text.
    """
    arguments = written.arguments
    name = meant_tool(written.name, arguments, offered) or written.name
    if written.form == "element" and not (
        name in offered and isinstance(arguments, dict) and _fits(arguments, offered[name])
    ):
        return None, None
    if name in offered:
        if not isinstance(arguments, dict):
            return None, f"the arguments of {name!r} are not a JSON object"
        if not depth_within(arguments, MAX_DEPTH):
            return None, f"the arguments of {name!r} nest deeper than {MAX_DEPTH} levels"
        return ToolCall(name=name, arguments=arguments), None
    if written.form == "json" and (written.bare or not isinstance(arguments, dict)):
        return None, None  # data that has a name, not a call
    return None, _not_offered(name, documents)


def _not_offered(name: str, documents: Mapping[str, str]) -> str:
    """Why `name` was not run, with the offered tool it may mean (by name, or by what
    the tools' `documents` say), as an unknown native call is answered (`ToolPack.get_tool`)."""
    hint = did_you_mean_tool(name, documents, n=1)
    listed = f"{name!r} is not one of the offered tools ({', '.join(sorted(documents))})"
    return f"{listed}; {hint}" if hint else listed


def _leftover(rest: str) -> str:
    """What a text says besides its calls: nothing when only their wrapping is left."""
    return "" if _WRAPPING.fullmatch(rest) else rest.strip()


def _without(text: str, spans: list[tuple[int, int]]) -> str:
    """`text` with the spans taken out."""
    kept: list[str] = []
    position = 0
    for start, end in sorted(set(spans)):
        if start >= position:
            kept.append(text[position:start])
            position = end
    kept.append(text[position:])
    return "".join(kept)


def _recover(
    reading: TextCalls,
    text: str,
    parameters: Mapping[str, Properties],
    quotes: Callable[[], Quotes] | None,
    documents: Mapping[str, str] | None = None,
) -> Recovery:
    """The calls of the first form `text` writes any in (tags, XML, JSON, elements named
    after an offered tool), quotes left out. `documents`: what each offered tool does
    (for the note on a call to a tool not offered)."""
    checks = 0
    documents = documents or dict.fromkeys(parameters, "")  # names alone: hints by name
    code = _code_spans(text)
    forms: tuple[Callable[[], list[Written]], ...] = (
        lambda: reading.tags,
        lambda: reading.xml,
        lambda: reading.json,
        partial(reading.elements, parameters),
    )
    for form in forms:
        calls: list[ToolCall] = []
        spans: list[tuple[int, int]] = []
        problems: list[str] = []
        for item in form():
            if len(calls) == MAX_RECOVERED_CALLS:
                break
            if _in_code(item.start, text, code):
                continue  # an example in code (`tools = [...]`, a ```python block) is no call
            call, problem = _judge(item, parameters, documents)
            if call is None and problem is None:
                continue
            checks += 1
            verbatim = reading.written(item) if checks <= _MAX_VERBATIM_CHECKS else None
            if _quoted(item, call, verbatim, parameters, quotes):
                continue
            if call is not None:
                calls.append(call)
                spans.append((item.start, item.end))
            else:
                problems.append(str(problem))
        if calls:
            return Recovery(calls, _leftover(_without(text, spans)))
        if problems:
            return Recovery([], text, "; ".join(dict.fromkeys(problems)))
    marks = list(reading.marks())
    if marks and not _all_quoted(reading.text, marks, quotes):
        return Recovery([], text, "it is not valid JSON")
    return Recovery([], text)


#: A fenced block of code in a language that is no way of writing a call.
_CODE_FENCE = re.compile(r"```[ \t]*(?P<lang>[\w+#.-]+)[^\n]*\n.*?(?:```|\Z)", re.DOTALL)
_CALL_FENCES = frozenset({"json", "json5", "jsonc", "tool_call", "tool_code", "xml", "function"})
#: Code that assigns or passes what follows (`tools = [`, `create(tools=[`).
_ASSIGNED = re.compile(r"[\w\])]\s*(?:=|\()\s*\[?\s*$")


def _code_spans(text: str) -> list[tuple[int, int]]:
    """Where `text` holds fenced code in a programming language."""
    if "```" not in text:
        return []
    return [m.span() for m in _CODE_FENCE.finditer(text) if m["lang"].lower() not in _CALL_FENCES]


def _in_code(start: int, text: str, code: list[tuple[int, int]]) -> bool:
    """Whether the call written from `start` on is part of code: inside a fenced block of
    a programming language, or a value that code assigns or passes."""
    if any(begin <= start < end for begin, end in code):
        return True
    return _ASSIGNED.search(text[max(0, start - 40) : start]) is not None


def _quoted(
    written: Written,
    call: ToolCall | None,
    verbatim: str | None,
    parameters: Mapping[str, Properties],
    quotes: Callable[[], Quotes] | None,
) -> bool:
    """Whether the request already holds `written` in text the model did not write.

    As a call (its tool and arguments, however written there, under the name the reply
    wrote or the offered tool it means: a page's `send_money` echoed as `SEND_MONEY` or
    `send` is the page's), or as `verbatim`, the text it takes in the reply (which a
    text that breaks off may hold, read otherwise).
    """
    if quotes is None:
        return False
    if written.form == "element" and quotes().holds_element(written.name):
        return True
    names = dict.fromkeys((written.name, call.name if call else written.name))
    for name in names:
        typed = partial(_typed, _properties(parameters, name))
        if quotes().holds_call(name, written.arguments, typed):
            return True
    # A page's call under another spelling of the tool it would run as (`SEND_MONEY`,
    # `sendMoney`, `bank__send_money`, the short `send` for `send_money`).
    meant = {same_tool(name) for name in names}
    target = call.name if call else written.name
    words = set(_words(target))
    typed = partial(_typed, _properties(parameters, target))
    for quoted, arguments in quotes().calls.items():
        short = set(_words(quoted))
        runs_as = same_tool(quoted) in meant or (bool(short) and short <= words)
        if runs_as and any(typed(a) == typed(written.arguments) for a in arguments):
            return True
    return verbatim is not None and quotes().holds_text(verbatim)


def same_tool(name: str) -> str:
    """What makes two names one tool wherever the router resolves names: case,
    separators, plural endings and a server's `server__` prefix do not count
    (`SEND_MONEY`, `Send-Money`, `sendMoney` and `bank__send_money` are all
    `sendmoney`). The quote check and the main agent's routing both use it."""
    return _spelling(name.rpartition("__")[2] or name)


def _all_quoted(text: str, marks: list[int], quotes: Callable[[], Quotes] | None) -> bool:
    """Whether the text at each of these marks of a call is part of a text the model read."""
    if quotes is None or len(marks) > _MAX_VERBATIM_CHECKS:
        return False
    return all(quotes().holds_text(text[mark : mark + _MARK_CHARS]) for mark in marks)


def recover_calls(text: str, offered: Collection[str]) -> Recovery:
    """Read the tool calls written in `text`, keeping those that name an `offered` tool."""
    parameters = offered if isinstance(offered, Mapping) else {name: {} for name in offered}
    return _recover(TextCalls(text), text, parameters, None)


def _named_arguments(
    reading: TextCalls, text: str, parameters: Mapping[str, Properties]
) -> Recovery | None:
    """A call written as its arguments alone, beside prose naming the tool.

    The 1.5B model wrote "use the `files` function with the following exact input:"
    and then `{"objective": ..., "exact_input": ...}`. Read as a call only when the
    object's keys fit the tool's schema (every required key, no unknown one) and
    the text around it names exactly one offered tool whose schema they fit.
    """
    calls: list[ToolCall] = []
    spans: list[tuple[int, int]] = []
    mentions: dict[str, list[int]] = {}
    for start, end, value in reading.values:
        if not isinstance(value, dict) or not value:
            continue
        if len(calls) == MAX_RECOVERED_CALLS:
            break
        fitting = [
            name
            for name, schema in parameters.items()
            if _fits(value, schema) and _named_around(reading.text, name, start, end, mentions)
        ]
        if len(fitting) != 1 or not depth_within(value, MAX_DEPTH):
            return None
        calls.append(ToolCall(name=fitting[0], arguments=value))
        spans.append((start, end))
    if not calls:
        return None
    return Recovery(calls, _leftover(_without(text, spans)))


def _named_around(text: str, name: str, start: int, end: int, seen: dict[str, list[int]]) -> bool:
    """Whether `text` names `name` outside `text[start:end]` (each name searched for once)."""
    if name not in seen:
        word = re.compile(rf"(?<![\w-]){re.escape(name)}(?![\w-])")
        seen[name] = [match.start() for match in word.finditer(text)]
    places = seen[name]
    inside = bisect.bisect_left(places, end) - bisect.bisect_left(places, start - len(name) + 1)
    return len(places) > inside


def _quoted_arguments(call: ToolCall, parameters: Mapping[str, Properties], quotes: Quotes) -> bool:
    """Whether arguments written alone are a JSON object, or a call, the request already holds."""
    arguments = call.arguments
    if isinstance(arguments, dict) and quotes.holds_object(arguments):
        return True
    typed = partial(_typed, _properties(parameters, call.name))
    return quotes.holds_call(call.name, arguments, typed)


def _fits(arguments: dict[str, Any], schema: dict[str, Any]) -> bool:
    """True when `schema` requires something, and `arguments` has every required key of it
    and no key it lacks (`_takes`)."""
    return bool(schema.get("required")) and _takes(arguments, schema)


def _takes(arguments: dict[str, Any], schema: dict[str, Any]) -> bool:
    """True when `arguments` has every required key of `schema` and no key it lacks."""
    required = set(schema.get("required") or ())
    return required <= arguments.keys() <= set(schema.get("properties") or {})


def repetition(text: str) -> tuple[int, str] | None:
    """Where `text` starts repeating one piece to its end, and the piece; None if it does not.

    A small model at temperature 0 can write the same few words until its token
    limit cuts the reply (the 1.5B wrote "workout music mix, " 60 times inside a
    call's argument). Only the last `_LOOP_WINDOW` characters are looked at, for
    pieces of up to `_MAX_LOOP_PIECE` characters repeated over `_MIN_LOOP_CHARS`.
    """
    tail = text[-_LOOP_WINDOW:]
    for size in range(1, _MAX_LOOP_PIECE + 1):
        run = 0  # characters at the end equal to the one `size` before them
        while run < len(tail) - size and tail[-1 - run] == tail[-1 - run - size]:
            run += 1
        if run >= max(_MIN_LOOP_CHARS, 3 * size) and tail[-size:].strip():
            start = len(text) - run - size  # where the loop starts: read on before the window
            while start > 0 and text[start - 1] == text[start - 1 + size]:
                start -= 1
            return start, text[start : start + size]
    return None


def nudge(turn: AssistantTurn, note: str) -> list[Message]:
    """The messages that answer a reply whose call could not be read: the reply, then
    `note` (guard `unread_call`'s text), so that the model writes the call again.

    A reply that repeats itself to its end is echoed with the repetition cut out,
    and the note names it: echoed whole, the model at temperature 0 wrote the same
    loop again.
    """
    echoed = turn.as_message()
    text = turn.text or ""
    loop = repetition(text)
    if loop is not None:
        start, piece = loop
        echoed = Message(role="assistant", content=text[: start + len(piece)] + "...")
        note += (
            f" Your reply repeated {piece.strip()!r} to its end (cut short above):"
            " write the call again with each value once."
        )
    return [echoed, Message(role="user", content=note)]


def is_empty_reply(turn: AssistantTurn) -> bool:
    """Whether a reply has no call, no text and no unreadable call (guard `empty_reply`).

    Seen with the 1.5B on demo m7: its one tool that had been tried failed twice and
    was withdrawn, and offered the others it replied nothing, which ended the run
    failed. (After calls that worked, an empty reply leaves those results as the
    answer: callers ask only before that.)
    """
    return not (turn.tool_calls or turn.unread_call or (turn.text or "").strip())


def _respelled(turn: AssistantTurn, request: ChatRequest) -> AssistantTurn:
    """`turn` with each real call that means an offered tool (`meant_tool`) named as offered."""
    offered = {tool.name: tool.parameters for tool in request.tools}
    calls = [
        call.model_copy(
            update={"name": meant_tool(call.name, call.arguments, offered) or call.name}
        )
        for call in turn.tool_calls
    ]
    if all(new.name == old.name for new, old in zip(calls, turn.tool_calls, strict=True)):
        return turn
    return turn.model_copy(update={"tool_calls": calls})


def bare_name(text: str) -> str | None:
    """The name a reply is made of alone ("call search_files", "`dates`."), else None."""
    stripped = text.strip()
    bare = _BARE_NAME.fullmatch(stripped) if len(stripped) <= _BARE_NAME_CHARS else None
    if bare is None:
        return None
    name = bare.group("name")
    word = name.rstrip(".")
    if word == stripped.rstrip(".") and word[:1].isupper() and word[1:].islower():
        return None  # "Weather." is a word written as an answer, not a name
    return name


def recover_turn(turn: AssistantTurn, request: ChatRequest) -> AssistantTurn:
    """`turn` with the calls its text holds moved to `tool_calls`.

    Only a turn without real calls is read, and only for calls to the tools
    `request` offered that its other messages do not already hold (quotes). A call
    (real or read) may name an offered tool in another case or with other
    separators when it fits that one tool only: it gets the offered name. The
    result counts them in `recovered`; a text that looks like a call but gives
    none carries the reason in `unread_call`.
    """
    text = turn.text
    if turn.tool_calls:
        return _respelled(turn, request)
    if not text or not request.tools:
        return turn
    bare = bare_name(text)
    name = bare and offered_name(bare, [tool.name for tool in request.tools])
    if name and name not in RESERVED_TOOL_NAMES:  # "call decline" is the loop's to read
        return turn.model_copy(update={"unread_call": f"it names {name} but is no call"})
    if not _MAY_HOLD_CALL.search(text):
        return turn
    parameters: dict[str, Properties] = {tool.name: tool.parameters for tool in request.tools}
    reading = TextCalls(text)
    quotes = cache(partial(Quotes.of, request.messages))
    documents = {tool.name: tool_text(tool.description, tool.parameters) for tool in request.tools}
    recovery = _recover(reading, text, parameters, quotes, documents)
    if not recovery.calls and recovery.problem is None:
        named = _named_arguments(reading, text, parameters)
        # An answer that quotes a call already made ("I called `files` with {...}") is no call.
        made = [(c.name, c.arguments) for m in request.messages for c in m.tool_calls]
        if named is not None and not any(
            (c.name, c.arguments) in made or _quoted_arguments(c, parameters, quotes())
            for c in named.calls
        ):
            recovery = named
    if recovery.calls:
        calls = [
            call.model_copy(
                update={"arguments": _typed(_properties(parameters, call.name), call.arguments)}
            )
            for call in recovery.calls
        ]
        return turn.model_copy(
            update={
                "text": recovery.text or None,
                "tool_calls": calls,
                "recovered": len(calls),
            }
        )
    if recovery.problem is not None:
        return turn.model_copy(update={"unread_call": recovery.problem})
    if _MARKUP_ONLY.fullmatch(text):
        # Seen with the 1.5B offered a category named "tools": `<tools></tools>`.
        shown = clipped(text.strip(), 40)
        return turn.model_copy(update={"unread_call": f"it holds only {shown!r}, no call"})
    kept = _without_made_up_results(text, [tool.name for tool in request.tools], quotes)
    if kept != text:
        left = None if not kept.strip() or _MARKUP_ONLY.fullmatch(kept) else kept.strip()
        return turn.model_copy(update={"text": left})
    return turn


def _without_made_up_results(
    text: str, offered: Collection[str], quotes: Callable[[], Quotes]
) -> str:
    """`text` without the results it fences of offered tools that no call returned.

    Seen with the 1.5B in a category: after one call, it replied with a
    `<tool_result tool="team_petstore__loginUser" status="ok">` fence of its own,
    and that stood as the run's answer: a login that never happened. What is left
    is the answer (nothing: the run ends with its results). Told instead that it had
    written the result itself, it wrote the same fence again, 22 times of 22 in the
    v9 catalog run. A fence that the messages it read already hold (a real result,
    or one quoted by a user or a page) is an echo, left as it is.
    """

    def kept(match: re.Match[str]) -> str:
        written = match.group("tool")
        name = offered_name(written, offered)
        if name is None or any(quotes().holds_text(f'tool="{n}"') for n in (name, written)):
            return match.group()
        return ""

    return _RESULT_FENCE.sub(kept, text)


async def arecover_turn(turn: AssistantTurn, request: ChatRequest) -> AssistantTurn:
    """`recover_turn`, in a worker thread when the reply and request hold much text."""
    if turn.tool_calls:  # only names to respell: no text is read
        return _respelled(turn, request)
    if not turn.text or not request.tools:
        return turn
    size = len(turn.text) + sum(len(message.content) for message in request.messages)
    size += sum(len(tool.description) for tool in request.tools)  # each is read as a document
    if not _MAY_HOLD_CALL.search(turn.text):
        return recover_turn(turn, request)
    return await by_size(size, partial(recover_turn, turn, request))


def _properties(parameters: Mapping[str, Properties], name: str) -> Properties:
    properties = parameters.get(name, {}).get("properties")
    return properties if isinstance(properties, dict) else {}


#: JSON-schema words a small model copies from the tool's schema into its arguments.
_SCHEMA_WORDS = frozenset({"required", "type", "properties", "additionalProperties", "$schema"})


def _typed(properties: Properties, arguments: Any) -> Any:
    """Arguments as the tool gets them: schema words copied into them dropped, text values typed.

    A text value is read as JSON where the schema wants a number, flag, list or
    object: calls written in XML form carry every value as text (`<value>25</value>`).
    """
    if not isinstance(arguments, dict):
        return arguments
    typed: dict[str, Any] = {}
    for key, value in arguments.items():
        if key in _SCHEMA_WORDS and key not in properties:
            continue
        spec = properties.get(key)
        wanted = spec.get("type") if isinstance(spec, dict) else None
        kinds = wanted if isinstance(wanted, list) else [wanted]
        if isinstance(value, str) and None not in kinds and "string" not in kinds:
            with contextlib.suppress(ValueError):  # the tool's validation says what is wrong
                value = loads(value)
        typed[key] = value
    return typed


def calls_in_text(
    text: str, tools: Sequence[Mapping[str, Any] | ToolDefinition], read: Sequence[str] = ()
) -> list[ToolCall]:
    """The tool calls a reply wrote as text, for your own agent loop over a small model.

    `tools` are what you offered: `ToolDefinition`s, or OpenAI-style tool dicts such
    as `MetaManager.openai_tools()` returns. `read` are the texts the model read that
    it did not write (the user's messages, every tool result): a call they already
    hold is a quote (a page's `{"name": "send_money", ...}` written back) and is never
    returned, under any name of the same tool. Only calls to the offered tools are
    read (their names respelled as offered, their values typed from the schemas); a
    reply that is prose or code gives none. The loops of this package do the same
    under guard `text_calls`.
    """
    offered = [tool if isinstance(tool, ToolDefinition) else _definition(tool) for tool in tools]
    seen = [Message(role="user", content=content) for content in read]
    request = ChatRequest(messages=seen, tools=offered)
    return recover_turn(AssistantTurn(text=text), request).tool_calls


def _definition(tool: Mapping[str, Any]) -> ToolDefinition:
    spec = tool.get("function", tool)
    return ToolDefinition(
        name=str(spec["name"]),
        description=str(spec.get("description") or ""),
        parameters=dict(spec.get("parameters") or {"type": "object", "properties": {}}),
    )


class RecoveringModel:
    """Wraps any `ChatModel` so that calls written as text come back as calls.

    The SDK clients do this themselves (`recover_text_calls`); this wrapper
    gives the same to other models (scripted, the MCP host's). It is a
    `ModelWrapper`: `inner` is the wrapped model, so `serve` still finds the
    host's model inside.
    """

    __slots__ = ("inner",)

    def __init__(self, inner: ChatModel) -> None:
        self.inner = inner

    async def complete(self, request: ChatRequest) -> AssistantTurn:
        """The wrapped model's turn, with its text calls recovered."""
        return await arecover_turn(await self.inner.complete(request), request)

    async def aclose(self) -> None:
        """Close the wrapped model, if it has anything to close (an SDK client)."""
        await close_model(self.inner)

    def __repr__(self) -> str:
        return f"RecoveringModel({self.inner!r})"
