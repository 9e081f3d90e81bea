"""The wording of config validation errors: each kind of pydantic error in our own words.

`config._describe` puts the JSON path in front (`$."Math".tools: list at least one
tool`) and handles what needs the config's models (unknown keys, missing fields);
this module knows the error kinds, not the models. The patterns that fields use are
defined here, each with the words that explain it.
"""

from __future__ import annotations

import math
import re
from collections.abc import Mapping
from typing import Any

from ..support.suggest import did_you_mean

__all__ = [
    "HTTP_URL",
    "PROGRAM_NAME",
    "REDIS_URL",
    "SERVER_PREFIX",
    "error_text",
    "shown_value",
    "tag_key",
]

HTTP_URL = r"^https?://"
SERVER_PREFIX = r"^[A-Za-z0-9_-]{1,32}$"
REDIS_URL = r"^(redis|rediss|unix)://"
PROGRAM_NAME = r"^[A-Za-z0-9][A-Za-z0-9._+-]*$"

_PATTERN_WORDS = {
    HTTP_URL: "must start with http:// or https://",
    SERVER_PREFIX: "must be 1 to 32 letters, digits, '_' or '-'",
    REDIS_URL: "must start with redis://, rediss:// or unix://",
    PROGRAM_NAME: "must be a program's name (letters, digits, '.', '_', '+' or '-';"
    " no path, no spaces, no arguments)",
}

_EXPECTED = {
    "string_type": "a string",
    "list_type": "a list",
    "dict_type": "an object",
    "model_type": "an object",
    "model_attributes_type": "an object",
    "int_type": "a whole number",
    "int_parsing": "a whole number",
    "int_from_float": "a whole number",
    "float_type": "a number",
    "float_parsing": "a number",
    "finite_number": "a finite number",
    "bool_type": "true or false",
    "bool_parsing": "true or false",
}
"""Errors that say the value has the wrong type: what it must be instead."""

_ITEMS = {"tools": "tool", "roots": "folder", "allowed_commands": "program"}
"""What the entries of a list field are, where `list at least one entry` says too little."""

_COMPARED = {
    "greater_than": ("gt", "more than"),
    "greater_than_equal": ("ge", "at least"),
    "less_than": ("lt", "less than"),
    "less_than_equal": ("le", "at most"),
    "multiple_of": ("multiple_of", "a multiple of"),
}


def error_text(error: Mapping[str, Any], *, field: str) -> tuple[str, bool]:
    """What is wrong, in plain words, for one pydantic error (without the path).

    `field` is the last named step of the error's location (`tools`). Returns the
    text and whether it should be followed by the value given (`got ...`): a text
    that quotes the value already, or says there is none, is not.
    """
    kind = str(error["type"])
    ctx: Mapping[str, Any] = error.get("ctx") or {}
    if kind in _EXPECTED:
        given = error.get("input")
        # `null` and `true` say all there is to say: no `(got null)` after them.
        spoken = given is None or isinstance(given, bool)
        return f"must be {_EXPECTED[kind]}, not {_json_kind(given)}", not spoken
    if kind == "int_parsing_size":
        return "is too large a number", True
    if kind in _COMPARED:
        key, words = _COMPARED[kind]
        return f"must be {words} {_number(ctx.get(key))}", True
    if kind == "too_short":
        return _too_short(field, ctx), False
    if kind == "too_long":
        return f"may have at most {_count(ctx.get('max_length'), 'entry')}", False
    if kind == "string_too_short":
        least = ctx.get("min_length", 1)
        if least == 1:
            return "must not be empty", False
        return f"needs at least {least} characters", True
    if kind == "string_too_long":
        return f"may have at most {ctx.get('max_length')} characters", False
    if kind == "string_pattern_mismatch":
        pattern = str(ctx.get("pattern", ""))
        return _PATTERN_WORDS.get(pattern, f"must match the pattern {pattern}"), True
    if kind == "literal_error":
        return _one_of(error.get("input"), _quoted(str(ctx.get("expected", "")))), False
    if kind == "union_tag_invalid":  # the caller names the tag's key in the path
        return _one_of(ctx.get("tag"), _quoted(str(ctx.get("expected_tags", "")))), False
    if kind == "union_tag_not_found":
        return _no_tag(tag_key(error)), False
    if kind in ("value_error", "assertion_error"):
        # Our own validators' messages (`'x' is no guard; ...`), which quote the value.
        return str(ctx.get("error", error.get("msg", ""))), False
    # A kind not foreseen: pydantic's text, in lower case to read on from the path.
    message = str(error.get("msg", kind))
    return message[:1].lower() + message[1:], True


def tag_key(error: Mapping[str, Any]) -> str:
    """The key that chooses a union's variant (`transport`), for a `union_tag_*` error."""
    ctx: Mapping[str, Any] = error.get("ctx") or {}
    return str(ctx.get("discriminator", "")).strip("'")


def shown_value(value: Any) -> str:
    """A value given in the file, as a problem quotes it (`'x'`, `null`, `[]`)."""
    if value is None:
        return "null"
    if isinstance(value, bool):
        return "true" if value else "false"
    return repr(value)


def _json_kind(value: Any) -> str:
    """What a JSON value is, in words: `a string`, `null`, `a number with a fraction`."""
    if value is None:
        return "null"
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, str):
        return "a string"
    if isinstance(value, int):
        return "a whole number"
    if isinstance(value, float):
        return "a number with a fraction" if math.isfinite(value) else "not a finite number"
    if isinstance(value, list | tuple):
        return "a list"
    if isinstance(value, Mapping):
        return "an object"
    return type(value).__name__


def _too_short(field: str, ctx: Mapping[str, Any]) -> str:
    least = int(ctx.get("min_length", 1))
    if ctx.get("field_type") == "Dictionary":
        if field == "categories":
            return (
                "the file has no category; add one, e.g."
                ' "Math": {"description": "Arithmetic.", "tools": ["calculate"]}'
            )
        return f"needs at least {_count(least, 'entry')}, and is empty"
    item = _ITEMS.get(field)
    if item is not None:
        wanted = f"one {item}" if least == 1 else _count(least, item)
        return f"list at least {wanted}"
    return f"needs at least {_count(least, 'entry')}, and has {ctx.get('actual_length', 0)}"


def _one_of(value: Any, allowed: list[str]) -> str:
    """`'openia' is not one of 'openai', 'dashscope', 'sampling'; did you mean 'openai'?`"""
    hint = did_you_mean(value, allowed, n=1) if isinstance(value, str) else ""
    choices = ", ".join(map(repr, allowed))
    return f"{shown_value(value)} is not one of {choices}" + (f"; {hint}" if hint else "")


def _no_tag(discriminator: str) -> str:
    if discriminator == "transport":
        return (
            'a server needs "command" (a program to start, over stdio) or "url" (a server'
            " over HTTP)"
        )
    return f'needs "{discriminator}"'


def _quoted(expected: str) -> list[str]:
    """The values of pydantic's `'a', 'b' or 'c'` (its literal and tag lists)."""
    return re.findall(r"'((?:[^'\\]|\\.)*)'", expected)


def _number(value: Any) -> str:
    if isinstance(value, float) and value.is_integer():
        return str(int(value))
    return str(value)


def _count(number: Any, noun: str) -> str:
    plural = noun[:-1] + "ies" if noun.endswith("y") else noun + "s"
    return f"{number} {noun if number == 1 else plural}"
