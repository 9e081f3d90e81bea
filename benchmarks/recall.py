"""*shortlist*: Recall@k and Hit@k of the shortlist ranking against a plain BM25 baseline.

Three rankers per query set:
- `baseline`: bm25s with its own default tokenizer (English stopwords, no
  splitting of snake/camel case) over the whole catalog, on the same text
  (qualified name, description, parameter names);
- `shortlist/catalog`: the shortlist's own index (`ServiceIndex`: BM25 smoothed by
  each tool's service) over the whole catalog;
- `shortlist/category`: that index over the gold tool's category only, which
  is what a category call ranks (the main agent picked the category).

Recall@k is the share of gold tools ranked in the top k (each gold tool ranked
within its own category for `shortlist/category`), averaged over queries;
Hit@k is the share of queries with at least one gold tool in the top k.

StableToolBench queries come from one part of the committed split (`split`:
test for reported figures, tune for trying changes, all). `request_weighing`
(tuning part) asks whether a category's shortlist should rank by the user's own
request beside the main agent's paraphrase (see its docstring).
"""

from __future__ import annotations

import re
import time
from collections.abc import Callable, Mapping, Sequence
from pathlib import Path
from typing import Any

from meta_tools.category.shortlist import (
    ServiceIndex,
    Shortlist,
    ToolIndex,
    tool_document,
)

from .catalog import (
    DEFAULT_DATA,
    PARTS,
    Catalog,
    CatalogTool,
    Part,
    load_catalog,
    load_queries,
    split_queries,
)
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
        _within_category(catalog, ServiceIndex, category_of, members),
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


