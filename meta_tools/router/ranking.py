"""Category ranking: which categories fit a text, judged through their tools.

With many categories, choosing one is the hard part of routing: a small model
offered 48 category tools picks among the first ones listed. A category is as
relevant as the tools it holds, so each is scored by BM25 (the shortlist's
text analysis) over its tools' names, descriptions and parameters, and over its
own name and description:

    score = best tool + SECOND_TOOL_WEIGHT x second-best tool + CATEGORY_WEIGHT x own text

The ranking is deterministic (ties keep the configured order), built once per
set of categories and their tools, and bounded: a text is cut to `MAX_TEXT_CHARS`.
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
        holders: dict[str, set[int]] = {}  # a tool name's forms -> the categories holding it
        for position, manager in enumerate(self.categories):
            for tool in manager.tools.list_tools():
                documents.append(tool_document(tool))
                categories_of.append(position)
                self._names.append(tool.name)
                for form in name_forms(tool.name):
                    holders.setdefault(form, set()).add(position)
        self._holders = {
            form: self.categories[next(iter(held))]
            for form, held in holders.items()
            if len(held) == 1
        }
        self._own_text = len(documents)
        self._category_of = np.array(categories_of, dtype=np.int64)
        # Where each category's documents start (they are contiguous, in category order).
        self._starts = np.searchsorted(self._category_of, np.arange(len(self.categories)))
        self._start_list: list[int] = self._starts.tolist()
        documents += [f"{m.name}. {m.description}" for m in self.categories]
        self._index = Bm25Index(documents) if documents else None

    def holder(self, name: str) -> CategoryManager | None:
        """The one category holding a tool called `name`, in any spelling; None if none or many.

        `ColorMe__RandomColorSet`, `RandomColorSet` and `random color set` name the same tool.
        """
        for form in name_forms(name):
            found = self._holders.get(form)
            if found is not None:
                return found
        return None

    def rank(self, text: str, *, leave_out: Container[str] = ()) -> list[RankedCategory]:
        """Every category, best first, for `text`; a category no word matched scores 0.

        `leave_out`: tool names not counted (to evaluate with a tool's own description).
        """
        if self._index is None:
            return []
        scores = np.asarray(self._index.scores(text[:MAX_TEXT_CHARS]), dtype=np.float64)
        tools = scores[: self._own_text].copy()
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
            shown = tuple(self._names[d] for d in best)
            ranked.append(RankedCategory(manager, round(score, 4), shown))
        # A stable sort: equal scores keep the configured order.
        ranked.sort(key=lambda r: -r.score)
        return ranked


def best_few(ranked: Sequence[RankedCategory], limit: int, ratio: float) -> list[RankedCategory]:
    """The first `limit` of `ranked` (best first) that score at least `ratio` of the best.

    When one category clearly fits, a small main agent is offered it and its close
    rivals only: seen with the 1.5B, offered the eight best, it sent roulette to
    Discovery though Entertainment scored four times higher. With no match at all
    (every score 0), the first `limit`.
    """
    floor = ratio * ranked[0].score if ranked else 0.0
    return [r for r in ranked[:limit] if r.score >= floor]
