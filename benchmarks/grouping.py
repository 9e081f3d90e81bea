"""*grouping*: hand-made categories against `meta-tools group --by server` and `--by topic`.

For each public catalog, four groupings of the same tools:
- `hand-made`: the catalog's own categories, as their authors named them (for
  LiveMCPBench with the one-sentence descriptions of `context.DESCRIPTIONS`);
- `hand-made, words`: the same groups, described from the tools' own words as
  `meta-tools group` does (separates the grouping from its descriptions);
- `by server`: one category per server / API service / sub-field, as
  `group --by server` writes it;
- `by topic`: `group --by topic --categories K` with K the hand-made count and
  the default size bound (1.5 × the mean size).

Measured:
- routability: a category's routing text is its name, its description and its
  tools' names; categories are ranked by BM25 (our `Bm25Index`) against the
  query. Recall@k: the share of a query's gold tools whose category is in the
  top k, averaged over queries. LiveMCPBench has no queries: each tool's own
  description is the query, its name taken out of every routing text (a proxy
  that favours groupings built from descriptions, such as `by topic`). With
  `--base-url`, a model is shown the category tools as `MetaManager` offers
  them and asked to call one, on a seeded sample of `--sample` queries;
- within-category Recall@20: the shortlist ranking each gold tool among the
  tools of its own category (as one category call does);
- sizes: categories, largest, smallest, how many exceed 20 tools
  (`max_tools_per_prompt`), and the grouping check's findings by kind;
- ARI: adjusted Rand index against the hand-made grouping (information only);
- the ceiling by query subset: the R@1 a perfect router would reach, the share
  of a query's gold tools held by the one category holding most of them
  (what splitting a query's tools over categories costs, apart from BM25);
- how alike the servers of one query's gold tools are: the mean cosine of the
  servers' TF-IDF vectors (all their tools' text) over pairs of gold servers,
  by subset, against pairs drawn at random from one hand-made category and
  from the whole catalog (a grouping by text can keep together only what its
  text makes alike).

Small sets (`run_small`), every tool placed on its own as a user's Python tools are:
the demo's 15 tools with k = 4 against the shipped grouping, and sets of 3 to 5
servers of 3 to 7 tools drawn from each catalog (`small_sets`: seeds fixed once, a
`tune` split to try changes on and the reported `test` split) with k = their servers;
the adjusted Rand index against the servers.

And the scale case (`run_scale`, no data needed): 1,000 and 5,000 tools that
all read alike, the worst case for merging the closest groups first (every
pair is a tie): `identical` (`tool_17`, one description) and `pathological`
(64-character names of one word, that word 150 times as the description).
Measured: the seconds `group --by topic` spends grouping and naming, and the
grouping check; of the merge step alone, the cosines it computes (against
units²), its seconds and the memory it holds at the peak.
"""

from __future__ import annotations

import asyncio
import json
import random
import time
import tracemalloc
from collections import Counter
from collections.abc import Callable, Sequence
from functools import partial
from math import comb
from pathlib import Path
from typing import Any

from meta_tools.category.manager import CategoryManager
from meta_tools.category.shortlist import Bm25Index
from meta_tools.grouping.check import CategoryView, check_grouping
from meta_tools.grouping.cluster import Merging, automatic_k, default_max_size, dot_products
from meta_tools.grouping.features import TermSpace, tool_terms
from meta_tools.grouping.name import Draft, draft_from_words
from meta_tools.grouping.plan import draft_categories
from meta_tools.grouping.propose import by_server
from meta_tools.llm import ChatRequest, Message, ScriptedModel
from meta_tools.llm.base import ChatModel
from meta_tools.router.manager import MetaManager
from meta_tools.support.text import slugify

from .catalog import Catalog, CatalogTool, load_catalog, load_queries
from .context import DESCRIPTIONS
from .recall import evaluate_within

DATASETS = ("livemcpbench", "stabletoolbench", "sealtools")
LIMIT = 20
MODEL_MAX_CATEGORIES = 128
SCALE = (1_000, 5_000)
"""Tool counts of the scale case (`python -m benchmarks grouping --quick`: the first only)."""


def category_document(name: str, description: str, tool_names: Sequence[str]) -> str:
    """What a main agent routes on: the category's name, its description and its tools' names."""
    names = " ".join(n.replace("_", " ").replace("-", " ") for n in tool_names)
    return f"{name}. {description} {names}"


