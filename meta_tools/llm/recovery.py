"""Tool calls written as text: read them back into `ToolCall`s.

Small and local models often answer a tool call in `content` instead of
`tool_calls`: bare ``{"name": ..., "arguments": {...}}``, a fenced ```json
block, several calls in a row or in a list, wrapped in a tag (``<tool_call>``,
even ``<tool_result>``), with the last brace missing, in XML form
(``<function name="x"><arguments><k>v</k></arguments></function>``), as one tag
(``<tool_call tool="x" arguments={...}>``), or as arguments alone beside prose that
names the tool. `recover_turn` turns such a turn into the calls it meant, but only
calls that name an offered tool; when the text looks like a call yet none can be read, it says why, so
that the loop can tell the model to try again.
"""

from __future__ import annotations

import contextlib
import json
import re
from collections.abc import Collection, Iterator, Mapping
from dataclasses import dataclass
from typing import Any

from .types import AssistantTurn, ChatRequest, ToolCall

__all__ = [
    "MAX_NUDGES",
    "RecoveringModel",
    "Recovery",
    "looks_like_call",
    "recover_calls",
    "recover_turn",
    "unread_call_note",
]

#: Replies that look like an unreadable call, answered (so the model can retry) before
#: one counts as the answer: per category run, and per question of the main agent.
MAX_NUDGES = 2

_DECODER = json.JSONDecoder()
#: Tags, fences and separators that may surround or follow a call written as text.
_WRAPPING = re.compile(r"(?:\s|```(?:json)?|</?[A-Za-z_][\w-]*(?:\s[^<>]*)?>|[,\[\]])*")
#: What is left of a call whose JSON did not parse: an object opening on its name, or the tag.
_CALL_HINT = re.compile(r'\{\s*"(?:name|function)"\s*:|<\s*tool_call|<\s*function[\s=]', re.I)
#: A call in XML form: `<function name="x">` or `<function=x>`, up to its end tag, the next
#: call or the end of the text.
_XML_CALL = re.compile(
    r"""<\s*function(?:\s+name\s*=\s*["']?|\s*=\s*)([\w.-]+)["']?\s*>(.*?)(?:</\s*function\s*>|(?=<\s*function[\s=])|\Z)""",
    re.I | re.S,
)
#: One argument of an XML call: `<key>v</key>`, `<parameter=key>v</parameter>` or
#: `<parameter name="key">v</parameter>`.
_XML_ARGUMENT = re.compile(
    r"""<\s*(?:parameter(?:\s+name\s*=\s*["']?|\s*=\s*)([\w.-]+)["']?|(\w+))\s*>(.*?)</\s*(?:parameter|\2)\s*>""",
    re.S,
)
_XML_WRAPPER = re.compile(
    r"^\s*<\s*(?:arguments|parameters)\s*>(.*?)(?:</\s*(?:arguments|parameters)\s*>|\Z)", re.S
)
#: A call written as one tag with attributes: `<tool_call tool="x" arguments={...}>`; the
#: JSON arguments start where the match ends.
_TAG_CALL = re.compile(
    r"""<\s*(?:tool_call|function_call|function|tool)\s+(?:tool|name|function)\s*=\s*["']?([\w.-]+)["']?\s+(?:arguments|args|parameters)\s*=\s*['"]?(?=\{)""",
    re.I,
)
_TAG_CALL_END = re.compile(
    r"""\s*['"]?\s*/?>(?:\s*</\s*(?:tool_call|function_call|function|tool)\s*>)?""", re.I
)
_MAX_MISSING_BRACES = 3
#: The key naming the tool in a call written as JSON, and the keys its arguments may come in.
#: ({"tool": ..., "arguments": ...} is not one: it is how a category result lists its calls.)
_CALL_SHAPES = {
    "name": ("arguments", "parameters"),
    "function": ("arguments", "args", "parameters"),
    "tool": ("tool_input",),
    "action": ("action_input",),
}


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
    return bool(_CALL_HINT.search(text))


