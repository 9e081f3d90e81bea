"""Demo tools, text group: statistics, search within a text, and comparing two texts."""

from __future__ import annotations

import difflib
import re
from collections import Counter
from typing import Annotated, Any

from mcp.server.mcpserver.exceptions import ToolError
from pydantic import Field

__all__ = ["compare_texts", "search_text", "text_statistics"]

MAX_TEXT = 200_000
_WORD = re.compile(r"[^\W_]+(?:['’-][^\W_]+)*", re.UNICODE)
_SENTENCE_END = re.compile(r"[.!?。！？]+(?=\s|$)")
_STOPWORDS = frozenset(
    re.findall(
        r"\w+",
        "a an and are as at be but by for from has have he her his i if in into is it its of on"
        " or our she so that the their them they this to was we were will with you your",
    )
)
_WORDS_PER_MINUTE = 230


def _check(text: str, name: str = "text") -> None:
    if len(text) > MAX_TEXT:
        raise ToolError(f"{name} is {len(text)} characters long; the limit is {MAX_TEXT}")


def text_statistics(
    text: Annotated[str, Field(description="The text to measure.")],
    top: Annotated[
        int, Field(description="How many of the most frequent words to list.", ge=0, le=100)
    ] = 10,
    skip_common_words: Annotated[
        bool,
        Field(description="Leave out common English words ('the', 'and', ...) from the top list."),
    ] = True,
) -> dict[str, Any]:
    """Measure a text: characters, words, sentences, lines, paragraphs, reading time and most frequent words."""
    _check(text)
    words = _WORD.findall(text)
    lowered = [w.lower() for w in words]
    counted = Counter(w for w in lowered if not (skip_common_words and w in _STOPWORDS))
    paragraphs = [p for p in re.split(r"\n\s*\n", text) if p.strip()]
    sentences = len(_SENTENCE_END.findall(text)) or (1 if words else 0)
    return {
        "characters": len(text),
        "characters_without_spaces": sum(1 for ch in text if not ch.isspace()),
        "words": len(words),
        "unique_words": len(set(lowered)),
        "sentences": sentences,
        "lines": len(text.splitlines()) if text else 0,
        "paragraphs": len(paragraphs),
        "average_word_length": round(sum(map(len, words)) / len(words), 2) if words else 0,
        "reading_time_minutes": round(len(words) / _WORDS_PER_MINUTE, 2),
        "top_words": [
            {"word": w, "count": c}
            for w, c in sorted(counted.items(), key=lambda item: (-item[1], item[0]))[:top]
        ],
    }


def search_text(
    text: Annotated[str, Field(description="The text to search in.")],
    query: Annotated[str, Field(description="What to find: plain text, or a regular expression.")],
    regex: Annotated[
        bool, Field(description="Treat `query` as a Python regular expression.")
    ] = False,
    case_sensitive: Annotated[bool, Field(description="Match upper/lower case exactly.")] = False,
    max_matches: Annotated[
        int, Field(description="Stop after this many matches.", ge=1, le=500)
    ] = 50,
) -> dict[str, Any]:
    """Find every occurrence of a word, phrase or pattern in a text, with line, column and context."""
    _check(text)
    if not query:
        raise ToolError("query must not be empty")
    flags = 0 if case_sensitive else re.IGNORECASE
    try:
        pattern = re.compile(query if regex else re.escape(query), flags)
    except re.error as exc:
        raise ToolError(f"query is not a valid regular expression: {exc}") from None
    lines = text.splitlines()
    starts = [0]
    for line in lines:
        starts.append(starts[-1] + len(line) + 1)
    matches: list[dict[str, Any]] = []
    total = 0
    line_index = 0
    for found in pattern.finditer(text):
        if found.start() == found.end():
            continue  # empty matches (e.g. 'a*') say nothing useful
        total += 1
        if len(matches) >= max_matches:
            continue
        while line_index + 1 < len(starts) and starts[line_index + 1] <= found.start():
            line_index += 1
        line = lines[line_index] if line_index < len(lines) else ""
        matches.append(
            {
                "line": line_index + 1,
                "column": found.start() - starts[line_index] + 1,
                "match": found.group(0)[:200],
                "context": line.strip()[:300],
            }
        )
    return {
        "query": query,
        "total_matches": total,
        "matches": matches,
        "truncated": total > len(matches),
    }


def compare_texts(
    original: Annotated[str, Field(description="The first (older) text.")],
    revised: Annotated[str, Field(description="The second (newer) text.")],
    context_lines: Annotated[
        int, Field(description="Unchanged lines shown around each change.", ge=0, le=10)
    ] = 2,
) -> dict[str, Any]:
    """Compare two texts: similarity ratio, added/removed line counts and a unified diff."""
    _check(original, "original")
    _check(revised, "revised")
    old, new = original.splitlines(), revised.splitlines()
    diff = list(difflib.unified_diff(old, new, "original", "revised", n=context_lines, lineterm=""))
    added = sum(1 for line in diff if line.startswith("+") and not line.startswith("+++"))
    removed = sum(1 for line in diff if line.startswith("-") and not line.startswith("---"))
    # character-level similarity is quadratic: long texts are compared line by line
    if len(original) + len(revised) <= 20_000:
        ratio = difflib.SequenceMatcher(None, original, revised, autojunk=False).ratio()
    else:
        ratio = difflib.SequenceMatcher(None, old, new).ratio()
    shown = "\n".join(diff)
    return {
        "identical": original == revised,
        "similarity": round(ratio, 4),
        "lines_added": added,
        "lines_removed": removed,
        "diff": shown if len(shown) <= 20_000 else shown[:20_000] + "\n…[diff truncated]",
    }
