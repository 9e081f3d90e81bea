"""Tool-call arguments on the wire: a JSON string in, a JSON string out."""

from __future__ import annotations

import json
from collections.abc import Mapping
from typing import Any

from ..support.json_text import loads

__all__ = ["dump_arguments", "load_arguments"]


def load_arguments(raw: str | None) -> dict[str, Any] | str:
    """Parse tool-call arguments sent as a JSON string.

    An empty string means no arguments. Text that is not a JSON object is
    returned unchanged, so the tool layer can tell the model what was wrong.
    """
    if raw is None or not raw.strip():
        return {}
    try:
        parsed = loads(raw)
    except ValueError:  # also nesting too deep for the decoder
        return raw
    return parsed if isinstance(parsed, dict) else raw


def dump_arguments(arguments: Mapping[str, Any] | str) -> str:
    """Serialise tool-call arguments for the wire; a raw string is sent as it was."""
    if isinstance(arguments, str):
        return arguments
    return json.dumps(arguments, ensure_ascii=False)
