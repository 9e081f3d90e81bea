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

from collections.abc import Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING

from ..category.shortlist import Bm25Index, tool_document

if TYPE_CHECKING:
    from ..category.manager import CategoryManager

__all__ = ["CategoryRanking", "RankedCategory"]

MAX_TEXT_CHARS = 4000
"""Only this much of a text is analysed (a request, or an objective and its input)."""
SECOND_TOOL_WEIGHT = 0.25
CATEGORY_WEIGHT = 0.25
TOOLS_SHOWN = 3
"""Best-matching tools named per ranked category."""


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
        self._tools: list[list[tuple[int, str]]] = []  # per category: (document, tool name)
        for manager in self.categories:
            own = []
            for tool in manager.tools.list_tools():
                own.append((len(documents), tool.name))
                documents.append(tool_document(tool))
            self._tools.append(own)
        self._own_text = len(documents)
        documents += [f"{m.name}. {m.description}" for m in self.categories]
        self._index = Bm25Index(documents) if documents else None

    def rank(self, text: str) -> list[RankedCategory]:
        """Every category, best first, for `text`; a category no word matched scores 0."""
        if self._index is None:
            return []
        scores = self._index.scores(text[:MAX_TEXT_CHARS]).tolist()
        ranked = []
        for position, manager in enumerate(self.categories):
            matched = sorted(
                ((scores[doc], name) for doc, name in self._tools[position] if scores[doc] > 0),
                key=lambda pair: -pair[0],
            )
            best = [score for score, _ in matched[:2]] + [0.0, 0.0]
            own = scores[self._own_text + position]
            score = best[0] + SECOND_TOOL_WEIGHT * best[1] + CATEGORY_WEIGHT * own
            shown = tuple(name for _, name in matched[:TOOLS_SHOWN])
            ranked.append(RankedCategory(manager, round(float(score), 4), shown))
        # A stable sort: equal scores keep the configured order.
        ranked.sort(key=lambda r: -r.score)
        return ranked