def adjusted_rand_index(first: Sequence[str], second: Sequence[str]) -> float:
    """Agreement of two labelings of the same items, 0 for chance and 1 for identical."""
    pairs = sum(comb(n, 2) for n in Counter(zip(first, second, strict=True)).values())
    left = sum(comb(n, 2) for n in Counter(first).values())
    right = sum(comb(n, 2) for n in Counter(second).values())
    total = comb(len(first), 2)
    expected = left * right / total if total else 0.0
    ceiling = (left + right) / 2
    return 1.0 if ceiling == expected else (pairs - expected) / (ceiling - expected)


def _hand(catalog: Catalog, *, words: bool) -> list[Draft]:
    """The catalog's categories, described by their authors or from the tools' own words."""
    tools = catalog.tools
    labels = [t.entry.get("category") or "all" for t in tools]
    sources = [t.entry.get("group") or "" for t in tools]
    grouping = by_server(tools, labels)  # one group per hand-made label, in catalog order
    drafts = []
    for index, members in enumerate(grouping.groups):
        name = labels[members[0]]
        text = (
            draft_from_words(grouping, index, tools, sources).description
            if words
            else DESCRIPTIONS.get(name, "")
        )
        drafts.append(Draft(name, text, "", tuple(tools[p].name for p in members)))
    return drafts


def _routability(
    catalog: Catalog, drafts: Sequence[Draft], queries: list[dict[str, Any]]
) -> dict[str, float]:
    home = {name: i for i, d in enumerate(drafts) for name in d.tools}
    asked = _asked(catalog, queries)
    if queries:
        index = Bm25Index([category_document(d.name, d.description, d.tools) for d in drafts])
        return _recall(
            [(q, [home[g] for g in gold]) for q, gold in asked],
            lambda _number, query: index.scores(query),
        )

    def scores(number: int, query: str) -> Any:
        hidden = asked[number][1][0]  # the tool whose description is the query
        return Bm25Index(
            [
                category_document(d.name, d.description, [n for n in d.tools if n != hidden])
                for d in drafts
            ]
        ).scores(query)

    return _recall([(q, [home[g] for g in gold]) for q, gold in asked], scores)


def _recall(
    asked: list[tuple[str, list[int]]], scores: Callable[[int, str], Any]
) -> dict[str, float]:
    found = {1: 0.0, 2: 0.0}
    for number, (query, homes) in enumerate(asked):
        values = scores(number, query)
        order = sorted(range(len(values)), key=lambda i: -float(values[i]))
        for k in found:
            found[k] += sum(1 for h in homes if h in order[:k]) / len(homes)
    return {f"recall@{k}": round(v / max(len(asked), 1), 4) for k, v in found.items()}


def _measure(
    catalog: Catalog,
    drafts: list[Draft],
    queries: list[dict[str, Any]],
    hand: Sequence[str],
    seconds: float,
) -> dict[str, Any]:
    sizes = sorted((len(d.tools) for d in drafts), reverse=True)
    by_name = {t.name: t for t in catalog.tools}
    label = {name: d.name for d in drafts for name in d.tools}
    views = [
        CategoryView(d.name, d.description, [by_name[n] for n in d.tools], LIMIT) for d in drafts
    ]
    started = time.perf_counter()
    findings = Counter(f.kind for f in check_grouping(views))
    members = {d.name: [by_name[n] for n in d.tools] for d in drafts}
    result: dict[str, Any] = {
        "categories": len(drafts),
        "largest": sizes[0],
        "smallest": sizes[-1],
        f"over_{LIMIT}": sum(1 for s in sizes if s > LIMIT),
        "covers_every_tool": sorted(label) == sorted(by_name),
        "ari": round(adjusted_rand_index(hand, [label[t.name] for t in catalog.tools]), 4),
        "routability": _routability(catalog, drafts, queries),
        "check": dict(sorted(findings.items())),
        "check_seconds": round(time.perf_counter() - started, 2),
        "grouping_seconds": round(seconds, 2),
    }
    subsets = sorted({q["subset"] for q in queries if q.get("subset")})
    if len(subsets) > 1:
        result["routability_by_subset"] = {
            name: _routability(catalog, drafts, [q for q in queries if q.get("subset") == name])[
                "recall@1"
            ]
            for name in subsets
        }
        result["ceiling_by_subset"] = {
            name: _ceiling(catalog, drafts, [q for q in queries if q.get("subset") == name])
            for name in subsets
        }
    if queries:
        within = evaluate_within(catalog, queries, lambda t: label[t.name], members)
        result["within_recall@20"] = within["recall@20"]
    return result


