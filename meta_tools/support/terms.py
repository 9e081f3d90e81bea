"""Index terms of a text: the words every lexical match in the router compares.

Camel and snake case split into words, stopwords dropped, plurals stemmed (Snowball's
English stemmer when PyStemmer is installed), accents dropped, CJK text as characters
and bigrams. The shortlist, the category ranking, the grounding check, the grouping and
the suggestions for unknown tool names all read text through `analyze`.
"""

from __future__ import annotations

import re
from collections.abc import Callable

from .text import without_accents

__all__ = ["STEMMER", "analyze", "tool_words"]

# camelCase and snake_case split into words (`GUIDs` stays one); CJK characters are words;
# a run of letters of another script (Cyrillic, Greek, Arabic...) is a word.
_WORDS = re.compile(
    r"[A-Z]{2,}s(?![a-z])|[A-Z]+(?=[A-Z][a-z])|[A-Z]?[a-z]+|[A-Z]+|[0-9]+"
    r"|[\u3040-\u30ff\u3400-\u4dbf\u4e00-\u9fff\uf900-\ufaff\uac00-\ud7af]"
    r"|[^\W\d_A-Za-z\u3040-\u30ff\u3400-\u4dbf\u4e00-\u9fff\uf900-\ufaff\uac00-\ud7af]+"
)
_CJK = re.compile(r"[\u3040-\u30ff\u3400-\u4dbf\u4e00-\u9fff\uf900-\ufaff\uac00-\ud7af]")
_STOPWORDS = frozenset(
    """a about above after again against all also am an and any are as at be because been before
    being below between both but by can could did do does doing down during each few for from
    further had has have having he her here hers herself him himself his how i if in into is
    it its itself just let me more most my myself no nor not of off on once only or other our
    ours ourselves out over own please same she should so some such than that the their theirs
    them themselves then there these they this those through to too under until up very was we
    were what when where which while who whom why will with would you your yours yourself
    yourselves""".split()  # noqa: SIM905
)


def _load_stemmer() -> Callable[[str], str]:
    """Snowball's English stemmer (PyStemmer) when installed, else a light plural stemmer."""
    try:
        import Stemmer  # type: ignore[import-not-found,import-untyped,unused-ignore]
    except ImportError:
        return _stem
    stem: Callable[[str], str] = Stemmer.Stemmer("english").stemWord
    return stem


def _stem(word: str) -> str:
    """A light plural stemmer (Harman's S-stemmer, plus `-sses`/`-ches`...): `cities` -> `city`."""
    if len(word) <= 3 or not word.endswith("s"):
        return word
    if word.endswith("ies") and not word.endswith(("eies", "aies")):
        return word[:-3] + "y"
    if word.endswith(("sses", "ches", "shes", "xes", "zzes")):
        return word[:-2]
    if word.endswith("es") and not word.endswith(("aes", "ees", "oes")):
        return word[:-1]
    if word.endswith(("us", "ss")):
        return word
    return word[:-1]


_STEMMER = _load_stemmer()
STEMMER = "snowball-english (PyStemmer)" if _STEMMER is not _stem else "plural-s (built-in)"


def _folded(text: str) -> str:
    """`text` without accents, other scripts' letters case-folded (`ß` is `ss`); ASCII
    letters are kept as they are, for camelCase."""
    text = without_accents(text)
    return text if text.isascii() else "".join(c if c.isascii() else c.casefold() for c in text)


def analyze(text: str) -> list[str]:
    """Text -> index terms: split camel/snake case, lowercase, drop stopwords, stem plurals.

    CJK text becomes single characters and bigrams, so Chinese descriptions match too.
    Accents are dropped first (`für` is `fur`, `Café` matches `cafe`).
    """
    terms: list[str] = []
    previous_cjk, previous_end = "", -1
    for match in _WORDS.finditer(_folded(text)):
        word = match.group()
        if _CJK.fullmatch(word):
            terms.append(word)
            if previous_cjk and match.start() == previous_end:
                terms.append(previous_cjk + word)
            previous_cjk, previous_end = word, match.end()
            continue
        previous_cjk = ""
        lowered = word.lower()
        if lowered not in _STOPWORDS:
            terms.append(_STEMMER(lowered))
    return terms


def tool_words(name: str) -> str:
    """A tool's function name as words: `ColorMe__RandomColorSet` -> `random color set`.

    A server prefix (before `__`) is dropped; snake, kebab and camel case are split.
    """
    own = name.rsplit("__", 1)[-1]
    words = re.findall(r"[A-Z]+(?=[A-Z][a-z])|[A-Z]?[a-z]+|[A-Z]+|[0-9]+", own)
    return " ".join(word.lower() for word in words) or own
