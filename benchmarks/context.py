"""*context*: how much tool-definition text each LLM sees, flat versus meta-tools.

- Main agent: the 527 LiveMCPBench tools as flat function definitions, against
  the 8 category tools of a `MetaManager` over the same tools (grouped by the
  catalog's categories, with a one-sentence description each, as a user writes).
- Category calls: the largest tool block one category LLM call sees, offering
  the whole category (what the reference does) against the shortlist. Each
  tool's own description serves as an objective (the catalog has no queries).
- Scale: the same on Seal-Tools' 4,076 tools, in its 146 categories and as one
  single category, with its 1,002 queries as objectives.
- Scripted one-tool tasks: LLM calls and prompt tokens per task with and without
  the shortlist (the model calls the best-ranked tool, then answers).
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from meta_tools.category.manager import CONTROL_TOOLS, CategoryManager
from meta_tools.category.run import Run, RunState
from meta_tools.cli.tokens import TokenCounter, load_counter
from meta_tools.llm import AssistantTurn, ChatRequest, ScriptedModel, ToolCall
from meta_tools.llm.openai_tools import openai_tool
from meta_tools.router.manager import CATEGORY_SENTENCE, MetaManager
from meta_tools.tools.schema import TOOL_NAME

from .catalog import Catalog, CatalogTool, load_catalog, load_queries

# What a user would write for each LiveMCPBench category in Meta_tool_config.json.
DESCRIPTIONS = {
    "Discovery": "Search and fetch information: web search, papers, news, trends, weather, "
    "time, wikis, travel and recipes.",
    "Finance": "Stock, crypto and currency prices, exchange rates and company financials.",
    "Code": "Software development: git, Docker, package registries, docs and UI components.",
    "Visualization": "Make charts, diagrams, mind maps, icons, slides and images.",
    "Entertainment": "Games, chess, horoscopes and random numbers.",
    "File Access": "Read, write, search and convert local files: text, Word, Excel and PDF.",
    "Location": "Maps: geocoding, routes, nearby places and areas (OpenStreetMap).",
    "Miscellaneous": "Memory and knowledge graphs, task lists, browser automation, "
    "calculation, music analysis and step-by-step thinking.",
}


def _chars(schemas: list[dict[str, Any]]) -> int:
    return len(json.dumps(schemas, ensure_ascii=False))


def _never(request: ChatRequest) -> AssistantTurn:
    return AssistantTurn(text="unused")


def _managers(
    catalog: Catalog,
    *,
    shortlist: bool,
    model: ScriptedModel | None = None,
    single: bool = False,
) -> list[CategoryManager]:
    groups = {"all": catalog.tools} if single else catalog.categories
    limits: dict[str, Any] = (
        {"max_tools_per_prompt": 20, "max_tool_chars_per_prompt": 12_000}
        if shortlist
        else {"max_tools_per_prompt": 10**6, "max_tool_chars_per_prompt": None}
    )
    return [
        CategoryManager(
            name,
            DESCRIPTIONS.get(name, f"Tools of the {name} field."),
            tools,
            model or ScriptedModel.from_function(_never),
            **limits,
        )
        for name, tools in groups.items()
    ]


def _main_agent(catalog: Catalog, counter: TokenCounter) -> dict[str, Any]:
    flat = [t.openai_schema() for t in catalog.tools]
    meta = MetaManager(_managers(catalog, shortlist=True))
    definitions = meta.tool_definitions()
    categories = [openai_tool(d) for d in definitions]
    fixed = []
    for definition, schema in zip(definitions, categories, strict=True):
        user_text = definition.description.removesuffix(" " + CATEGORY_SENTENCE)
        without = openai_tool(definition.model_copy(update={"description": ""}))
        fixed.append(
            {
                "without_description": _chars([without]) - 2,
                "without_user_description": _chars([schema]) - 2 - len(user_text),
            }
        )
    names = [t.name for t in catalog.tools]
    flat_chars, meta_chars = _chars(flat), _chars(categories)
    flat_tokens, meta_tokens = counter.count_tools(flat), counter.count_tools(categories)
    return {
        "tools": len(flat),
        "categories": len(categories),
        "flat_chars": flat_chars,
        "meta_chars": meta_chars,
        "chars_saved": round(1 - meta_chars / flat_chars, 4),
        "flat_tokens": flat_tokens,
        "meta_tokens": meta_tokens,
        "tokens_saved": round(1 - meta_tokens / flat_tokens, 4),
        "fixed_chars_per_category_tool": max(f["without_description"] for f in fixed),
        "fixed_chars_with_router_sentence": max(f["without_user_description"] for f in fixed),
        "reachable_tools": len(set(names)),
        "valid_names": sum(1 for n in names if TOOL_NAME.match(n)),
        "category_names_valid": all(TOOL_NAME.match(d.name) for d in definitions),
    }


def _largest_block(
    catalog: Catalog, objectives: list[str], counter: TokenCounter, *, single: bool = False
) -> dict[str, Any]:
    """The most tools, characters and tokens any single category call is offered."""
    out: dict[str, Any] = {}
    for label, shortlist in (("whole category", False), ("shortlist", True)):
        managers = _managers(catalog, shortlist=shortlist, single=single)
        by_category = {m.name: m for m in managers}
        most_tools = most_chars = most_tokens = 0
        seen: set[str] = set()
        for objective, category in objectives_by_category(catalog, objectives, single):
            manager = by_category[category]
            if manager.shortlist is None and category in seen:
                continue  # the whole category: the same block for every objective
            seen.add(category)
            run = Run(RunState(objective=objective, exact_input=""))
            schemas = [t.openai_schema() for t in manager.offer(run).tools]
            most_tools = max(most_tools, len(schemas))
            size = _chars(schemas)
            if size > most_chars:
                most_chars, most_tokens = size, counter.count_tools(schemas)
        out[label] = {"tools": most_tools, "chars": most_chars, "tokens": most_tokens}
    out["control_tools_chars"] = _chars([openai_tool(t) for t in CONTROL_TOOLS])
    return out


def objectives_by_category(
    catalog: Catalog, objectives: list[str], single: bool
) -> list[tuple[str, str]]:
    """(objective, category) pairs; objectives given as 'category\\x00text'."""
    pairs = []
    for item in objectives:
        category, _, text = item.partition("\x00")
        pairs.append((text, "all" if single else category))
    return pairs


def _tool_objectives(tools: list[CatalogTool]) -> list[str]:
    return [f"{t.entry.get('category')}\x00{t.description or t.name}" for t in tools]


def _query_objectives(catalog: Catalog, queries: list[dict[str, Any]]) -> list[str]:
    out = []
    for query in queries:
        category = catalog.by_id[query["gold"][0]].entry.get("category")
        out.append(f"{category}\x00{query['query']}")
    return out


async def _scripted_tasks(
    catalog: Catalog, objectives: list[str], counter: TokenCounter
) -> dict[str, Any]:
    """One-tool tasks: the model calls the first offered tool, then answers."""

    def script(request: ChatRequest) -> AssistantTurn:
        if len(request.messages) == 2:
            first = request.tools[0].name
            return AssistantTurn(tool_calls=[ToolCall(name=first, arguments={})])
        return AssistantTurn(text="done")

    out: dict[str, Any] = {}
    for label, shortlist in (("whole category", False), ("shortlist", True)):
        model = ScriptedModel.from_function(script)
        managers = {m.name: m for m in _managers(catalog, shortlist=shortlist, model=model)}
        calls = tokens = 0
        for text, category in objectives_by_category(catalog, objectives, False):
            model.requests.clear()
            result = await managers[category].run(text, "")
            calls += result.usage.llm_calls
            tokens += counter.count_requests(model.requests)
        out[label] = {
            "llm_calls_per_task": round(calls / len(objectives), 3),
            "prompt_tokens_per_task": round(tokens / len(objectives), 1),
        }
    return out


async def run(data: Path) -> dict[str, Any]:
    counter = load_counter()
    results: dict[str, Any] = {"tokenizer": counter.name}
    live = load_catalog(data, "livemcpbench")
    live_objectives = _tool_objectives(live.tools)
    results["livemcpbench"] = {
        "main_agent": _main_agent(live, counter),
        "largest_category_call": _largest_block(live, live_objectives, counter),
        "scripted_one_tool_tasks": await _scripted_tasks(live, live_objectives, counter),
    }
    seal = load_catalog(data, "sealtools")
    seal_objectives = _query_objectives(seal, load_queries(data, "sealtools"))
    results["sealtools"] = {
        "main_agent": _main_agent(seal, counter),
        "largest_category_call": _largest_block(seal, seal_objectives, counter),
        "largest_call_one_category_of_all_tools": _largest_block(
            seal, seal_objectives, counter, single=True
        ),
    }
    return results
