"""Category ranking: which categories fit a text, judged through their tools.

With many categories, choosing one is the hard part of routing: a small model
offered 48 category tools picks among the first ones listed. A category is as
relevant as the tools it holds, so each is scored by BM25 (the shortlist's
text analysis) over its tools' names, descriptions and parameters, and over its
own name and description:

    score = best tool + SECOND_TOOL_WEIGHT x second-best tool + CATEGORY_WEIGHT x own text

The ranking is deterministic (ties keep the configured order), built once per
set of categories and their tools, and bounded: a text is cut to `MAX_TEXT_CHARS`.

A hostile MCP server may pad its category with tools. Copies of another category's
tools under its own `__` prefix score nothing for it (`weather_x__send_email` beside
Email's `send_email`), and never hide the real holder of a name (`holder`). A
score is a best match, and a best match only grows with every tool added: a server
listing a tool for each word of ordinary requests would win them all. So a category
whose tools hold far more words than the others' is scaled down in proportion
(`breadth_factors`): padding it further lowers its score. A category holding a tool
that the text names by its function name ranks with the best, so it stays offered
however well the padding matches the rest.
"""

from __future__ import annotations

import re
from collections.abc import Container, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING

import numpy as np

from ..category.shortlist import Bm25Index, tool_document

if TYPE_CHECKING:
    from ..category.manager import CategoryManager

__all__ = ["CategoryRanking", "RankedCategory", "best_few"]

MAX_TEXT_CHARS = 4000
"""Only this much of a text is analysed (a request, or an objective and its input)."""
SECOND_TOOL_WEIGHT = 0.25
CATEGORY_WEIGHT = 0.25
TOOLS_SHOWN = 3
"""Best-matching tools named per ranked category."""
BREADTH_SPREADS = 4.0
"""A category's vocabulary counts as padded beyond this many spreads above the median."""
MIN_SPREAD = 0.25
"""The least spread assumed (in natural log units): catalogs of equal categories still
allow e^(4 x 0.25), about 2.7 times the median vocabulary."""
_IDENTIFIER = re.compile(
    r"\b[A-Za-z0-9]+(?:(?:_{1,2}|-)[A-Za-z0-9]+)+|\b[a-z0-9]+(?:[A-Z][a-z0-9]+)+"
)
"""A word that names a tool: `send_email`, `bank__send_money`, `send-email`, `sendEmail`."""


def breadth_factors(vocabularies: Sequence[int]) -> list[float]:
    """Per category, how much of its score counts (0..1), from how many words its tools hold.

    The spread is the median absolute deviation of the vocabularies' logarithms (at least
    `MIN_SPREAD`); a vocabulary more than `BREADTH_SPREADS` spreads above the median
    counts in proportion: twice the words, half the score. Honest catalogs keep their
    ranking: of the 248 categories of the ranking benchmark's catalogs, one is scaled
    (LiveMCPBench's Discovery, 124 tools, by 0.92), while a category padded with a
    hundred one-word tools among categories of three drops to under half. With fewer than three categories
    there is no telling padding from size, and nothing is scaled.
    """
    if len(vocabularies) < 3:
        return [1.0] * len(vocabularies)
    logs = np.log(np.maximum(np.asarray(vocabularies, dtype=np.float64), 1.0))
    median = float(np.median(logs))
    spread = max(float(np.median(np.abs(logs - median))), MIN_SPREAD)
    limit = median + BREADTH_SPREADS * spread
    return np.minimum(1.0, np.exp(limit - logs)).tolist()  # type: ignore[no-any-return]


def name_forms(name: str) -> tuple[str, ...]:
    """How a tool's name may be written back: in full, or without its server prefix.

    Both are reduced to lower-case letters and digits, so case, `_`, `-` and spaces
    do not matter.
    """
    full = re.sub(r"[^a-z0-9]", "", name.lower())
    own = re.sub(r"[^a-z0-9]", "", name.rsplit("__", 1)[-1].lower())
    return tuple(dict.fromkeys(form for form in (full, own) if form))


@dataclass(frozen=True, slots=True)
class RankedCategory:
    """A category's place for one text: its score and the tools that matched it best."""

    category: CategoryManager
    score: float
    tools: tuple[str, ...]
    """Names of its best-matching tools, best first (only tools that matched at all)."""


