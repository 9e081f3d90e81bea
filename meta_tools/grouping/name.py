"""Names, descriptions and usage notes for proposed groups, from the tools' own words.

A group's words are the terms that are frequent among its tools and rare
among the others (a class-based TF-IDF), shown in the form the tools use them.
The name is the first two. The description of a small group says what each
tool does, in its own first words; a large group's lists more of the words and
a few tools. The usage notes name the inputs the tools share and where they
come from.
"""

from __future__ import annotations

import math
import re
from collections import Counter
from collections.abc import Iterable, Sequence
from dataclasses import dataclass

from ..category.shortlist import analyze
from ..config import SECTIONS
from ..support.text import slugify
from ..tools.base import BaseTool
from .features import ACTIONS
from .propose import Grouping

__all__ = ["Draft", "distinctive_words", "draft_from_words", "unique_names"]


# Words too general to tell a group by.
_GENERAL = frozenset(
    analyze(
        "get gets set fetch retrieve return returns provide provides given specific information details"
    )
)


# Words that say how, not what: they would make a poor name (`Memory & Including`).
_FILLER = frozenset(
    analyze(
        "another various several specific given including include within using based new"
        " every many one two three first second simple different multiple available related"
        " like"
    )
)


@dataclass(frozen=True)
class Draft:
    """A proposed category as the config will hold it."""

    name: str
    description: str
    tool_usage_notes: str
    tools: tuple[str, ...]


def distinctive_words(
    grouping: Grouping, index: int, *, limit: int = 8, objects: bool = False
) -> list[str]:
    """The words of their names and descriptions that set group `index` apart, best first.

    `objects`: the words for a name. For tools placed one by one (`Grouping.loose`),
    what they act on: not the actions any tool performs (`search`, `convert`), nor
    words that say how (`including`). A group of whole servers keeps them, as it was
    grouped with them (a search engine searches).

    A word's weight is the share of the group's tools that say it times
    `log(1 + n/df)`; `log(n/df)`, which favours rarer words, routed worse (LiveMCPBench
    by-topic Recall@1 0.858 against 0.860).
    """
    members = grouping.groups[index]
    said = grouping.said
    inside: Counter[str] = Counter()
    for position in members:
        inside.update(said[position])
    overall = grouping.said_by
    count = len(said)
    # a word must be shared by two tools of the group, unless the group is that small;
    # beside other groups, one that every tool says (a catalog's boilerplate: each BFCL
    # description ends "Note that the provided function is in Python 3 syntax") tells
    # no group apart; a lone group is named by the words its tools share most
    floor = 2 if len(members) > 2 else 1
    plain = objects and any(p in grouping.loose for p in members)
    alone = len(grouping.groups) == 1
    scores = {
        term: (share / len(members)) * (1.0 if alone else math.log(1 + count / overall[term]))
        for term, share in inside.items()
        if share >= floor
        and term.isalpha()
        and len(term) > 2
        and term not in _GENERAL
        and not (plain and (term in ACTIONS or term in _FILLER))
        and (alone or overall[term] < count)
    }
    ranked = sorted(scores, key=lambda t: (-scores[t], t))
    words: list[str] = []
    for term in ranked:
        word = grouping.space.word(term)
        if word not in words:
            words.append(word)
        if len(words) == limit:
            break
    return words


def draft_from_words(
    grouping: Grouping, index: int, tools: Sequence[BaseTool], sources: Sequence[str]
) -> Draft:
    """A name, a description and usage notes written from the group's tools.

    The name is the two words that best set the group apart (`File & Folder`).
    A small group's description says what each tool does in its description's first
    words (`list the files and folders in a sandbox folder; read a text file...`). A
    large one's cannot, so it lists the words that set it apart, then a few tools.
    """
    members = grouping.groups[index]
    fallback = [_words_of(tools[members[0]].name)]
    objects = distinctive_words(grouping, index, limit=3, objects=True)
    words = distinctive_words(grouping, index, limit=16) or fallback
    name = " & ".join(w.capitalize() for w in (objects or words)[:2])
    most, among = _SAID_IN_FULL
    gists = _gists(members, tools) if len(members) <= most and len(tools) <= among else []
    if gists:
        topic = objects or words[:3]
        rest = len(members) - len(gists)  # tools that say nothing, or what another says
        more = f"; and {rest} more tool{'s' * (rest > 1)}" if rest else ""
        description = f"{_series([topic[0].capitalize(), *topic[1:]])}: {'; '.join(gists)}{more}."
    else:
        # The words the tool names lack come first after the group's three best.
        in_names = {term for p in members for term in analyze(_words_of(tools[p].name))}
        beyond = [w for w in words[3:] if not set(analyze(w)) <= in_names]
        head = [words[0].capitalize(), *words[1:3], *beyond][:7]
        examples = [tools[p].name for p in members[:3]]
        more = f" and {len(members) - len(examples)} more" if len(members) > len(examples) else ""
        description = f"{_series(head)}: tools such as {_series(examples)}{more}."
    names = tuple(tools[p].name for p in members)
    return Draft(name, description, _notes(tools, members, sources), names)