def _ceiling(catalog: Catalog, drafts: Sequence[Draft], queries: list[dict[str, Any]]) -> float:
    """R@1 of a perfect router: the share of each query's gold tools in its best category."""
    home = {name: i for i, d in enumerate(drafts) for name in d.tools}
    total = 0.0
    for _query, gold in _asked(catalog, queries):
        total += max(Counter(home[g] for g in gold).values()) / len(gold)
    return round(total / max(len(queries), 1), 4)


def gold_server_cosine(
    catalog: Catalog, queries: list[dict[str, Any]], *, seed: int = 0, pairs: int = 2000
) -> dict[str, float]:
    """Mean cosine between the servers of one query's gold tools, by subset, and at random."""

    servers: dict[str, list[str]] = {}
    for tool in catalog.tools:
        servers.setdefault(tool.entry.get("group") or tool.name, []).extend(tool_terms(tool))
    names = list(servers)
    space = TermSpace.fit(list(servers.values()))
    vectors = space.vectors(list(servers.values()))
    row = {name: i for i, name in enumerate(names)}

    def mean(found: list[tuple[str, str]]) -> float:
        values = [float(vectors[row[a]] @ vectors[row[b]]) for a, b in found]
        return round(sum(values) / max(len(values), 1), 4)

    result: dict[str, float] = {}
    for subset in sorted({q.get("subset") or "all" for q in queries}):
        found = []
        for q in queries:
            if (q.get("subset") or "all") == subset:
                gold = sorted({catalog.by_id[g].entry.get("group") or "" for g in q["gold"]})
                found += [(a, b) for i, a in enumerate(gold) for b in gold[i + 1 :]]
        if found:
            result[subset] = mean(found)
    category = {t.entry.get("group") or t.name: t.entry.get("category") for t in catalog.tools}
    by_category: dict[Any, list[str]] = {}
    for name in names:
        by_category.setdefault(category[name], []).append(name)
    shared = [members for members in by_category.values() if len(members) > 1]
    rng = random.Random(seed)
    same = [tuple(rng.sample(rng.choice(shared), 2)) for _ in range(pairs)]
    result["random, same hand-made category"] = mean([(a, b) for a, b in same])
    result["random"] = mean([(a, b) for a, b in (rng.sample(names, 2) for _ in range(pairs))])
    return result


def _asked(catalog: Catalog, queries: list[dict[str, Any]]) -> list[tuple[str, list[str]]]:
    """(query, gold tool names): the query set, else each described tool's own description."""
    if queries:
        return [(q["query"], [catalog.by_id[g].name for g in q["gold"]]) for q in queries]
    return [(t.description, [t.name]) for t in catalog.tools if t.description.strip()]


async def model_routability(
    model: ChatModel,
    catalog: Catalog,
    drafts: Sequence[Draft],
    queries: list[dict[str, Any]],
    *,
    sample: int,
    seed: int = 0,
) -> dict[str, Any]:
    """Recall@1 of a model acting as the main agent, on a seeded sample of the queries.

    The model is offered the category tools exactly as `MetaManager` offers
    them and asked to call one; a query counts the share of its gold tools
    held by the category it called (0 when it called none).
    """
    unused = ScriptedModel([])
    by_name = {t.name: t for t in catalog.tools}
    meta = MetaManager(
        [
            CategoryManager(d.name, d.description, [by_name[n] for n in d.tools], unused)
            for d in drafts
        ]
    )
    home = {name: slugify(d.name) for d in drafts for name in d.tools}
    asked = _asked(catalog, queries)
    chosen = random.Random(seed).sample(asked, min(sample, len(asked)))
    found, silent = 0.0, 0
    for query, gold in chosen:
        request = ChatRequest(
            messages=[
                Message(role="system", content=MAIN_AGENT),
                Message(role="user", content=query),
            ],
            tools=meta.tool_definitions(),
        )
        turn = await model.complete(request)
        called = turn.tool_calls[0].name if turn.tool_calls else None
        silent += called is None
        found += sum(1 for g in gold if home[g] == called) / len(gold)
    return {
        "recall@1": round(found / max(len(chosen), 1), 4),
        "asked": len(chosen),
        "no_call": silent,
    }


MAIN_AGENT = (
    "You are an assistant with tools. Each tool is a category of tools. Call exactly one tool:"
    " the category that can do the user's task."
)