def _as_call(value: Any, offered: Collection[str]) -> tuple[ToolCall | None, str | None]:
    """A decoded JSON object as a call; else None and, if it meant to be one, why not."""
    if not isinstance(value, dict):
        return None, None
    inner = value.get("function")
    if isinstance(inner, dict):  # the OpenAI wire shape {"type": "function", "function": {...}}
        value = inner
    # {"name": ..., "arguments": ...}, or a spelling of agent frameworks' prompts:
    # {"tool": ..., "tool_input": ...}, {"action": ..., "action_input": ...}.
    key = next((k for k in _CALL_SHAPES if isinstance(value.get(k), str)), None)
    given = [k for k in _CALL_SHAPES[key] if k in value] if key else []
    if key is None or not (given or set(value) == {"name"}):  # data with a name, not a call
        return None, None
    name: str = value[key]
    arguments: Any = value[given[0]] if given else {}
    if isinstance(arguments, str):
        try:
            arguments = json.loads(arguments) if arguments.strip() else {}
        except json.JSONDecodeError:
            return None, f"the arguments of {name!r} are not a JSON object"
    if not isinstance(arguments, dict):
        return None, f"the arguments of {name!r} are not a JSON object"
    if name not in offered:
        return None, _not_offered(name, offered)
    return ToolCall(name=name, arguments=arguments), None


def _not_offered(name: str, offered: Collection[str]) -> str:
    return f"{name!r} is not one of the offered tools ({', '.join(sorted(offered))})"


def _leftover(rest: str) -> str:
    """What a text says besides its calls: nothing when only their wrapping is left."""
    return "" if _WRAPPING.fullmatch(rest) else rest.strip()


def _decode_at(text: str, start: int) -> tuple[Any, int] | None:
    """Decode the JSON value starting at `start`, adding up to three missing closing braces."""
    try:
        return _DECODER.raw_decode(text, start)
    except json.JSONDecodeError:
        pass
    # Only a value that runs to the end of the text (up to its wrapping) can be missing braces.
    tail = text[start:]
    body = tail[: len(tail) - len(_trailing_wrapping(tail))]
    for missing in range(1, _MAX_MISSING_BRACES + 1):
        try:
            value, _ = _DECODER.raw_decode(body + "}" * missing)
        except json.JSONDecodeError:
            continue
        return value, len(text)
    return None


def _trailing_wrapping(text: str) -> str:
    """The closing tags, fences and blanks at the end of `text`."""
    match = re.search(r"(?:\s|```|</[A-Za-z_][\w-]*>)*\Z", text)
    return match.group(0) if match else ""


def _objects(text: str) -> Iterator[tuple[int, int, Any]]:
    """Each top-level JSON object or list in `text`: start, end, value."""
    position = 0
    while True:
        found = [i for i in (text.find("{", position), text.find("[", position)) if i >= 0]
        if not found:
            return
        start = min(found)
        decoded = _decode_at(text, start)
        if decoded is None:
            position = start + 1
            continue
        value, end = decoded
        yield start, end, value
        position = end


def _xml_calls(text: str, offered: Collection[str]) -> Recovery | None:
    """The calls `text` writes in XML form (`<function name="x"><arguments><k>v</k>...`), if any.

    Argument values are kept as text; `recover_turn` types them from the tool's schema.
    """
    found = list(_XML_CALL.finditer(text))
    if not found:
        return None
    calls: list[ToolCall] = []
    problems: list[str] = []
    for match in found:
        name, body = match.group(1), match.group(2)
        if name not in offered:
            problems.append(_not_offered(name, offered))
            continue
        wrapped = _XML_WRAPPER.match(body)
        body = wrapped.group(1) if wrapped else body
        decoded = _decode_at(body, body.find("{")) if body.lstrip().startswith("{") else None
        if decoded is not None and isinstance(decoded[0], dict):
            arguments: dict[str, Any] = decoded[0]
        else:
            arguments = {
                (m.group(1) or m.group(2)): m.group(3).strip() for m in _XML_ARGUMENT.finditer(body)
            }
        calls.append(ToolCall(name=name, arguments=arguments))
    if calls:
        rest = text[: found[0].start()] + text[found[-1].end() :]
        return Recovery(calls, _leftover(rest))
    return Recovery([], text, "; ".join(dict.fromkeys(problems)))


