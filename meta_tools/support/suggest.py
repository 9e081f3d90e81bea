"""Close names for a name that was not found, phrased once for every error message."""

from __future__ import annotations

import difflib
import heapq
import re
from collections import Counter
from collections.abc import Iterable, Mapping
from typing import Any

from .terms import analyze

__all__ = [
    "TOOL_NAME_CUTOFF",
    "close_names",
    "did_you_mean",
    "did_you_mean_tool",
    "squashed",
    "tool_text",
]

#: How alike a tool name must be to one a model wrote to be suggested: low enough for
#: `add` when it wrote `addition`; names are compared after their shared words.
TOOL_NAME_CUTOFF = 0.5
#: The most tools a hint names for a service's name.
SERVICE_TOOLS_NAMED = 5


def did_you_mean(
    name: str, known: Iterable[str], *, n: int = 3, cutoff: float = 0.6, what: str = ""
) -> str:
    """`did you mean 'a', 'b'?` for the names of `known` close to `name`; '' when none is.

    A name is close when it is alike as a whole and also in the words after those
    the two share: a catalog's tools share long prefixes (`Quotes_API__get_quotes_by_`),
    which make `..._by_year` look close to `..._by_keyword`, another operation.
    """
    close = close_names(name, known, n=n, cutoff=cutoff)
    return f"did you mean {what}{', '.join(map(repr, close))}?" if close else ""


def close_names(name: str, known: Iterable[str], *, n: int = 3, cutoff: float = 0.6) -> list[str]:
    """The names of `known` close to `name` (see `did_you_mean`), the closest first."""
    scored = ((_likeness(name, other, cutoff), other) for other in dict.fromkeys(known))
    return [other for score, other in heapq.nlargest(n, scored) if score >= cutoff]


def _likeness(name: str, other: str, cutoff: float) -> float:
    """difflib's ratio of the two names; 0 when what follows their shared words is unlike."""
    cut = 0
    for position, (a, b) in enumerate(zip(name, other, strict=False)):
        if a != b:
            break
        if not a.isalnum():
            cut = position + 1
    if cut and difflib.SequenceMatcher(None, name[cut:], other[cut:]).ratio() < cutoff:
        return 0.0
    return difflib.SequenceMatcher(None, name, other).ratio()


def tool_text(description: str, parameters: Mapping[str, Any]) -> str:
    """What a tool says it does: its description and its parameters' names (the words
    `did_you_mean_tool` compares)."""
    properties = parameters.get("properties")
    names = " ".join(properties) if isinstance(properties, Mapping) else ""
    return f"{description} {names}"


def did_you_mean_tool(name: str, documents: Mapping[str, str], *, n: int = 3) -> str:
    """`did you mean 'x'?` for an unknown tool `name`: the tools named alike, else the one
    tool whose description and parameters (`documents`, by tool name) say the last word
    of `name` (what a `verb_object` name acts on) and, of those, its words most often.
    '' when none, or several alike, do.

    Seen with the 1.5B: the main agent's objective was `count_words`, a name no tool
    has, and the text category's model called it, was told it is not offered, and gave
    up; `text_statistics` counts words. `count_sentences` in a files category matches
    a file tool's "counts" only: no guess.

    A name that is a service's (`dna2protein`, whose tools are `dna2protein__...`) is
    told all of its tools, in `documents`' order: over 2,009 tools the 1.5B called the
    service `dna2protein` for an amino acid sequence, was told only the closest name,
    `dna2protein__mRNA2DNA`, and declined.
    """
    service = _service_tools(name, documents)
    if len(service) > 1:
        shown = ", ".join(map(repr, service[:SERVICE_TOOLS_NAMED]))
        return f"did you mean one of the service's tools {shown}?"
    hint = did_you_mean(name, documents, n=n, cutoff=TOOL_NAME_CUTOFF)
    words = [word for word in analyze(name) if len(word) > 2]  # `a`, `b`: parameter names
    if hint or not words:
        return hint
    said: Counter[str] = Counter()
    for tool, text in documents.items():
        terms = analyze(text)
        if words[-1] in terms:
            said[tool] = sum(term in words for term in terms)
    ranked = said.most_common(2)
    if not ranked or (len(ranked) > 1 and ranked[1][1] == ranked[0][1]):
        return ""
    return f"did you mean {ranked[0][0]!r}?"


def _service_tools(name: str, tools: Iterable[str]) -> list[str]:
    """The tools whose service prefix (`service__tool`) is `name`, in any spelling."""
    key = squashed(name)
    return [t for t in tools if "__" in t and squashed(t.split("__", 1)[0]) == key] if key else []


def squashed(name: str) -> str:
    """`name` in lower case without separators: `DNA2Protein` and `dna2_protein` are alike."""
    return re.sub(r"[^a-z0-9]", "", name.lower())
