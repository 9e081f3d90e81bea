"""*shortlist*: Recall@k and Hit@k of the shortlist ranking against a plain BM25 baseline.

Three rankers per query set:
- `baseline`: bm25s with its own default tokenizer (English stopwords, no
  splitting of snake/camel case) over the whole catalog, on the same text
  (qualified name, description, parameter names);
- `shortlist/catalog`: our `Bm25Index` over the whole catalog;
- `shortlist/category`: our `Bm25Index` over the gold tool's category only, which
  is what a category call ranks (the main agent picked the category).

Recall@k is the share of gold tools ranked in the top k (each gold tool ranked
within its own category for `shortlist/category`), averaged over queries;
Hit@k is the share of queries with at least one gold tool in the top k.
"""

from __future__ import annotations

import time
from collections.abc import Callable, Mapping, Sequence
from pathlib import Path
from typing import Any

from meta_tools.category.shortlist import (
    Bm25Index,
    Shortlist,
    ToolIndex,
    tool_document,
)

from .catalog import Catalog, CatalogTool, load_catalog, load_queries
from .embeddings import EmbeddingIndex

KS = (1, 5, 10, 20)
DATASETS = ("stabletoolbench", "sealtools", "metatool")


class PlainBm25:
    """The baseline: bm25s out of the box, whole catalog."""

    def __init__(self, documents: Sequence[str]) -> None:
        import bm25s  # type: ignore[import-untyped]

        self._bm25s = bm25s
        self._bm25 = bm25s.BM25()
        tokens = bm25s.tokenize(list(documents), stopwords="en", show_progress=False)
        self._bm25.index(tokens, show_progress=False)

    def scores(self, query: str) -> Any:
        tokens = self._bm25s.tokenize(
            [query], stopwords="en", show_progress=False, return_ids=False
        )[0]
        import numpy as np

        known = [t for t in tokens if t in self._bm25.vocab_dict]
        if not known:
            return np.zeros(self._bm25.scores["num_docs"], dtype=np.float32)
        return self._bm25.get_scores(known)


def _ranks(index: ToolIndex, query: str) -> dict[int, int]:
    scores = index.scores(query)
    order = sorted(range(len(scores)), key=lambda i: -float(scores[i]))
    return {position: rank for rank, position in enumerate(order)}


def _evaluate(
    queries: list[dict[str, Any]], rank_of_gold: Callable[[dict[str, Any]], list[int]]
) -> dict[str, float]:
    recall = dict.fromkeys(KS, 0.0)
    hit = dict.fromkeys(KS, 0.0)
    for query in queries:
        ranks = rank_of_gold(query)
        for k in KS:
            inside = sum(1 for r in ranks if r < k)
            recall[k] += inside / len(ranks)
            hit[k] += 1.0 if inside else 0.0
    n = max(len(queries), 1)
    out = {f"recall@{k}": round(recall[k] / n, 4) for k in KS}
    out.update({f"hit@{k}": round(hit[k] / n, 4) for k in KS})
    return out


def _whole_catalog(catalog: Catalog, index: ToolIndex) -> Callable[[dict[str, Any]], list[int]]:
    position = {t.entry["id"]: i for i, t in enumerate(catalog.tools)}

    def rank(query: dict[str, Any]) -> list[int]:
        ranks = _ranks(index, query["query"])
        return [ranks[position[g]] for g in query["gold"]]

    return rank


def _within_category(
    catalog: Catalog,
    make: Callable[[list[CatalogTool]], ToolIndex],
    category_of: Callable[[CatalogTool], str] | None = None,
    members: Mapping[str, list[CatalogTool]] | None = None,
) -> Callable[[dict[str, Any]], list[int]]:
    """Ranks of each gold tool among its own category (the catalog's, or `members`)."""
    home = category_of or (lambda t: t.entry.get("category") or "all")
    indexes: dict[str, tuple[ToolIndex, dict[str, int]]] = {}
    for category, tools in (members or catalog.categories).items():
        position = {t.entry["id"]: i for i, t in enumerate(tools)}
        indexes[category] = (make(tools), position)

    def rank(query: dict[str, Any]) -> list[int]:
        out = []
        for gold in query["gold"]:
            index, position = indexes[home(catalog.by_id[gold])]
            out.append(_ranks(index, query["query"])[position[gold]])
        return out

    return rank


