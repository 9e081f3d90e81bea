"""`python -m benchmarks ranking`: how well and how fast `MetaManager.rank` finds a query's category.

A category is ranked through its tools (see `meta_tools.router.ranking`). For
each query, the rank of the best-placed category that holds a gold tool gives
Recall@1/3/5 (the share of queries with such a category in the top k). Catalogs:

- the e2e large catalog (LiveMCPBench tools + the StableToolBench APIs its
  queries were written against, 48 categories) with the StableToolBench queries of
  one part of the committed split (`--split`: test, 130 queries, for reported
  figures; tune, 255, for trying changes; all, 385);
- the whole StableToolBench catalog (46 categories) with the same queries;
- LiveMCPBench (8 categories; no queries: each described tool's own
  description, with that tool left out of the ranking);
- Seal-Tools (146 categories) with its queries: scale.

Latency is the wall time of one `rank` call (p50 / p99 over the queries).
"Offered" is what a main agent gets with the default `routing` settings (at most
`max_categories`, each scoring at least `min_score_ratio` of the best): the share
of queries with a gold category among them, and how many there are on average.
"""

from __future__ import annotations

import statistics
import time
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from meta_tools.category.manager import CategoryManager
from meta_tools.config import RoutingConfig
from meta_tools.llm import ScriptedModel
from meta_tools.router.ranking import CategoryRanking, best_few

from .catalog import (
    DEFAULT_DATA,
    PARTS,
    CatalogTool,
    Part,
    load_catalog,
    load_queries,
    split_known,
    split_queries,
)
from .e2e_catalog import load_large_catalog

__all__ = ["KS", "main", "run"]

KS = (1, 3, 5)


def _ranking(tools: Sequence[CatalogTool]) -> tuple[CategoryRanking, float]:
    grouped: dict[str, list[CatalogTool]] = {}
    for tool in tools:
        grouped.setdefault(tool.entry.get("category") or "Other", []).append(tool)
    model = ScriptedModel([])
    managers = [CategoryManager(name, name, members, model) for name, members in grouped.items()]
    started = time.perf_counter()
    ranking = CategoryRanking(managers)
    return ranking, time.perf_counter() - started


def _measure(
    tools: Sequence[CatalogTool], asked: Sequence[tuple[str, set[str], str | None]]
) -> dict[str, Any]:
    """asked: (query, gold categories, a tool to leave out or None)."""
    ranking, built = _ranking(tools)
    hits = dict.fromkeys(KS, 0)
    routing = RoutingConfig()
    offered_hits = offered_count = 0
    took: list[float] = []
    for query, gold, left_out in asked:
        started = time.perf_counter()
        ranked = ranking.rank(query, leave_out={left_out} if left_out else ())
        took.append(time.perf_counter() - started)
        names = [r.category.name for r in ranked]
        for k in KS:
            hits[k] += bool(gold & set(names[:k]))
        offered = (
            ranked
            if len(ranked) <= routing.max_categories  # few enough: a main agent sees them all
            else best_few(ranked, routing.max_categories, routing.min_score_ratio)
        )
        offered_hits += bool(gold & {r.category.name for r in offered})
        offered_count += len(offered)
    n = len(asked)
    ms = sorted(t * 1000 for t in took)
    return {
        "tools": len(tools),
        "categories": len(ranking.categories),
        "queries": n,
        **{f"recall@{k}": round(hits[k] / n, 3) for k in KS},
        "offered_recall": round(offered_hits / n, 3),
        "offered_mean": round(offered_count / n, 2),
        "build_s": round(built, 2),
        "p50_ms": round(statistics.median(ms), 2),
        "p99_ms": round(ms[min(len(ms) - 1, int(len(ms) * 0.99))], 2),
    }


def _by_queries(tools: Sequence[CatalogTool], queries: list[dict[str, Any]]) -> dict[str, Any]:
    category = {t.entry["id"]: t.entry.get("category") or "Other" for t in tools}
    asked = [
        (q["query"], {category[g] for g in q["gold"] if g in category}, None)
        for q in queries
        if any(g in category for g in q["gold"])
    ]
    return _measure(tools, asked)


def run(data: Path, *, split: Part = "test") -> dict[str, Any]:
    """Every measurement whose data sets are in `data` (a missing one is left out);
    StableToolBench queries from the `split` part of the committed split."""
    have = {
        name for name in ("livemcpbench", "stabletoolbench", "sealtools") if (data / name).is_dir()
    }
    found: dict[str, Any] = {}
    if {"livemcpbench", "stabletoolbench"} <= have:
        large = load_large_catalog(data)
        part = f", {split} part" if split_known(large.queries) else ""
        found[f"large catalog (e2e), StableToolBench queries{part}"] = _by_queries(
            large.tools, split_queries(large.queries, split)
        )
    if "stabletoolbench" in have:
        stable = load_catalog(data, "stabletoolbench")
        queries = load_queries(data, "stabletoolbench")
        part = f", {split} part" if split_known(queries) else ""
        found[f"StableToolBench, its queries{part}"] = _by_queries(
            stable.tools, split_queries(queries, split)
        )
    if "livemcpbench" in have:
        live = load_catalog(data, "livemcpbench")
        asked = [
            (t.description, {t.entry.get("category") or "Other"}, t.name)
            for t in live.tools
            if t.description.strip()
        ]
        found["LiveMCPBench, each tool's description (left out)"] = _measure(live.tools, asked)
    if "sealtools" in have:
        seal = load_catalog(data, "sealtools")
        found["Seal-Tools, its queries"] = _by_queries(seal.tools, load_queries(data, "sealtools"))
    return found


def main(argv: Sequence[str] | None = None) -> int:
    """`python -m benchmarks.ranking [--split tune|test|all] [--data DIR]`: print the table
    (`python -m benchmarks ranking` also writes `results/ranking.json`)."""
    import argparse

    from .run import show_ranking

    parser = argparse.ArgumentParser(prog="python -m benchmarks.ranking", description=__doc__)
    parser.add_argument("--data", type=Path, default=DEFAULT_DATA, help="public data folder")
    parser.add_argument("--split", choices=PARTS, default="test", help="StableToolBench part")
    args = parser.parse_args(argv)
    print(show_ranking(run(args.data, split=args.split)))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
