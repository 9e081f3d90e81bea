"""Text that leaves the router: valid UTF-8, and names the LLM can call.

Valid UTF-8: what leaves the router (to the LLM, the main agent, MCP clients) never
carries the lone surrogates that Python uses for undecodable bytes (file names, process output)
or that a JSON `\\udXXX` escape can produce; they become U+FFFD. `slugify` turns a display
name into a valid function name.
"""

from __future__ import annotations

import hashlib
import re
import unicodedata
from collections.abc import Mapping
from typing import Annotated, Any

from pydantic import AfterValidator

__all__ = [
    "SURROGATE",
    "ValidText",
    "clipped",
    "sentence",
    "slugify",
    "valid_utf8",
    "valid_utf8_value",
    "without_accents",
]

SURROGATE = re.compile("[\ud800-\udfff]")


def valid_utf8(text: str) -> str:
    """`text` unchanged when it encodes as UTF-8; else each undecodable byte or lone surrogate is U+FFFD."""
    try:
        text.encode("utf-8")
    except UnicodeEncodeError:
        try:  # surrogate-escaped bytes (os.listdir, os.fsdecode): recover them, then replace
            return text.encode("utf-8", "surrogateescape").decode("utf-8", "replace")
        except UnicodeEncodeError:
            return SURROGATE.sub("\ufffd", text)
    return text


def valid_utf8_value(value: Any) -> Any:
    """`value` with every string in it (keys too) made valid UTF-8."""
    if isinstance(value, str):
        return valid_utf8(value)
    if isinstance(value, Mapping):
        return {valid_utf8_value(k): valid_utf8_value(v) for k, v in value.items()}
    if isinstance(value, list | tuple):
        return type(value)(valid_utf8_value(v) for v in value)
    return value


ValidText = Annotated[str, AfterValidator(valid_utf8)]
"""A pydantic string field that is made valid UTF-8 when set."""


def without_accents(text: str) -> str:
    """`text` without combining marks, recomposed (so that Hangul syllables stay whole)."""
    if text.isascii():
        return text
    decomposed = unicodedata.normalize("NFKD", text)
    return unicodedata.normalize(
        "NFC", "".join(c for c in decomposed if not unicodedata.combining(c))
    )


def slugify(name: str) -> str:
    """`Programming & Tech Support` -> `programming_tech_support` (a valid function name).

    Accents are dropped (`Café` -> `cafe`). Letters of other scripts cannot be
    spelled in a function name, so a name with any gets a short hash of itself
    (`Погода` -> `category_1b6a2f`): two such names never share a function name.
    """
    folded = without_accents(name)
    slug = re.sub(r"[^a-z0-9]+", "_", folded.lower().encode("ascii", "ignore").decode()).strip("_")
    if any(c.isalpha() and not c.isascii() for c in folded):
        digest = hashlib.sha256(name.encode("utf-8", "surrogatepass")).hexdigest()[:6]
        return f"{(slug or 'category')[:57]}_{digest}"
    return slug[:64] or "category"


def sentence(text: str) -> str:
    """`text` ending in one full stop (or its own `?` or `!`), to be followed by another sentence."""
    text = text.rstrip().rstrip(".")
    return text if text.endswith(("?", "!")) else f"{text}."


def clipped(text: str, limit: int) -> str:
    """`text`, cut to `limit` characters with "..." at the end when it is longer."""
    return text if len(text) <= limit else text[: limit - 3] + "..."


#: How the marker of a cut text begins.
TRUNCATED = "…[truncated "


def truncate(text: str, limit: int) -> str:
    """Cut `text` to `limit` characters with a visible marker saying how much was cut."""
    if len(text) <= limit:
        return text
    cut = len(text) - limit
    return f"{text[:limit]}{TRUNCATED}{cut} characters]"
