"""How a tool's result reaches the model: as text, fenced as data that cannot end its fence.

`render_value` turns any result into text; `fence_result` wraps it in a
`<tool_result>` fence that no closing tag inside it can end, whatever
look-alike or invisible characters it uses; `read_result` reads the fence back
(for scripted models); `tool_message` is the tool message that carries it.
"""

from __future__ import annotations

import json
import re
import unicodedata
from dataclasses import dataclass
from typing import Any

from pydantic_core import to_jsonable_python

from ..llm.types import Message, ToolCall
from ..support.lifecycle import is_cancellation

__all__ = [
    "FencedResult",
    "fence_result",
    "neutralise",
    "read_result",
    "render_value",
    "tool_message",
]


def _shown(value: Any) -> str:
    """`repr` for values JSON cannot hold; a `__repr__` that raises still gives a description."""
    try:
        return repr(value)
    except BaseException as exc:  # the value came from a tool: whatever it raises is reported
        if is_cancellation(exc):
            raise
        return f"<{type(value).__name__} object (repr failed: {type(exc).__name__})>"


def render_value(value: Any) -> str:
    """Any tool result as text: strings as they are, everything else as JSON.

    Never raises: bytes are decoded, and a value JSON cannot express (a cycle,
    undecodable bytes inside a container) is described instead.
    """
    if isinstance(value, str):
        return value
    if isinstance(value, (bytes, bytearray)):
        return bytes(value).decode("utf-8", errors="replace")
    try:
        return json.dumps(to_jsonable_python(value, fallback=_shown), ensure_ascii=False)
    except BaseException as exc:  # the value came from a tool: whatever it raises is reported
        if is_cancellation(exc):
            raise
        known = isinstance(exc, ValueError | TypeError | RecursionError)
        detail = str(exc) if known else type(exc).__name__
        return f"<a {type(value).__name__} that cannot be shown as JSON: {detail}>"


_CLOSING_TAG = re.compile(r"<\s*/\s*(tool_result|past_runs)", re.IGNORECASE)
_INVISIBLE = frozenset({"Cf", "Cc", "Mn", "Me"})  # format, control, combining marks


def _visible(text: str) -> tuple[str, list[int]]:
    """`text` as a reader sees it (NFKC, invisible characters dropped), and where each char came from."""
    seen: list[str] = []
    origin: list[int] = []
    for index, char in enumerate(text):
        if char.isascii() and (char.isprintable() or char in "\n\t "):
            seen.append(char)
            origin.append(index)
            continue
        if unicodedata.category(char) in _INVISIBLE and not char.isspace():
            continue
        for shown in unicodedata.normalize("NFKC", char):
            seen.append(shown)
            origin.append(index)
    return "".join(seen), origin


def neutralise(text: str) -> str:
    """Defuse every closing tag, also one spelled with look-alikes or invisible characters."""
    if text.isascii() and "<" not in text:
        return text
    visible, origin = _visible(text)
    out: list[str] = []
    last = 0
    for match in _CLOSING_TAG.finditer(visible):
        start, end = origin[match.start()], origin[match.end() - 1] + 1
        out += [text[last:start], "<\\/" + match.group(1).lower()]
        last = end
    return "".join(out) + text[last:]


@dataclass(frozen=True, slots=True)
class FencedResult:
    """A tool result read back from its fence (`read_result`).

    `tool` is the name as fenced (other characters than letters, digits, `_.-`
    became `_`); `text` is the result as fenced (closing tags in it defused).
    """

    tool: str
    ok: bool
    text: str


_FENCED = re.compile(
    r'\A<tool_result tool="(?P<tool>[A-Za-z0-9_.-]*)" status="(?P<status>ok|error)">\n'
    r"(?P<text>.*)\n</tool_result>\Z",
    re.DOTALL,
)


def fence_result(tool: str, ok: bool, text: str) -> str:
    """Wrap a tool result as data; no closing tag inside it can end the fence.

    Matched as the LLM would read it: any case or spacing, after NFKC
    normalisation (full-width `＜／`), with format characters (zero-width
    spaces, soft hyphens, word joiners), controls and combining marks ignored.
    `read_result` reads it back.
    """
    body = neutralise(text)
    name = re.sub(r"[^A-Za-z0-9_.-]", "_", tool)
    return f'<tool_result tool="{name}" status="{"ok" if ok else "error"}">\n{body}\n</tool_result>'


def read_result(content: str) -> FencedResult | None:
    """The tool, status and text of a `fence_result`; None for any other text.

    For scripted models that answer from tool results.
    """
    fenced = _FENCED.match(content)
    if fenced is None:
        return None
    return FencedResult(fenced["tool"], fenced["status"] == "ok", fenced["text"])


def tool_message(call: ToolCall, ok: bool, text: str) -> Message:
    """The tool message answering `call`, its text fenced as data."""
    return Message(
        role="tool", tool_call_id=call.id, name=call.name, content=fence_result(call.name, ok, text)
    )
