"""JSON read from text the router does not control (a model's reply, its tool-call arguments).

`json.loads` has more ways to fail than `JSONDecodeError`: a value nested
deeper than the interpreter's recursion limit raises `RecursionError` from the
decoder (3,000 ``[`` are enough), and an integer longer than 4,300 digits a
plain `ValueError`. Here every such text is a `ValueError`, and a value nested
deeper than `MAX_DEPTH` is refused too, so that no later step (validation, the
JSON sent back to the model) recurses through it.
"""

from __future__ import annotations

import json
from typing import Any

__all__ = ["MAX_DEPTH", "depth_within", "loads"]

#: The deepest nesting accepted in JSON from a model; tool arguments need a handful of levels.
MAX_DEPTH = 64


def loads(text: str) -> Any:
    """`json.loads(text)`, failing only with `ValueError`.

    Raises:
        ValueError: `text` is no JSON (a `json.JSONDecodeError`), an integer in it is
            too long, or it nests deeper than `MAX_DEPTH`.
    """
    try:
        value = json.loads(text)
    except RecursionError:
        raise ValueError(f"the JSON nests deeper than {MAX_DEPTH} levels") from None
    if not depth_within(value, MAX_DEPTH):
        raise ValueError(f"the JSON nests deeper than {MAX_DEPTH} levels")
    return value


def depth_within(value: Any, limit: int) -> bool:
    """Whether `value`'s lists and dicts nest at most `limit` deep (walked without recursion)."""
    pending: list[tuple[Any, int]] = [(value, 1)]
    while pending:
        item, depth = pending.pop()
        if isinstance(item, dict):
            children: Any = item.values()
        elif isinstance(item, list):
            children = item
        else:
            continue
        if depth > limit:
            return False
        pending.extend((child, depth + 1) for child in children)
    return True
