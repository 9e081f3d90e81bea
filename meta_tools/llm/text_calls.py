"""The tool calls a text writes, read in one bounded pass.

`TextCalls(text)` finds every call-shaped thing in a text, in each form that
`llm.recovery` accepts: a tag with attributes (``<tool_call tool="x"
arguments={...}>``), XML (``<function name="x"><arguments><k>v</k>...``, or
``<function><name>x</name>...``) and JSON (``{"name": "x", "arguments": {...}}``
and its spellings, alone, in a list, in any wrapping, with up to three closing
braces missing). It reads them
whatever tool they name: which of them to run is for `llm.recovery` to decide.
One form is read only for names given: an element named after the tool
(``<x k="v">`` or ``<x><k>v</k></x>``), which any markup would otherwise match.

Reading costs time linear in the text and bounded, whatever the text holds:

- only the first `limit` characters are read (the rest is text);
- every JSON decode is charged the characters it examines (to where it failed), against a budget
  of `BUDGET_PER_CHAR` per character read; once it is spent nothing more is
  decoded, and `complete` is False;
- at most `MAX_DECODES` places are tried, only where a JSON object or list can
  start, each first on the next `WINDOW` characters and on more only when the
  value runs past them, so that a failed decode costs about what it read;
- a value nested too deep for the decoder (`RecursionError`) ends the reading;
- no pattern rescans the text: XML arguments are paired tag by tag, at most
  `MAX_XML_TAGS` tags a call, and an element's body ends where the next starts.
"""

from __future__ import annotations

import bisect
import itertools
import json
import re
from collections.abc import Collection, Iterator
from dataclasses import dataclass
from functools import cached_property
from typing import Any, Literal

from ..support.json_text import loads

__all__ = [
    "BUDGET_PER_CHAR",
    "MAX_DECODES",
    "MAX_REPLY_CHARS",
    "MAX_XML_TAGS",
    "WINDOW",
    "TextCalls",
    "Written",
    "call_shape",
]

#: A reply is read for calls up to here; the rest of it is text.
MAX_REPLY_CHARS = 64_000
#: Characters the JSON decoder may examine, per character read (and 4,096 besides).
BUDGET_PER_CHAR = 8
#: Places where a JSON value may start that are tried, per text.
MAX_DECODES = 2_048
#: Tags read inside one call in XML form (a call has a few arguments).
MAX_XML_TAGS = 256
#: A decode is tried on this many characters first; a value that runs past them is tried
#: again on sixteen times as many, and so on.
WINDOW = 256

Form = Literal["tag", "xml", "json", "element"]