_SAID_IN_FULL = (6, 100)
"""A group of at most 6 tools among at most 100 is described tool by tool. In a larger
catalog the words that set a group apart route better (LiveMCPBench: by-topic Recall@1
0.860 against 0.854 with its one small group described tool by tool)."""


def _gists(members: Sequence[int], tools: Sequence[BaseTool]) -> list[str]:
    """What each tool does, one short clause each (fewer when one says nothing or repeats)."""
    gists: list[str] = []
    for position in members:
        gist = _gist(tools[position].description)
        if gist and gist not in gists:
            gists.append(gist)
    return gists


_GIST_WORDS = 12
_GIST_CHARS = 40
_WITHOUT_SPACES = re.compile(r"[\u3040-\u30ff\u3400-\u4dbf\u4e00-\u9fff\uac00-\ud7af]")


def _gist(description: str) -> str:
    """The first clause of a description, lower-case first, at most about 12 words.

    `Summarise a list of numbers: count, sum...` -> `summarise a list of numbers`.
    """
    text = " ".join(description.split())
    text = re.split(r"(?<=[.!?])\s|[:;(。！？：；（]|\s[-–—]\s", text, maxsplit=1)[0]
    text = text.strip(" .,")
    words = text.split(" ")
    if len(words) > _GIST_WORDS:
        head = " ".join(words[:_GIST_WORDS])
        cut = head.rfind(",")
        text = head[:cut] if cut > len(head) // 2 else head
    elif len(text) > _GIST_CHARS and _WITHOUT_SPACES.search(text):  # Chinese, Japanese
        text = re.split(r"[，、]", text[:_GIST_CHARS])[0]
    if len(text) > 1 and not text[1].isupper():
        text = text[0].lower() + text[1:]
    return text.strip(" .,")


def _notes(tools: Sequence[BaseTool], members: Sequence[int], sources: Sequence[str]) -> str:
    """The inputs several tools share, and which sources the tools come from."""
    inputs: Counter[str] = Counter()
    for position in members:
        inputs.update(list(tools[position].args))
    shared = [f"{name} ({n} tools)" for name, n in inputs.most_common(3) if n > 1]
    origin = Counter(sources[p] or "Python" for p in members)
    parts = []
    if shared:
        parts.append(f"Inputs shared by several tools: {', '.join(shared)}.")
    parts.append(
        "Tools from " + ", ".join(f"{src} ({n})" for src, n in origin.most_common(4)) + "."
    )
    return " ".join(parts)


def _words_of(name: str) -> str:
    return name.replace("_", " ").replace("-", " ")


def _series(items: Sequence[str]) -> str:
    """`a`, `a and b`, `a, b and c`."""
    if len(items) <= 1:
        return "".join(items)
    return f"{', '.join(items[:-1])} and {items[-1]}"


def unique_names(names: Sequence[str], *, taken: Iterable[str] = ()) -> list[str]:
    """The names made distinct as category tools (by slug) and never a config section name.

    `taken`: names already in use (the config's own categories); none of the names slugs alike.

    A name whose slug is taken gets the next free number (`Weather 2`), counted per slug:
    bases that slug alike (`E-mail`, `e mail`) share one count, so each name costs a
    step or two, however many came before. A long base is cut so that its number
    survives the slug's 64-character limit.
    """
    used = {slugify(name) for name in taken}
    following: dict[str, int] = {}  # a base's slug -> the next number to try for it
    out: list[str] = []
    for name in names:
        base = name.strip() or "Tools"
        if base in SECTIONS or base == "$schema":
            base = f"{base} tools"
        key = slugify(base)
        number = following.get(key, 1)  # 1: the base itself
        candidate = base if number == 1 else _numbered(base, number)
        while (slug := slugify(candidate)) in used:
            number += 1
            candidate = _numbered(base, number)
        following[key] = number + 1
        used.add(slug)
        out.append(candidate)
    return out


def _numbered(base: str, number: int) -> str:
    """`base number`, with `base` cut so that the number is in the slug (at most 64 characters)."""
    suffix = f" {number}"
    candidate = f"{base}{suffix}"
    # A slug is cut at 64 characters (one of another script ends in a hash of the whole).
    while len(slug := slugify(candidate)) >= 64 and not slug.endswith(f"_{number}"):
        over = max(1, len(slug) - 64 + len(suffix))
        base = base[: max(1, len(base) - over)].rstrip()
        candidate = f"{base}{suffix}"
    return candidate
