"""What a request holds that its model did not write: calls that a reply can only be quoting.

A reply may quote what the model read: a page or file a tool returned, the
user's words, a category's result. When that text holds a tool call
(``{"name": "send_money", ...}``, ``<tool_call>...``), reading the quote back as
a call would run what the page's author wrote. `Quotes.of(messages)` reads
every message the model did not write (system, user and tool messages) the
way `TextCalls` reads a reply, and keeps each call and JSON object found, so
that `llm.recovery` refuses to recover them. It reads leniently (a call that
breaks off inside a text is read as far as it goes, the way the reply that
quotes it at its own end would be), and also inside the JSON a
message holds (a result nested in a category's result, a page inside a JSON
string) and, for text with JSON escapes (``{\\"name\\": ...}``), the text with
them undone, down to `MAX_LEVELS` texts deep.

Reading is bounded like a reply's. What of a text could not be read (from
where a bound was reached to its end) is kept as *unread*: a call naming a
tool that it names counts as quoted, so that a bound reached never lets a
quote through.
"""

from __future__ import annotations

import re
from collections import deque
from collections.abc import Callable, Iterable
from typing import Any

from ..support.json_text import MAX_DEPTH
from .text_calls import TextCalls, call_shape
from .types import Message

__all__ = ["MAX_LEVELS", "MAX_QUOTE_CHARS", "MAX_TEXTS", "Quotes"]

#: Characters read of each text the model did not write (the rest counts as unread).
MAX_QUOTE_CHARS = 1_000_000
#: Texts read per request (the texts nested in messages included); the rest count as unread.
MAX_TEXTS = 4_096
#: How deep texts nest: a string inside the JSON of a string inside the JSON of a message...
MAX_LEVELS = 3

#: Where a call can be written at all.
_MAY_HOLD_CALL = re.compile(r"[{<\[]")
#: The name of an element a text opens: `<name`, then a blank, `/` or `>`.
_ELEMENT_OPENING = re.compile(r"<\s*([^\s/<>]+)(?=[\s/>])")
_ESCAPE = re.compile(r'\\(["\\/bfnrt])')
_UNESCAPED = {"b": "\b", "f": "\f", "n": "\n", "r": "\r", "t": "\t"}

Normalize = Callable[[Any], Any]


class Quotes:
    """The calls, JSON objects and texts that messages the model did not write hold.

    Attributes:
        calls: arguments as written, by the name of the tool they call.
        objects: every JSON object, by its keys.
        texts: every text read (for quotes of what is no valid call).
        unread: the parts of texts that could not be read.
    """

    __slots__ = ("_elements", "calls", "objects", "texts", "unread")

    def __init__(self) -> None:
        self.calls: dict[str, list[Any]] = {}
        self.objects: dict[frozenset[str], list[dict[str, Any]]] = {}
        self.texts: list[str] = []
        self.unread: list[str] = []
        self._elements: set[str] | None = None

    @classmethod
    def of(cls, messages: Iterable[Message]) -> Quotes:
        """What the system, user and tool messages among `messages` hold."""
        quotes = cls()
        pending = deque((m.content, 0) for m in messages if m.role != "assistant" and m.content)
        while pending:
            text, level = pending.popleft()
            if not _MAY_HOLD_CALL.search(text):
                continue
            if len(quotes.texts) >= MAX_TEXTS:
                quotes.unread.append(text)
                continue
            quotes.texts.append(text)
            nested = quotes._read(text)
            if level < MAX_LEVELS:
                pending.extend((inner, level + 1) for inner in nested)
        return quotes

    def holds_call(self, name: str, arguments: Any, normalize: Normalize) -> bool:
        """Whether a call to `name` with these arguments is written in what was read.

        `normalize` puts arguments in the form they are compared in (values typed from
        the tool's schema); a call naming a tool that an unread text names counts too.
        """
        if self.names_unread(name):
            return True
        target = normalize(arguments)
        return any(normalize(written) == target for written in self.calls.get(name, ()))

    def holds_object(self, value: dict[str, Any]) -> bool:
        """Whether this JSON object is written in what was read."""
        return value in self.objects.get(frozenset(value), ())

    def holds_text(self, fragment: str) -> bool:
        """Whether `fragment` is part of a text that was read."""
        return any(fragment in text for text in self.texts)

    def holds_element(self, name: str) -> bool:
        """Whether a text read, or not read, opens an element named `name` (in any case).

        A call written as such an element is read only in replies, so any element of
        that name in what the model read makes a reply's element a quote.
        """
        if self._elements is None:  # every text is scanned once, on the first question
            self._elements = {
                match.group(1).lower()
                for text in (*self.texts, *self.unread)
                for match in _ELEMENT_OPENING.finditer(text)
            }
        return name.lower() in self._elements

    def names_unread(self, name: str) -> bool:
        """Whether a part of a text that could not be read names `name`."""
        if not self.unread:
            return False
        word = re.compile(rf"(?<![\w-]){re.escape(name)}(?![\w-])")
        return any(word.search(text) for text in self.unread)

    def _read(self, text: str) -> list[str]:
        """Keep what `text` holds; return the texts inside it to read next."""
        reading = TextCalls(text, limit=MAX_QUOTE_CHARS, lenient=True)
        for written in (*reading.tags, *reading.xml):
            self.calls.setdefault(written.name, []).append(written.arguments)
            if isinstance(written.arguments, dict):
                self._keep_object(written.arguments)
        nested: list[str] = []
        whole = True
        for _, _, value in reading.values:
            whole = self._walk(value, nested) and whole
        if not whole:
            self.unread.append(text)
        elif not reading.complete:
            self.unread.append(text[reading.unread_from :])
        if '\\"' in text:
            nested.append(_ESCAPE.sub(lambda m: _UNESCAPED.get(m.group(1), m.group(1)), text))
        return nested

    def _walk(self, value: Any, nested: list[str]) -> bool:
        """Keep the calls and objects in a JSON value; its strings go to `nested`.

        False when the value nests deeper than `MAX_DEPTH` (what is below is not read).
        """
        pending: list[tuple[Any, int]] = [(value, 1)]
        whole = True
        while pending:
            item, depth = pending.pop()
            if isinstance(item, str):
                if _MAY_HOLD_CALL.search(item):
                    nested.append(item)
                continue
            if not isinstance(item, dict | list):
                continue
            if depth > MAX_DEPTH:
                whole = False
                continue
            if isinstance(item, dict):
                shape = call_shape(item)
                if shape is not None:
                    self.calls.setdefault(shape[0], []).append(shape[1])
                self._keep_object(item)
                children: Iterable[Any] = item.values()
            else:
                children = item
            pending.extend((child, depth + 1) for child in children)
        return whole

    def _keep_object(self, value: dict[str, Any]) -> None:
        if value:
            self.objects.setdefault(frozenset(value), []).append(value)