def evaluate_within(
    catalog: Catalog,
    queries: list[dict[str, Any]],
    category_of: Callable[[CatalogTool], str],
    members: Mapping[str, list[CatalogTool]],
) -> dict[str, float]:
    """Recall@k and Hit@k of the shortlist within the gold tool's category of any grouping."""
    return _evaluate(
        queries,
        _within_category(
            catalog, lambda ts: Bm25Index([tool_document(t) for t in ts]), category_of, members
        ),
    )


def _offered_recall(catalog: Catalog, queries: list[dict[str, Any]], max_chars: int) -> float:
    """Share of gold tools actually offered by `Shortlist.select` (20 tools, a char budget)."""
    shortlists = {
        c: Shortlist(tools, max_tools=20, max_chars=max_chars)
        for c, tools in catalog.categories.items()
    }
    total = 0.0
    for query in queries:
        found = 0
        for gold in query["gold"]:
            tool = catalog.by_id[gold]
            selection = shortlists[tool.entry.get("category") or "all"].select(query["query"], "")
            found += tool in selection.tools
        total += found / len(query["gold"])
    return round(total / max(len(queries), 1), 4)


def run(data: Path, *, embeddings: bool = False, max_chars: int = 12_000) -> dict[str, Any]:
    """Evaluate every query set found under `data`."""
    results: dict[str, Any] = {}
    for dataset in DATASETS:
        queries = load_queries(data, dataset)
        if not queries:
            continue
        catalog = load_catalog(data, dataset)
        documents = [tool_document(t) for t in catalog.tools]
        rows: dict[str, Any] = {}
        started = time.perf_counter()
        rows["baseline BM25, whole catalog"] = _evaluate(
            queries, _whole_catalog(catalog, PlainBm25(documents))
        )
        rows["shortlist, whole catalog"] = _evaluate(
            queries, _whole_catalog(catalog, Bm25Index(documents))
        )
        has_categories = len(catalog.categories) > 1
        if has_categories:
            rows["shortlist, gold category"] = _evaluate(
                queries,
                _within_category(catalog, lambda ts: Bm25Index([tool_document(t) for t in ts])),
            )
        if embeddings:
            index = EmbeddingIndex.from_package(documents)
            rows["embeddings, whole catalog"] = _evaluate(queries, _whole_catalog(catalog, index))
            if has_categories:
                rows["embeddings, gold category"] = _evaluate(
                    queries,
                    _within_category(
                        catalog,
                        lambda ts, i=index, c=catalog: _subset(i, c, ts),  # type: ignore[misc]
                    ),
                )
        info: dict[str, Any] = {
            "queries": len(queries),
            "tools": len(catalog.tools),
            "categories": len(catalog.categories) if has_categories else None,
            "rankers": rows,
            "seconds": round(time.perf_counter() - started, 2),
        }
        if has_categories:
            info["offered_recall_20_tools_budget"] = _offered_recall(catalog, queries, max_chars)
        results[dataset] = info
    return results


class _SubsetIndex:
    """Rows of a whole-catalog embedding matrix (encode once, rank per category)."""

    def __init__(self, parent: EmbeddingIndex, rows: list[int]) -> None:
        self._parent, self._rows = parent, rows

    def scores(self, query: str) -> Any:
        return self._parent.scores(query)[self._rows]


def _subset(index: EmbeddingIndex, catalog: Catalog, tools: list[CatalogTool]) -> ToolIndex:
    position = {t.entry["id"]: i for i, t in enumerate(catalog.tools)}
    return _SubsetIndex(index, [position[t.entry["id"]] for t in tools])