_DECODER = json.JSONDecoder()
#: Where a JSON object or list may start: `{"`, or `[` before a value.
_VALUE_START = re.compile(r'\{\s*"|\[\s*[\[{"\-0-9tfn]')
#: An error this close to where the text was cut may only mean that the value goes on.
_CUT_MARGIN = 16
_VISIBLE = re.compile(r"\S")
_MAX_MISSING_BRACES = 3
#: Closing tags, fences and blanks that may follow a call, read from the end of the text
#: (the text reversed, so that the match starts at one place only).
_TRAILING_WRAPPING_REVERSED = re.compile(r"(?:\s|```|>[\w-]*[A-Za-z_]/<)*")
#: The mark of a call: an object opening on its name, or the tag.
CALL_MARK = re.compile(
    r'\{\s*"(?:name|function)"\s*:|<\s*tool_call|<\s*function(?:[\s=]|>\s*<\s*name\s*>)', re.I
)
#: A call in XML form: `<function name="x">`, `<function=x>` or `<function><name>x</name>`,
#: up to its end tag, the next call or the end of the text.
_XML_CALL = re.compile(
    r"""<\s*function(?:\s+name\s*=\s*["']?|\s*=\s*|\s*>\s*<\s*name\s*>\s*)([\w.-]+)"""
    r"""(?:\s*<\s*/\s*name\s*)?["']?\s*>(.*?)(?:</\s*function\s*>|(?=<\s*function[\s=>])|\Z)""",
    re.I | re.S,
)
_XML_WRAPPER = re.compile(
    r"\s*<\s*(?:arguments|parameters)\s*>(.*?)(?:</\s*(?:arguments|parameters)\s*>|\Z)", re.S
)
#: One tag inside an XML call: a closing one, `<parameter=key>`, `<parameter name="key">`
#: or `<key>`.
_XML_TAG = re.compile(
    r"""<\s*(?:/\s*(\w+)|parameter(?:\s+name\s*=\s*["']?|\s*=\s*)([\w.-]+)["']?|(\w+))\s*>"""
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
#: One attribute of an element: `key="value"` or `key='value'`.
_ATTRIBUTE = re.compile(r"""([\w.-]+)\s*=\s*(?:"([^"]*)"|'([^']*)')""")
#: The key naming the tool in a call written as JSON, and the keys its arguments may come in.
#: ({"tool": ..., "arguments": ...} is not one: it is how a category result lists its calls.)
_CALL_SHAPES = {
    "name": ("arguments", "parameters"),
    "function": ("arguments", "args", "parameters"),
    "tool": ("tool_input",),
    "action": ("action_input",),
}


@dataclass(frozen=True, slots=True)
class Written:
    """One call a text writes, or seems to.

    Attributes:
        form: how it is written.
        start: where it starts in the text.
        end: where it ends (after its closing tag, for a tag).
        name: the tool it names.
        arguments: a dict when they are a JSON object; else what stands in their place
            (a list, a string that is no JSON object, None when they could not be read).
        bare: only a name was written, no arguments (``{"name": "x"}``).
    """

    form: Form
    start: int
    end: int
    name: str
    arguments: Any
    bare: bool = False


def call_shape(value: Any) -> tuple[str, Any, bool] | None:
    """A decoded JSON value as a call: its name, its arguments and whether it had only a name.

    None for a value that is not shaped like a call (data that happens to hold a name).
    """
    if not isinstance(value, dict):
        return None
    inner = value.get("function")
    if isinstance(inner, dict):  # the OpenAI wire shape {"type": "function", "function": {...}}
        value = inner
    # {"name": ..., "arguments": ...}, or a spelling of agent frameworks' prompts:
    # {"tool": ..., "tool_input": ...}, {"action": ..., "action_input": ...}.
    key = next((k for k in _CALL_SHAPES if isinstance(value.get(k), str)), None)
    if key is None:
        return None
    given = [k for k in _CALL_SHAPES[key] if k in value]
    if given:
        return value[key], _arguments(value[given[0]]), False
    if set(value) == {"name"}:
        return value[key], {}, True
    return None


def _arguments(written: Any) -> Any:
    """Arguments as written; a string holding a JSON object becomes that object."""
    if not isinstance(written, str):
        return written
    if not written.strip():
        return {}
    try:
        parsed = loads(written)
    except ValueError:
        return written
    return parsed if isinstance(parsed, dict) else written


class TextCalls:
    """What one text writes, read lazily, form by form.

    Args:
        text: the text.
        limit: characters read; the rest of the text is taken as plain text.
        lenient: also read a JSON value that breaks off inside the text as what it was
            up to there, with its closing braces added (the way a reply that quotes it
            at its own end would be read).
    """

    def __init__(self, text: str, *, limit: int = MAX_REPLY_CHARS, lenient: bool = False) -> None:
        self.text = text[:limit]
        self.cut = len(text) > limit
        self.lenient = lenient
        #: Characters handed to the JSON decoder so far (it reads no others), and decodes tried.
        self.examined = 0
        self.decodes = 0
        self._allowance = BUDGET_PER_CHAR * len(self.text) + 4_096
        self._spent = False
        self._stopped_at = len(self.text)
        self._failed_at: int | None = None  # where the last decode failed, if it was read

    @property
    def complete(self) -> bool:
        """Whether everything read so far was read to the end (nothing cut, no bound reached)."""
        return not (self.cut or self._spent)

    @property
    def unread_from(self) -> int:
        """Where the part of the text that was not read (or not to its end) begins."""
        return self._stopped_at if self._spent else len(self.text)

    @cached_property
    def tags(self) -> list[Written]:
        """The calls written as one tag with attributes (`<tool_call tool="x" arguments={...}>`)."""
        found: list[Written] = []
        position = 0
        for match in _TAG_CALL.finditer(self.text):
            if match.start() < position:
                continue
            name = match.group(1)
            decoded = self._decode(match.end())
            if decoded is None or not isinstance(decoded[0], dict):
                arguments = None if decoded is None else decoded[0]
                found.append(Written("tag", match.start(), match.end(), name, arguments))
                continue
            closing = _TAG_CALL_END.match(self.text, decoded[1])
            position = closing.end() if closing else decoded[1]
            found.append(Written("tag", match.start(), position, name, decoded[0]))
        return found

    @cached_property
    def xml(self) -> list[Written]:
        """The calls written in XML form; argument values are kept as text."""
        found: list[Written] = []
        for match in _XML_CALL.finditer(self.text):
            arguments = self._body_arguments(*match.span(2))
            found.append(Written("xml", match.start(), match.end(), match.group(1), arguments))
        return found

    def elements(self, names: Collection[str]) -> list[Written]:
        """The calls written as an element named after one of `names` (in any case).

        Its arguments are its attributes (``<x objective="..." exact_input="...">``, as
        the 1.5B wrote a category call), else its body read as an XML call's arguments
        (``<x><k>v</k></x>``); the body runs to the element's end tag or the next element.
        """
        if not names:
            return []
        alternatives = "|".join(re.escape(name) for name in sorted(names, key=len, reverse=True))
        opening = re.compile(rf"<\s*({alternatives})((?:\s[^<>]*)?)>", re.I)
        matches = list(itertools.islice(opening.finditer(self.text), MAX_XML_TAGS))
        closings: dict[str, re.Pattern[str]] = {}  # by name as written: one pattern each
        found: list[Written] = []
        for index, match in enumerate(matches):
            name, attributes = match.group(1), match.group(2)
            stop = matches[index + 1].start() if index + 1 < len(matches) else len(self.text)
            if name not in closings:
                closings[name] = re.compile(rf"</\s*{re.escape(name)}\s*>", re.I)
            closing = closings[name].search(self.text, match.end(), stop)
            body_end, end = (closing.start(), closing.end()) if closing else (stop, stop)
            pairs = {
                a.group(1): a.group(2) or a.group(3) or "" for a in _ATTRIBUTE.finditer(attributes)
            }
            arguments: Any = pairs or self._body_arguments(match.end(), body_end)
            if attributes.rstrip().endswith("/"):
                end = match.end()
            found.append(Written("element", match.start(), end, name, arguments))
        return found

    @cached_property
    def values(self) -> list[tuple[int, int, Any]]:
        """Each top-level JSON object or list: start, end, value."""
        found: list[tuple[int, int, Any]] = []
        position = 0
        while (match := _VALUE_START.search(self.text, position)) is not None:
            decoded = self._decode(match.start())
            if decoded is None:
                if self._spent:
                    break
                position = match.start() + 1
                continue
            found.append((match.start(), decoded[1], decoded[0]))
            position = decoded[1]
        return found

    @cached_property
    def json(self) -> list[Written]:
        """The calls written as JSON: top-level objects, and the items of top-level lists."""
        found: list[Written] = []
        for start, end, value in self.values:
            for item in value if isinstance(value, list) else [value]:
                shape = call_shape(item)
                if shape is not None:
                    found.append(Written("json", start, end, *shape))
        return found

    def written(self, item: Written) -> str:
        """The text `item` takes, without the closing tags, fences and blanks that end it."""
        return self.text[item.start : min(item.end, self._tail(item.end))]

    def marks(self) -> Iterator[int]:
        """Where a call's mark (`{"name":`, `<tool_call`) stands outside every decoded value."""
        spans = [(start, end) for start, end, _ in self.values]
        ends = [end for _, end in spans]
        for match in CALL_MARK.finditer(self.text):
            index = bisect.bisect_right(ends, match.start())
            if index < len(spans) and spans[index][0] <= match.start():
                continue  # inside a value that was decoded
            yield match.start()

    def _body_arguments(self, start: int, end: int) -> Any:
        """The arguments in the body of an XML call: a JSON object, or `<k>v</k>` pairs."""
        wrapped = _XML_WRAPPER.match(self.text, start, end)
        if wrapped is not None:
            start, end = wrapped.span(1)
        first = _first_visible(self.text, start, end)
        if first is not None and self.text[first] == "{":
            decoded = self._decode(first, end)
            if decoded is not None and isinstance(decoded[0], dict):
                return decoded[0]
        return self._xml_arguments(start, end)

    def _xml_arguments(self, start: int, end: int) -> dict[str, str]:
        """`<k>v</k>` and `<parameter=k>v</parameter>` pairs: each opening tag with the next closing one."""
        tags = list(itertools.islice(_XML_TAG.finditer(self.text, start, end), MAX_XML_TAGS))
        if len(tags) == MAX_XML_TAGS:
            self._stop(start)  # the rest of this call is not read
        closing: dict[str, list[int]] = {}
        for index, tag in enumerate(tags):
            if tag.group(1):
                closing.setdefault(tag.group(1), []).append(index)
        arguments: dict[str, str] = {}
        index = 0
        while index < len(tags):
            tag = tags[index]
            key = tag.group(2) or tag.group(3)
            closers = closing.get("parameter" if tag.group(2) else tag.group(3) or "", [])
            after = bisect.bisect_right(closers, index)
            if key and after < len(closers):
                close = closers[after]
                arguments[key] = self.text[tag.end() : tags[close].start()].strip()
                index = close + 1
            else:
                index += 1
        return arguments

    def _decode(self, start: int, stop: int | None = None) -> tuple[Any, int] | None:
        """The JSON value at `start` and where it ends, within `stop`; None when there is none.

        A value that runs to `stop` (up to its closing tags and fences) may lack up to
        three closing braces; it then ends at `stop`.
        """
        stop = len(self.text) if stop is None else stop
        if self._spent or self.decodes >= MAX_DECODES or self.examined >= self._allowance:
            self._stop(start)
            return None
        self.decodes += 1
        window = WINDOW
        while True:
            end = min(stop, start + window)
            outcome = self._try(start, end, stop)
            if outcome != "runs on" or end == stop:
                break
            window *= 16  # only a value longer than the window is read again, in a larger one
        if outcome == "runs on":
            outcome = self._close(start, stop)
        elif outcome is None and self.lenient and self._failed_at is not None:
            outcome = self._close(start, self._failed_at)
        return outcome if isinstance(outcome, tuple) else None

    def _try(self, start: int, end: int, stop: int) -> tuple[Any, int] | str | None:
        """Decode `text[start:end]`; the characters the decoder read count as examined (up to
        where it failed, or all of them for a string that does not end).

        "runs on" when the value may only be cut short: by the window (the decoder failed
        within a few characters of `end`, or in a string that does not end before it), or
        by `stop` (it failed where only the closing tags and fences that end the text follow).
        """
        piece = self.text[start:end]
        self._failed_at = None
        try:
            value, length = _DECODER.raw_decode(piece)
        except json.JSONDecodeError as exc:
            unterminated = exc.msg.startswith("Unterminated string")
            self.examined += len(piece) if unterminated else min(len(piece), exc.pos + 1)
            self._failed_at = None if unterminated or exc.pos < 2 else start + exc.pos
            if end < stop:
                runs_on = unterminated or exc.pos >= len(piece) - _CUT_MARGIN
            else:  # a string that never ends is no missing brace
                runs_on = not unterminated and start + exc.pos >= self._tail(stop) - _CUT_MARGIN
            return "runs on" if runs_on else None
        except RecursionError:  # nested past what the decoder can read: read no further
            self.examined += len(piece)
            self._stop(start)
            return None
        except ValueError:  # an integer too long
            self.examined += len(piece)
            return None
        self.examined += length
        return value, start + length

    def _stop(self, at: int) -> None:
        """Read nothing more: what starts at `at` was not read to its end."""
        self._spent = True
        self._stopped_at = min(self._stopped_at, at)

    def _close(self, start: int, stop: int) -> tuple[Any, int] | None:
        """The value at `start`, which runs to `stop`, with its missing closing braces added.

        `stop` is the end of the text or region, or (lenient) where the decoder failed.

        One decode does for one, two or three missing: the value ends at the first brace
        that closes it, and the decoder ignores the rest.
        """
        if self.cut and stop == len(self.text):
            return None  # the value may go on past the characters read
        piece = self.text[start : self._tail(stop)] + "}" * _MAX_MISSING_BRACES
        self.examined += len(piece)
        try:
            value, _ = _DECODER.raw_decode(piece)
        except (ValueError, RecursionError):
            return None
        return value, stop

    def _tail(self, stop: int) -> int:
        """Where the closing tags, fences and blanks that end `text[:stop]` begin."""
        if stop == len(self.text):
            return self._body_end
        while stop > 0 and self.text[stop - 1].isspace():
            stop -= 1
        return stop

    @cached_property
    def _body_end(self) -> int:
        """Where the closing tags, fences and blanks at the end of the text begin."""
        match = _TRAILING_WRAPPING_REVERSED.match(self.text[::-1])
        return len(self.text) - (match.end() if match else 0)


def _first_visible(text: str, start: int, end: int) -> int | None:
    """The position of the first character of `text[start:end]` that is not blank."""
    match = _VISIBLE.search(text, start, end)
    return match.start() if match else None