class CategoryRanking:
    """Ranks `categories` for a text through their tools; one BM25 index for all of them."""

    def __init__(self, categories: Sequence[CategoryManager]) -> None:
        self.categories = list(categories)
        documents: list[str] = []
        categories_of: list[int] = []  # per tool document: its category's position
        self._names: list[str] = []  # per tool document: the tool's name
        # Who holds a name, from the strongest claim to the weakest: the name as written,
        # the whole name in any spelling, the part after a server's `__` prefix.
        exact: dict[str, set[int]] = {}
        full: dict[str, set[int]] = {}
        own: dict[str, set[int]] = {}
        for position, manager in enumerate(self.categories):
            for tool in manager.tools.list_tools():
                documents.append(tool_document(tool))
                categories_of.append(position)
                self._names.append(tool.name)
                exact.setdefault(tool.name, set()).add(position)
                forms = name_forms(tool.name)
                full.setdefault(forms[0], set()).add(position)
                if len(forms) > 1:
                    own.setdefault(forms[1], set()).add(position)
        self._claims = (exact, full, own)
        # A copy: a tool known only by the part after its prefix, whose name another
        # category holds in full (`weather_x__send_email` beside Email's `send_email`).
        # It does not count for its category: a server cannot borrow another's tools.
        self._copies = [
            i
            for i, (name, position) in enumerate(zip(self._names, categories_of, strict=True))
            if len(forms := name_forms(name)) > 1 and full.get(forms[1], {position}) - {position}
        ]
        self._own_text = len(documents)
        self._category_of = np.array(categories_of, dtype=np.int64)
        # Where each category's documents start (they are contiguous, in category order).
        self._starts = np.searchsorted(self._category_of, np.arange(len(self.categories)))
        self._start_list: list[int] = self._starts.tolist()
        documents += [f"{m.name}. {m.description}" for m in self.categories]
        self._index = Bm25Index(documents) if documents else None
        copies = set(self._copies)
        ends = [*self._start_list[1:], self._own_text]
        self._breadth = breadth_factors(
            [
                self._index.distinct_terms(d for d in range(start, end) if d not in copies)
                if self._index is not None
                else 0
                for start, end in zip(self._start_list, ends, strict=True)
            ]
        )

    def holder(self, name: str) -> CategoryManager | None:
        """The category holding a tool called `name`, in any spelling; None if none or many.

        `ColorMe__RandomColorSet`, `RandomColorSet` and `random color set` name the same tool.
        The strongest claim decides: a tool with `name` as written, else one whose whole
        name is `name` in another spelling, else one whose name after a `__` prefix is.
        So copies a server lists under its own prefix (`weather_x__send_email`) do not
        hide the category that holds `send_email` itself. Only when several categories
        make the strongest claim is the holder unknown (None).
        """
        forms = name_forms(name)
        exact, full, own = self._claims
        tiers = [exact.get(name), *(claims.get(f) for f in forms for claims in (full, own))]
        for held in tiers:
            if held:
                return self.categories[next(iter(held))] if len(held) == 1 else None
        return None

    def rank(self, text: str, *, leave_out: Container[str] = ()) -> list[RankedCategory]:
        """Every category, best first, for `text`; a category no word matched scores 0.

        `leave_out`: tool names not counted (to evaluate with a tool's own description).
        """
        if self._index is None:
            return []
        scores = np.asarray(self._index.scores(text[:MAX_TEXT_CHARS]), dtype=np.float64)
        tools = scores[: self._own_text].copy()
        if self._copies:
            tools[self._copies] = 0.0
        if leave_out:
            tools[[i for i, name in enumerate(self._names) if name in leave_out]] = 0.0
        # Each category's documents, best first (ties in document order): one sort for all.
        order = np.lexsort((-tools, self._category_of)).tolist()
        ends = [*self._start_list[1:], self._own_text]
        own = scores[self._own_text :].tolist()
        values = tools.tolist()
        ranked = []
        for position, manager in enumerate(self.categories):
            start = self._start_list[position]
            best = [
                d for d in order[start : min(start + TOOLS_SHOWN, ends[position])] if values[d] > 0
            ]
            top = [values[d] for d in best[:2]] + [0.0, 0.0]
            score = top[0] + SECOND_TOOL_WEIGHT * top[1] + CATEGORY_WEIGHT * own[position]
            score *= self._breadth[position]
            shown = tuple(self._names[d] for d in best)
            ranked.append(RankedCategory(manager, round(score, 4), shown))
        named = self._named(text[:MAX_TEXT_CHARS])
        if named:
            # A category holding a tool the text names stays reachable, whatever other
            # categories' tools match: it ranks with the best (never above a better one).
            leading = max(r.score for r in ranked)
            ranked = [
                RankedCategory(r.category, max(r.score, leading), r.tools)
                if id(r.category) in named
                else r
                for r in ranked
            ]
        # A stable sort: equal scores keep the configured order.
        ranked.sort(key=lambda r: -r.score)
        return ranked

    def _named(self, text: str) -> set[int]:
        """The categories (by `id`) that hold a tool the text names by its function name.

        Only names written as identifiers count (`send_email`, `sendEmail`): a plain
        word of a request names no tool, whatever a server calls its tools.
        """
        found: set[int] = set()
        for word in dict.fromkeys(_IDENTIFIER.findall(text)):
            holder = self.holder(word)
            if holder is not None:
                found.add(id(holder))
        return found


def best_few(ranked: Sequence[RankedCategory], limit: int, ratio: float) -> list[RankedCategory]:
    """The first `limit` of `ranked` (best first) that score at least `ratio` of the best.

    When one category clearly fits, a small main agent is offered it and its close
    rivals only: seen with the 1.5B, offered the eight best, it sent roulette to
    Discovery though Entertainment scored four times higher. With no match at all
    (every score 0), the first `limit`.
    """
    floor = ratio * ranked[0].score if ranked else 0.0
    return [r for r in ranked[:limit] if r.score >= floor]