def alike_tools(count: int, kind: str) -> list[CatalogTool]:
    """`count` tools that all read alike: `identical` or `pathological` (see the module)."""
    if kind == "identical":
        name, text = "tool_{}", "Does the same thing as every other tool."
    else:
        name, text = "Data_data-DATA_" * 4 + "{}", " ".join(["data"] * 150)
    schema = {"properties": {"data": {"type": "string"}}, "required": ["data"]}
    entries = [
        {"id": str(i), "name": name.format(i)[-64:], "description": text, "input_schema": schema}
        for i in range(count)
    ]
    return [CatalogTool(entry, entry["name"]) for entry in entries]


def _merge_alike(vectors: Any) -> Merging:
    """One merge pass over `vectors`, each its own unit, to the automatic k groups."""
    import numpy as np

    count = len(vectors)
    k = automatic_k(count)
    merging = Merging(dot_products(vectors), np.ones(count), default_max_size(count, k))
    while merging.alive_count > k and (pair := merging.closest_pair()) is not None:
        merging.merge(*pair)
    return merging


def run_scale(sizes: Sequence[int] = SCALE) -> list[dict[str, Any]]:
    """`group --by topic` and its merge step on tools that all read alike (see the module)."""
    rows: list[dict[str, Any]] = []
    for count in sizes:
        for kind in ("identical", "pathological"):
            tools = alike_tools(count, kind)
            started = time.perf_counter()
            drafts = draft_categories(tools, [""] * count, by="topic")
            grouped = time.perf_counter() - started
            started = time.perf_counter()
            by_name = {t.name: t for t in tools}
            check_grouping(
                [CategoryView(d.name, d.description, [by_name[n] for n in d.tools]) for d in drafts]
            )
            checked = time.perf_counter() - started
            # The merge step alone, every tool a unit (as for Python tools): one pass to k
            # groups, timed, then again to measure the memory it holds (tracing slows it).
            terms = [tool_terms(t) for t in tools]
            vectors = TermSpace.fit(terms).vectors(terms)
            started = time.perf_counter()
            merging = _merge_alike(vectors)
            merged = time.perf_counter() - started
            tracemalloc.start()
            _merge_alike(vectors)
            peak = tracemalloc.get_traced_memory()[1]
            tracemalloc.stop()
            rows.append(
                {
                    "tools": count,
                    "kind": kind,
                    "categories": len(drafts),
                    "largest": max(len(d.tools) for d in drafts),
                    "group_seconds": round(grouped, 2),
                    "check_seconds": round(checked, 2),
                    "merge_cosines_per_units2": round(merging.cosines / count**2, 2),
                    "merge_seconds": round(merged, 2),
                    "merge_peak_mb": round(peak / 1e6),
                }
            )
    return rows


SMALL_SEEDS = {"tune": range(25), "test": range(100, 125)}
"""Which small tool sets are drawn: `tune` to try a change on, `test` (reported) fixed once."""
SMALL_SERVERS = (3, 5)
"""How many servers a small set mixes (drawn in this range)."""
SMALL_TOOLS = (3, 7)
"""How many tools a server of a small set has (servers outside this range are not drawn)."""


def demo_tools() -> tuple[list[CatalogTool], list[str]]:
    """The demo server's 15 tools as an MCP client lists them, and each one's shipped category."""
    import anyio
    from mcp import Client

    from meta_tools.demo.categories import CATEGORIES
    from meta_tools.demo.server import build_server

    async def listed() -> list[Any]:
        async with Client(build_server(Path.cwd())) as client:
            return list((await client.list_tools()).tools)

    home = {tool: name for name, entry in CATEGORIES.items() for tool in entry["tools"]}
    tools = [
        CatalogTool({"description": t.description, "input_schema": t.input_schema}, t.name)
        for t in anyio.run(listed)
    ]
    return tools, [home[t.name] for t in tools]


