"""Close names for a name that was not found, phrased once for every error message."""

from __future__ import annotations

import difflib
from collections.abc import Iterable

__all__ = ["did_you_mean"]


def did_you_mean(
    name: str, known: Iterable[str], *, n: int = 3, cutoff: float = 0.6, what: str = ""
) -> str:
    """`did you mean 'a', 'b'?` for the names of `known` close to `name`; '' when none is."""
    close = difflib.get_close_matches(name, list(known), n=n, cutoff=cutoff)
    return f"did you mean {what}{', '.join(map(repr, close))}?" if close else ""
