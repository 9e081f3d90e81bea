"""Text from outside made safe to print: what a terminal would act on is taken out.

Tool results, model replies, an MCP server's stderr, trace files and error
messages quoting any of them are untrusted. A terminal acts on what they may
carry: ESC and C1 sequences retitle it, clear or rewrite the screen, set the
clipboard (OSC 52), make links (OSC 8) or answer back; CR, BS and the like
overwrite what was printed; bidi overrides reorder it so that it reads other
than it is. `printable` removes all of these (keeping newlines and tabs), and
every print path of the `meta-tools` command passes untrusted text through it.
"""

from __future__ import annotations

import re

from rich.markup import escape

from ..support.text import valid_utf8

__all__ = ["printable", "printable_json", "shown"]

# Whole sequences first, so that no residue ("[2J", "]0;title") is left behind.
_SEQUENCE = re.compile(
    r"""
      (?:\x1b\[|\x9b) [\x30-\x3f]* [\x20-\x2f]* [\x40-\x7e]   # CSI: colours, cursor, erase, reports
    | (?:\x1b[\]PX^_]|[\x90\x98\x9d\x9e\x9f])                  # OSC, DCS, SOS, PM, APC ...
      [^\x00-\x1f\x7f-\x9f]* (?:\x07|\x1b\\|\x9c)              # ... up to their terminator
    | \x1b [\x20-\x2f]* [\x30-\x7e]                            # every other ESC sequence
    """,
    re.VERBOSE,
)
# Then every control character left (an unterminated sequence's introducer too): C0 but
# newline and tab, DEL, C1, and the bidi embeddings, overrides and isolates.
_CONTROL = "\x00-\x08\x0b-\x1f\x7f-\x9f\u202a-\u202e\u2066-\u2069"
_UNSAFE = re.compile(f"[{_CONTROL}]")
# In JSON only C0 is escaped already; the rest of `_CONTROL` is escaped the same way.
_JSON_UNSAFE = re.compile("[\x7f-\x9f\u202a-\u202e\u2066-\u2069]")


def printable(text: object) -> str:
    """`text` (as `str`) without anything a terminal would act on; newlines and tabs are kept.

    Escape sequences (CSI, OSC, DCS and the others, in their 7- and 8-bit forms)
    are removed whole, then every other control character and bidi override.
    Lone surrogates become U+FFFD, so that printing cannot fail to encode.
    """
    text = valid_utf8(str(text))
    if _UNSAFE.search(text) is None:
        return text
    return _UNSAFE.sub("", _SEQUENCE.sub("", text))


def shown(text: object) -> str:
    """`printable(text)` as rich markup that shows it literally (`[` is escaped)."""
    return escape(printable(text))


def printable_json(text: str) -> str:
    """JSON text with DEL, C1 and bidi overrides escaped as `\\uXXXX`: the same value, safe to print.

    `json.dumps(..., ensure_ascii=False)` escapes only C0; these others can only
    stand inside strings, where the escape means the same character.
    """
    return _JSON_UNSAFE.sub(lambda m: f"\\u{ord(m.group()):04x}", valid_utf8(text))