def _tag_calls(text: str, offered: Collection[str]) -> Recovery | None:
    """The calls `text` writes as tags with attributes (`<tool_call tool="x" arguments={...}>`)."""
    calls: list[ToolCall] = []
    problems: list[str] = []
    kept: list[str] = []
    position = 0
    for match in _TAG_CALL.finditer(text):
        if match.start() < position:
            continue
        decoded = _decode_at(text, match.end())
        name = match.group(1)
        if decoded is None or not isinstance(decoded[0], dict):
            problems.append(f"the arguments of {name!r} are not a JSON object")
            continue
        if name not in offered:
            problems.append(_not_offered(name, offered))
            continue
        calls.append(ToolCall(name=name, arguments=decoded[0]))
        end = decoded[1]
        closing = _TAG_CALL_END.match(text, end)
        kept.append(text[position : match.start()])
        position = closing.end() if closing else end
    if not calls and not problems:
        return None
    if not calls:
        return Recovery([], text, "; ".join(dict.fromkeys(problems)))
    rest = "".join(kept) + text[position:]
    return Recovery(calls, _leftover(rest))


def recover_calls(text: str, offered: Collection[str]) -> Recovery:
    """Read the tool calls written in `text`, keeping those that name an `offered` tool."""
    for written_as_tags in (_tag_calls, _xml_calls):
        recovery = written_as_tags(text, offered)
        if recovery is not None:
            return recovery
    calls: list[ToolCall] = []
    problems: list[str] = []
    kept: list[str] = []
    undecoded: list[str] = []
    position = decoded_end = 0
    for start, end, value in _objects(text):
        undecoded.append(text[decoded_end:start])
        decoded_end = end
        found: list[ToolCall] = []
        for item in value if isinstance(value, list) else [value]:
            call, problem = _as_call(item, offered)
            if call is not None:
                found.append(call)
            elif problem is not None:
                problems.append(problem)
        if found:
            calls.extend(found)
            kept.append(text[position:start])
            position = end
    kept.append(text[position:])
    undecoded.append(text[decoded_end:])
    if calls:
        return Recovery(calls, _leftover("".join(kept)))
    if problems:
        return Recovery([], text, "; ".join(dict.fromkeys(problems)))
    if looks_like_call("".join(undecoded)):
        return Recovery([], text, "it is not valid JSON")
    return Recovery([], text)


def _named_arguments(text: str, parameters: Mapping[str, dict[str, Any]]) -> Recovery | None:
    """A call written as its arguments alone, beside prose naming the tool.

    The 1.5B model wrote "use the `files` function with the following exact input:"
    and then `{"objective": ..., "exact_input": ...}`. Read as a call only when the
    object's keys fit the tool's schema (every required key, no unknown one) and
    the text around it names exactly one offered tool whose schema they fit.
    """
    calls: list[ToolCall] = []
    kept: list[str] = []
    position = 0
    for start, end, value in _objects(text):
        if not isinstance(value, dict) or not value:
            continue
        around = text[:start] + " " + text[end:]
        fitting = [
            name
            for name, schema in parameters.items()
            if _fits(value, schema) and re.search(rf"(?<![\w-]){re.escape(name)}(?![\w-])", around)
        ]
        if len(fitting) != 1:
            return None
        calls.append(ToolCall(name=fitting[0], arguments=value))
        kept.append(text[position:start])
        position = end
    if not calls:
        return None
    kept.append(text[position:])
    rest = "".join(kept)
    return Recovery(calls, _leftover(rest))


