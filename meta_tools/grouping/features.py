"""What a tool says about itself, as numbers: TF-IDF rows over a shared, capped vocabulary.

The text of a tool is the shortlist's own `tool_document` (name split into
words, description, parameter names), analyzed the same way (case split,
stopwords, stems), so grouping, the grouping check and the shortlist agree on
what a tool is about. Rows are dense float32 over at most `max_terms` terms:
4,000 tools by 2,000 terms is 32 MB, and a product with k group centres is one
matrix multiplication.
"""

from __future__ import annotations

import math
from collections import Counter
from collections.abc import Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from ..category.shortlist import analyze, tool_document
from ..tools.base import BaseTool

if TYPE_CHECKING:
    import numpy.typing as npt

__all__ = ["ACTIONS", "TermSpace", "normalise", "tool_terms", "without_actions"]


# Actions any kind of tool performs: `search_files` belongs with `read_file`, not with
# `search_text`. Only verbs that are rarely a topic (not `post`, `print`, `translate`,
# `click` or `upload`).
ACTIONS = frozenset(
    analyze(
        "get set list create delete remove update add search find read write convert describe"
        " compare calculate compute fetch retrieve return send check run start stop open close"
        " show count validate generate parse make edit modify change move copy evaluate"
        " summarise summarize extract provide use perform execute save load display transform"
        " analyze analyse"
    )
)


def tool_terms(tool: BaseTool) -> list[str]:
    """The index terms of a tool (the shortlist's document of it)."""
    return analyze(tool_document(tool))


def without_actions(terms: Sequence[str]) -> list[str]:
    """The terms less the actions any kind of tool performs (`search`, `convert`, `list`)."""
    return [term for term in terms if term not in ACTIONS]


@dataclass(frozen=True)
class TermSpace:
    """A vocabulary with IDF weights, fitted on a set of term lists.

    By default terms found in only one document, which carry no grouping
    signal, are left out; of the rest, the `max_terms` most frequent are kept.
    """

    vocabulary: dict[str, int]
    idf: tuple[float, ...]
    surface: dict[str, str]
    """stem -> the most frequent word it came from (for names written from the tools' words)."""

    @classmethod
    def fit(
        cls,
        documents: Sequence[Sequence[str]],
        *,
        texts: Sequence[str] = (),
        max_terms: int = 2000,
        min_documents: int = 2,
    ) -> TermSpace:
        """Fit on analyzed documents; `texts` (the raw documents) give the surface forms.

        A term must occur in `min_documents` documents (when there are more than that).
        """
        frequency: Counter[str] = Counter()
        for terms in documents:
            frequency.update(set(terms))
        floor = min_documents if len(documents) > min_documents else 1
        kept = sorted(
            (t for t, df in frequency.items() if df >= floor), key=lambda t: (-frequency[t], t)
        )
        kept = kept[:max_terms]
        count = len(documents)
        idf = tuple(math.log((1 + count) / (1 + frequency[t])) + 1.0 for t in kept)
        return cls({t: i for i, t in enumerate(kept)}, idf, _surface_forms(texts, set(frequency)))

    def vectors(self, documents: Sequence[Sequence[str]]) -> npt.NDArray[Any]:
        """Rows of sublinear TF-IDF, L2-normalised (a row with no known term stays zero)."""
        import numpy as np

        matrix = np.zeros((len(documents), len(self.vocabulary)), dtype=np.float32)
        for row, terms in enumerate(documents):
            for term, tf in Counter(terms).items():
                column = self.vocabulary.get(term)
                if column is not None:
                    matrix[row, column] = (1.0 + math.log(tf)) * self.idf[column]
        return normalise(matrix)

    def word(self, term: str) -> str:
        return self.surface.get(term, term)


def _surface_forms(texts: Sequence[str], terms: set[str]) -> dict[str, str]:
    """For each stem, the lower-case word that produced it most often (ties: shortest, then a-z)."""
    import re

    used: Counter[str] = Counter()
    for text in texts:
        found = re.findall(r"[A-Za-z]+", re.sub(r"([a-z])([A-Z])", r"\1 \2", text))
        used.update(word.lower() for word in found)
    seen: dict[str, Counter[str]] = {}
    for lowered, times in used.items():  # each word analyzed once, however often it is used
        stems = analyze(lowered)
        if len(stems) == 1 and stems[0] in terms:
            seen.setdefault(stems[0], Counter())[lowered] += times
    return {stem: min(words, key=lambda w: (-words[w], len(w), w)) for stem, words in seen.items()}


def normalise(matrix: npt.NDArray[Any]) -> npt.NDArray[Any]:
    """Each row scaled to unit length (zero rows stay zero)."""
    import numpy as np

    norms = np.linalg.norm(matrix, axis=1, keepdims=True)
    norms[norms == 0] = 1.0
    result: npt.NDArray[Any] = (matrix / norms).astype(np.float32)
    return result