def run(
    data: Path, *, embeddings: bool = False, max_chars: int = 12_000, split: Part = "test"
) -> dict[str, Any]:
    """Evaluate every query set found under `data` (StableToolBench: the `split` part)."""
    results: dict[str, Any] = {}
    for dataset in DATASETS:
        queries = load_queries(data, dataset)
        if dataset == "stabletoolbench" and queries:
            queries = split_queries(queries, split)
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
            queries, _whole_catalog(catalog, ServiceIndex(catalog.tools))
        )
        has_categories = len(catalog.categories) > 1
        if has_categories:
            rows["shortlist, gold category"] = _evaluate(
                queries,
                _within_category(catalog, ServiceIndex),
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
            "split": split if dataset == "stabletoolbench" else None,
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


_SENTENCE = re.compile(r"(?<=[.?!])\s+")
_JOINER = re.compile(r",?\s+\b(?:and also|also|additionally|and then|then|furthermore)\b\s+", re.I)
PARAPHRASES = ("clause", "short")
"""Stand-ins for the main agent's paraphrase of the request for one category (no model):

- `clause`: the sentence or clause of the request that best matches the category (the
  highest BM25 score of any of its tools), as a main agent that splits a request by
  category writes it;
- `short`: that clause's first 6 words, as a small model writes it ("get character details").
"""
WEIGHTS: dict[str, tuple[int, int]] = {
    "paraphrase alone": (1, 0),
    "request alone": (0, 1),
    "paraphrase + request, turns 1:1": (1, 1),
    "paraphrase + request, turns 2:1": (2, 1),
    "paraphrase + request, turns 1:2": (1, 2),
    "request + paraphrase, turns 1:1 (request first: Shortlist.select)": (-1, 1),
}
"""How many of each ranking's best take a turn before the other's, the paraphrase's
first; a negative first count: the request's turn comes first."""


def clauses(request: str) -> list[str]:
    """The sentences of `request`, each cut again at "also", "then", "additionally", ..."""
    parts = [p for sentence in _SENTENCE.split(request) for p in _JOINER.split(sentence)]
    return [p.strip() for p in parts if p.strip()] or [request]


def paraphrase(request: str, shortlist: Shortlist, kind: str) -> str:
    """The stand-in paraphrase of `request` for the category of `shortlist` (`PARAPHRASES`)."""
    best = max(clauses(request), key=lambda c: float(max(shortlist.index.scores(c), default=0)))
    return " ".join(best.split()[:6]) if kind == "short" else best


def taking_turns(
    first: Sequence[int], second: Sequence[int], weights: tuple[int, int]
) -> list[int]:
    """Two rankings merged: `weights[0]` of first's best, then `weights[1]` of second's, ...;
    each item once. (1, 1) is `meta_tools.category.shortlist.alternate`."""
    a, b = weights
    if a < 0:
        return taking_turns(second, first, (b, -a))
    if not b:
        return list(first)
    if not a:
        return list(second)
    merged: dict[int, None] = {}
    for start in range(len(first)):
        for item in first[start * a : (start + 1) * a]:
            merged.setdefault(item)
        for item in second[start * b : (start + 1) * b]:
            merged.setdefault(item)
        if len(merged) == len(first):
            break
    return list(merged)


def request_weighing(
    data: Path, *, split: Part = "tune", max_tools: int = 10
) -> dict[str, dict[str, dict[str, float]]]:
    """Does a category's shortlist find the gold tools better when it ranks by the user's
    request beside the main agent's paraphrase? No model: the paraphrase is a stand-in
    (`PARAPHRASES`).

    The e2e large catalog, one category per catalog category (as `LargeCatalog.router`),
    `max_tools` offered a call. For each query and each category holding one of its gold
    tools: the first `max_tools` of the merged ranking (`WEIGHTS`). Reported per paraphrase
    and weighting, averaged over (query, category) pairs: `offered` (share of the pair's
    gold tools offered), `hit` (some gold tool offered), `top1` (the first tool is gold),
    `top3`.
    """
    from .e2e_catalog import load_large_catalog

    large = load_large_catalog(data)
    grouped: dict[str, list[CatalogTool]] = {}
    for tool in large.tools:
        grouped.setdefault(tool.entry.get("category") or "Other", []).append(tool)
    shortlists = {name: Shortlist(tools, max_tools=max_tools) for name, tools in grouped.items()}
    home = {t.name: t.entry.get("category") or "Other" for t in large.tools}
    pairs = [
        (query["query"], category, {n for n in large.gold_names(query) if home[n] == category})
        for query in split_queries(large.queries, split)
        for category in sorted({home[n] for n in large.gold_names(query)})
    ]
    found: dict[str, dict[str, dict[str, float]]] = {}
    for kind in PARAPHRASES:
        totals = {
            label: dict.fromkeys(("offered", "hit", "top1", "top3"), 0.0) for label in WEIGHTS
        }
        for request, category, gold in pairs:
            shortlist = shortlists[category]
            by_paraphrase = shortlist.rank(paraphrase(request, shortlist, kind))
            by_request = shortlist.rank(request)
            for label, weights in WEIGHTS.items():
                order = taking_turns(by_paraphrase, by_request, weights)
                names = [shortlist.tools[i].name for i in order[:max_tools]]
                inside = len(gold & set(names))
                total = totals[label]
                total["offered"] += inside / len(gold)
                total["hit"] += bool(inside)
                total["top1"] += names[0] in gold
                total["top3"] += bool(gold & set(names[:3]))
        found[kind] = {
            label: {k: round(v / len(pairs), 4) for k, v in total.items()} | {"pairs": len(pairs)}
            for label, total in totals.items()
        }
    return found


def show_weighing(found: Mapping[str, Mapping[str, Mapping[str, float]]]) -> str:
    from .report import table

    out = []
    for kind, rows in found.items():
        pairs = next(iter(rows.values()))["pairs"]
        out.append(f"paraphrase stand-in: {kind} ({pairs:.0f} query-category pairs)")
        out.append(
            table(
                ["ranked by", "gold offered (of 10)", "hit", "first is gold", "gold in top 3"],
                [
                    [
                        label,
                        f"{r['offered']:.3f}",
                        f"{r['hit']:.3f}",
                        f"{r['top1']:.3f}",
                        f"{r['top3']:.3f}",
                    ]
                    for label, r in rows.items()
                ],
            )
        )
    return "\n\n".join(out)


def main(argv: Sequence[str] | None = None) -> int:
    """`python -m benchmarks.recall [--split tune|test|all] [--weighing] [--data DIR]`:
    print the shortlist tables, or with `--weighing` the request-weighing table
    (`python -m benchmarks shortlist` also writes a results file)."""
    import argparse

    from .run import show_shortlist

    parser = argparse.ArgumentParser(prog="python -m benchmarks.recall", description=__doc__)
    parser.add_argument("--data", type=Path, default=DEFAULT_DATA, help="public data folder")
    parser.add_argument("--split", choices=PARTS, default="test", help="StableToolBench part")
    parser.add_argument(
        "--weighing", action="store_true", help="request beside paraphrase (use --split tune)"
    )
    args = parser.parse_args(argv)
    if args.weighing:
        print(show_weighing(request_weighing(args.data, split=args.split)))
    else:
        print(show_shortlist(run(args.data, split=args.split)))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
