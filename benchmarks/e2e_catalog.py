"""The large catalog of the end-to-end benchmark: real schemas, simulated tools, gold APIs.

The catalog is every LiveMCPBench MCP tool (527) plus the StableToolBench APIs
that its queries were written against (each query's candidate pool, gold APIs
included). Tools are simulated: their real schemas are offered, and a call that
passes schema validation returns a canned text. A query succeeds when one of
its gold APIs ran, i.e. was called with its required arguments.
"""

from __future__ import annotations

import json
import random
from collections import defaultdict
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from meta_tools.category.manager import CategoryManager
from meta_tools.category.shortlist import Bm25Index, Shortlist
from meta_tools.config import RoutingConfig
from meta_tools.llm.base import ChatModel
from meta_tools.router.manager import MetaManager
from meta_tools.tools.base import BaseTool, tool_document

from .catalog import CatalogTool, catalog_tools, load_queries

__all__ = ["LargeCatalog", "load_large_catalog", "sample_queries"]


@dataclass
class LargeCatalog:
    tools: list[CatalogTool]
    queries: list[dict[str, Any]]

    def gold_names(self, query: dict[str, Any]) -> set[str]:
        by_id = {t.entry["id"]: t.name for t in self.tools}
        return {by_id[g] for g in query["gold"] if g in by_id}

    def gold_categories(self, query: dict[str, Any]) -> set[str]:
        """The catalog categories that hold one of the query's gold APIs."""
        gold = self.gold_names(query)
        return {t.entry.get("category") or "Other" for t in self.tools if t.name in gold}

    def router(
        self,
        model: ChatModel,
        *,
        max_tools_per_prompt: int = 10,
        order_seed: int | None = None,
        routing: RoutingConfig | None = None,
        guards: str | None = "small",
    ) -> MetaManager:
        """One category per catalog category; each offers a BM25 shortlist of its tools.

        Ten tools a call, as many as the retrieval side offers.

        `order_seed` shuffles the order the categories are listed in (a list in
        alphabetical order favours the first letters with a model that prefers the top).
        `guards` None: each category's profile is the one its model calls for.
        """
        grouped: dict[str, list[CatalogTool]] = defaultdict(list)
        for tool in self.tools:
            grouped[tool.entry.get("category") or "Other"].append(tool)
        names = sorted(grouped)
        if order_seed is not None:
            random.Random(order_seed).shuffle(names)
        managers = []
        for category in names:
            tools = grouped[category]
            services = sorted({str(t.entry.get("group") or "") for t in tools} - {""})
            shown = ", ".join(services[:3]) + (", ..." if len(services) > 3 else "")
            managers.append(
                CategoryManager(
                    category,
                    f"{category}: {len(tools)} tools ({shown}).",
                    tools,
                    model,
                    max_tools_per_prompt=max_tools_per_prompt,
                    max_iterations=3,
                    guards=guards,
                )
            )
        return MetaManager(managers, routing=routing, guards=guards)

    def retrieve(self, query: str, k: int) -> list[BaseTool]:
        """The top-k tools of the whole catalog for `query`, by plain BM25 (as RAG-MCP does;
        not the category shortlist's service smoothing, which is the hierarchy's)."""
        shortlist = Shortlist(self.tools, max_tools=k, index=plain_bm25(self.tools))
        return shortlist.select(query, "").tools


def sample_queries(
    queries: list[dict[str, Any]], per_subset: int, seed: int
) -> list[dict[str, Any]]:
    """`per_subset` queries of each subset (G1_category, ...), drawn with `seed`, in file order."""
    by_subset: dict[str, list[dict[str, Any]]] = defaultdict(list)
    for query in queries:
        by_subset[str(query.get("subset") or query["qid"].split(":")[0])].append(query)
    rng = random.Random(seed)
    picked = {
        id(q)
        for subset in sorted(by_subset)
        for q in rng.sample(by_subset[subset], min(per_subset, len(by_subset[subset])))
    }
    return [q for q in queries if id(q) in picked]


def load_large_catalog(data: Path) -> LargeCatalog:
    """The LiveMCPBench tools plus the StableToolBench candidate pools, with unique names.

    Raises:
        FileNotFoundError: the data folder does not hold both data sets.
    """
    queries = load_queries(data, "stabletoolbench")
    wanted = {i for q in queries for i in q["candidate_ids"]}
    entries = [json.loads(line) for line in (data / "livemcpbench" / "catalog.jsonl").open()]
    entries += [
        e
        for e in map(json.loads, (data / "stabletoolbench" / "catalog.jsonl").open())
        if e["id"] in wanted
    ]
    return LargeCatalog(catalog_tools(entries), queries)


def plain_bm25(tools: list[BaseTool]) -> Bm25Index:
    """BM25 over each tool's own text (`tool_document`): the retrieval baseline's index."""
    return Bm25Index([tool_document(t) for t in tools])