def _fits(arguments: dict[str, Any], schema: dict[str, Any]) -> bool:
    """True when `arguments` has every required key of `schema` and no key it lacks."""
    required = set(schema.get("required") or ())
    known = set(schema.get("properties") or {})
    return bool(required) and required <= arguments.keys() <= known


def unread_call_note(problem: str) -> str:
    """What the model is told when its reply looks like a tool call that could not be read."""
    return (
        f"Your reply looks like a tool call, but it could not be read: {problem}."
        " Call one of the offered tools through the tool-calling interface, with its"
        " arguments as a JSON object. If none of them fits, say so in plain text."
    )


def recover_turn(turn: AssistantTurn, request: ChatRequest) -> AssistantTurn:
    """`turn` with the calls its text holds moved to `tool_calls`.

    Only a turn without real calls is read, and only for calls to the tools
    `request` offered. The result counts them in `recovered`; a text that looks
    like a call but gives none carries the reason in `unread_call`.
    """
    if turn.tool_calls or not turn.text or not request.tools:
        return turn
    parameters: dict[str, dict[str, Any]] = {
        str(tool["function"].get("name")): tool["function"].get("parameters") or {}
        for tool in request.tools
        if "function" in tool
    }
    recovery = recover_calls(turn.text, parameters)
    if not recovery.calls and recovery.problem is None:
        named = _named_arguments(turn.text, parameters)
        # An answer that quotes a call already made ("I called `files` with {...}") is no call.
        made = [(c.name, c.arguments) for m in request.messages for c in m.tool_calls]
        if named is not None and not any((c.name, c.arguments) in made for c in named.calls):
            recovery = named
    if recovery.calls:
        calls = []
        for call in recovery.calls:
            properties = parameters.get(call.name, {}).get("properties", {})
            calls.append(_typed(_without_schema_echo(call, properties), properties))
        return turn.model_copy(
            update={
                "text": recovery.text or None,
                "tool_calls": calls,
                "recovered": len(calls),
            }
        )
    if recovery.problem is not None:
        return turn.model_copy(update={"unread_call": recovery.problem})
    return turn


#: JSON-schema words a small model copies from the tool's schema into its arguments.
_SCHEMA_WORDS = frozenset({"required", "type", "properties", "additionalProperties", "$schema"})


def _without_schema_echo(call: ToolCall, properties: dict[str, Any]) -> ToolCall:
    """`call` without the schema words it copied into its arguments (unless they are parameters)."""
    if not isinstance(call.arguments, dict):
        return call
    echoed = [k for k in call.arguments if k in _SCHEMA_WORDS and k not in properties]
    if not echoed:
        return call
    arguments = {k: v for k, v in call.arguments.items() if k not in echoed}
    return call.model_copy(update={"arguments": arguments})


def _typed(call: ToolCall, properties: dict[str, Any]) -> ToolCall:
    """`call` with text values read as JSON where the schema wants a number, flag, list or object.

    Calls written in XML form carry every value as text (`<value>25</value>`).
    """
    if not isinstance(call.arguments, dict):
        return call
    arguments = dict(call.arguments)
    for key, value in call.arguments.items():
        spec = properties.get(key)
        wanted = spec.get("type") if isinstance(spec, dict) else None
        kinds = wanted if isinstance(wanted, list) else [wanted]
        if isinstance(value, str) and None not in kinds and "string" not in kinds:
            with contextlib.suppress(json.JSONDecodeError):
                arguments[key] = json.loads(value)
    return call.model_copy(update={"arguments": arguments})


class RecoveringModel:
    """Wraps any `ChatModel` so that calls written as text come back as calls.

    The SDK clients do this themselves (`recover_text_calls`); this wrapper
    gives the same to other models (scripted, the MCP host's).
    """

    __slots__ = ("model",)

    def __init__(self, model: Any) -> None:
        self.model = model

    async def complete(self, request: ChatRequest) -> AssistantTurn:
        """The wrapped model's turn, with its text calls recovered."""
        return recover_turn(await self.model.complete(request), request)

    def __repr__(self) -> str:
        return f"RecoveringModel({self.model!r})"