def small_sets(data: Path, dataset: str, seeds: Sequence[int]) -> list[list[dict[str, Any]]]:
    """Per seed, the entries of a few servers' tools, shuffled: a user's small set of tools.

    Servers are drawn among those with `SMALL_TOOLS` tools, every one described in English
    in more than 20 characters and no two named alike; a set whose tool names repeat
    across its servers is left out (a user's tools have distinct names).
    """
    servers: dict[str, list[dict[str, Any]]] = {}
    for line in (data / dataset / "catalog.jsonl").open():
        entry = json.loads(line)
        servers.setdefault(entry.get("group") or "", []).append(entry)
    low, high = SMALL_TOOLS
    usable = sorted(
        name
        for name, entries in servers.items()
        if name
        and low <= len(entries) <= high
        and len({e["name"] for e in entries}) == len(entries)
        and all(len(d := e.get("description") or "") > 20 and d.isascii() for e in entries)
    )
    sets = []
    for seed in seeds:
        draw = random.Random(f"{dataset}-{seed}")
        if len(usable) < SMALL_SERVERS[0]:
            break
        chosen = draw.sample(usable, min(draw.randint(*SMALL_SERVERS), len(usable)))
        entries = [e for name in chosen for e in servers[name]]
        if len({e["name"] for e in entries}) < len(entries):
            continue
        draw.shuffle(entries)
        sets.append(entries)
    return sets


def run_small(data: Path, *, split: str = "test") -> dict[str, Any]:
    """`group --by topic` on small sets, each tool placed on its own (as Python tools are).

    The demo's 15 tools with k = 4 against the shipped grouping, and sets drawn from each
    catalog (`small_sets`, the `split` seeds) with k = their servers against the servers:
    the adjusted Rand index of each.
    """
    tools, shipped = demo_tools()
    drafts = draft_categories(tools, [""] * len(tools), by="topic", k=4)
    result: dict[str, Any] = {
        "demo": {
            "sets": 1,
            "mean_ari": round(_ari_of(drafts, [t.name for t in tools], shipped), 4),
            "names": [d.name for d in drafts],
        }
    }
    for dataset in DATASETS:
        if not (data / dataset / "catalog.jsonl").exists():
            continue
        scores = []
        for entries in small_sets(data, dataset, SMALL_SEEDS[split]):
            tools = [CatalogTool(e, e["name"]) for e in entries]
            servers = [e["group"] for e in entries]
            drafts = draft_categories(tools, [""] * len(tools), by="topic", k=len(set(servers)))
            scores.append(_ari_of(drafts, [t.name for t in tools], servers))
        if scores:
            result[dataset] = {
                "sets": len(scores),
                "mean_ari": round(sum(scores) / len(scores), 4),
                "min_ari": round(min(scores), 4),
                "share_at_least_0.6": round(sum(s >= 0.6 for s in scores) / len(scores), 4),
            }
    return {"split": split, "sets": result}


def _ari_of(drafts: Sequence[Draft], names: Sequence[str], truth: Sequence[str]) -> float:
    label = {name: d.name for d in drafts for name in d.tools}
    return adjusted_rand_index(list(truth), [label[n] for n in names])


def run(
    data: Path, *, seed: int = 0, model: ChatModel | None = None, sample: int = 50
) -> dict[str, Any]:
    """Every grouping of every catalog found under `data`; with `model`, its routing on a sample.

    Groupings with more than `MODEL_MAX_CATEGORIES` categories are not shown to the model
    (OpenAI accepts at most 128 functions).
    """
    results: dict[str, Any] = {}
    for dataset in DATASETS:
        if not (data / dataset / "catalog.jsonl").exists():
            continue
        catalog = load_catalog(data, dataset)
        queries = load_queries(data, dataset)
        tools = catalog.tools
        hand = [t.entry.get("category") or "all" for t in tools]
        sources = [t.entry.get("group") or "" for t in tools]
        k = len(catalog.categories)
        makers: dict[str, Callable[[], list[Draft]]] = {
            "hand-made": partial(_hand, catalog, words=False),
            "hand-made, words": partial(_hand, catalog, words=True),
            "by server": partial(draft_categories, tools, sources, by="server"),
            "by topic": partial(draft_categories, tools, sources, by="topic", k=k),
        }
        rows: dict[str, Any] = {}
        for label, make in makers.items():
            started = time.perf_counter()
            drafts = make()
            rows[label] = _measure(catalog, drafts, queries, hand, time.perf_counter() - started)
            if model is not None and len(drafts) <= MODEL_MAX_CATEGORIES:
                rows[label]["model_routability"] = asyncio.run(
                    model_routability(model, catalog, drafts, queries, sample=sample, seed=seed)
                )
        results[dataset] = {
            "tools": len(tools),
            "gold_server_cosine": gold_server_cosine(catalog, queries, seed=seed)
            if queries
            else None,
            "queries": len(queries) or None,
            "query_source": "queries.jsonl" if queries else "each tool's description (proxy)",
            "groupings": rows,
        }
    return results
