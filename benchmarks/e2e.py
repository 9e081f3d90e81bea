"""`python -m benchmarks e2e --base-url URL --model NAME`: the hierarchy against flat, end to end.

Runs a real model (any OpenAI-compatible endpoint, or DashScope) through two sets:

- the *demo set* (`e2e_tasks.py`): tasks over the demo MCP server's tools, on
  three sides: hierarchy (`MainAgent`), category call, flat;
- the *large catalog* (`e2e_catalog.py`): StableToolBench queries against
  LiveMCPBench + StableToolBench schemas, on three sides: hierarchy, retrieval
  (BM25 top-k of the whole catalog), flat (only when the catalog fits the context).

Prints a table per set and adds the run, under the model's name, to
`benchmarks/results/e2e.json` (with the machine and the date).
"""

from __future__ import annotations

import argparse
import asyncio
import datetime as dt
import itertools
import json
import random
import sys
import tempfile
import time
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from meta_tools.agent import MainAgent
from meta_tools.config import RoutingConfig
from meta_tools.llm.base import ChatModel
from meta_tools.llm.owned import close_model
from meta_tools.llm.profile import choose_profile
from meta_tools.llm.recovery import looks_like_call
from meta_tools.llm.types import AssistantTurn
from meta_tools.router.manager import MetaManager

from .catalog import DEFAULT_DATA, PARTS, Part, split_known, split_queries
from .e2e_catalog import LargeCatalog, load_large_catalog, sample_queries
from .e2e_sides import (
    CountingModel,
    Run,
    ask_category,
    ask_flat,
    ask_hierarchy,
    judge_calls,
    schema_tokens,
    show_precision,
    tool_use,
)
from .e2e_tasks import FILES, TASKS, DemoTask, interleaved
from .models import add_replay, build_model, replay_stats
from .report import (
    RESULTS,
    Checkpoint,
    checkpoint,
    current_commit,
    kept_rows,
    machine,
    store,
    stored_rows,
    summarize,
    table,
)

__all__ = ["demo_router", "main", "run_catalog", "run_demo", "score_demo"]

ROOT = Path(__file__).resolve().parent.parent
DEMO_SIDES = ("hierarchy", "category", "flat")
CATALOG_SIDES = ("hierarchy", "hierarchy_all", "retrieval", "category", "flat")
ALL_CATEGORIES = RoutingConfig(max_categories=256, retry_categories=0)
"""`hierarchy_all`: every category offered in list order, no retry (the router before ranking)."""
_ASKING = ("?", "please provide", "please specify", "need")


def _group(task: DemoTask) -> str:
    return task.group


def _subset(query: dict[str, Any]) -> str:
    return str(query.get("subset") or query["qid"].split(":")[0])


def demo_router(
    model: ChatModel, folder: Path, guards: str | None = "small", enable: Sequence[str] = ()
) -> MetaManager:
    """The repository's demo config, its file tools confined to `folder` (filled with `FILES`),
    with the guard profile `guards` (None: none set, so the router chooses it from the model)."""
    for name, text in FILES.items():
        path = folder / name
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text)
    config = json.loads((ROOT / "Meta_tool_config.json").read_text())
    config["mcp_servers"]["demo"].update(
        command=sys.executable, args=["-m", "meta_tools.demo", "--root", str(folder)], cwd=str(ROOT)
    )
    config["guards"] = {"enable": list(enable)} | ({} if guards is None else {"profile": guards})
    path = folder / "config.json"
    path.write_text(json.dumps(config))
    return MetaManager.from_config(path, model=model)


def score_demo(task: DemoTask, run: Run) -> tuple[bool, bool]:
    """Whether the answer is right, and whether the right tools (or none) ran.

    An answer that is itself a tool call (written as text, never run) neither asks nor declines.
    """
    if task.kind == "answer":
        right_tools = all(any(t in options for t in run.ran) for options in task.tools)
        return run.error is None and task.answered(run.answer), right_tools
    replied = run.error is None and not looks_like_call(run.answer)
    if task.kind == "ask":
        asked = "insufficient_input" in run.statuses or (
            not run.ran and any(mark in run.answer.lower() for mark in _ASKING)
        )
        return replied and asked, not run.ran
    return replied and not run.ran, not run.ran


def chosen(tasks: Sequence[DemoTask], ids: str | None) -> list[DemoTask]:
    """The demo tasks named in `ids` (all of them, subsets in turn, without).

    Raises:
        SystemExit: an id names no task.
    """
    if ids is None:
        return interleaved(tasks, _group)
    by_id = {t.id: t for t in tasks}
    wanted = [i.strip() for i in ids.split(",") if i.strip()]
    unknown = [i for i in wanted if i not in by_id]
    if unknown:
        raise SystemExit(
            f"--tasks: no demo task {', '.join(unknown)} (the ids: {', '.join(by_id)})"
        )
    return [by_id[i] for i in wanted]


def _say(text: str) -> None:
    print(text, flush=True)


async def run_demo(
    model: ChatModel,
    tasks: Sequence[DemoTask],
    sides: Sequence[str],
    *,
    on_row: Checkpoint | None = None,
    guards: str | None = "small",
    enable: Sequence[str] = (),
    conversation: bool = False,
) -> dict[str, Any]:
    """The demo tasks on each side; `conversation`: the hierarchy side's tasks are the
    questions of one conversation with one main agent, as `meta-tools chat` holds it
    (each question sees the ones before), instead of one new agent a task."""
    counter = CountingModel(model)
    rows: list[dict[str, Any]] = []
    with tempfile.TemporaryDirectory(prefix="e2e-demo-") as folder:
        async with demo_router(counter, Path(folder), guards, enable) as meta:
            every_tool = [t for c in meta.categories for t in c.tools.list_tools()]
            chat = MainAgent(counter, meta) if conversation else None
            for task in tasks:
                for side in sides:
                    if side == "hierarchy":
                        run = await ask_hierarchy(counter, meta, task.prompt, chat)
                    elif side == "category":
                        routes = [(r.category, r.objective, r.exact_input) for r in task.routes]
                        run = await ask_category(counter, meta, routes)
                    else:
                        run = await ask_flat(counter, every_tool, task.prompt, guards=meta.guards)
                    correct, right_tool = score_demo(task, run)
                    row = {"task": task.id, "side": side, "correct": correct}
                    rows.append(row | {"right_tool": right_tool} | run.record())
                    if on_row is not None:
                        on_row(rows)
                    _say(f"  {task.id:4} {side:10} {'ok ' if correct else 'BAD'} {run.wall_s:7.1f}s"
                         f" {run.llm_calls} calls {run.prompt_tokens} tok  {run.answer[:70]!r}"
                         f"  {run.calls}")  # fmt: skip
    return {
        "tasks": [t.id for t in tasks],
        "conversation": conversation,
        "sides": {s: side_summary([r for r in rows if r["side"] == s]) for s in sides},
        "runs": rows,
    }


def catalog_queries(
    catalog: LargeCatalog,
    limit: int | None,
    per_subset: int | None,
    seed: int,
    split: Part = "test",
) -> list[dict[str, Any]]:
    """The queries of a catalog run: those of one part of the committed split
    (`benchmarks/splits/stabletoolbench.json`), a seeded sample per subset (or all),
    subsets in turn."""
    queries = split_queries(catalog.queries, split)
    if per_subset is not None:
        queries = sample_queries(queries, per_subset, seed)
    return interleaved(queries, _subset)[:limit]


async def run_catalog(
    model: ChatModel,
    data: Path,
    limit: int | None,
    sides: Sequence[str],
    *,
    top_k: int = 10,
    context_tokens: int = 16_384,
    per_subset: int | None = None,
    seed: int = 0,
    order_seed: int | None = None,
    on_row: Checkpoint | None = None,
    done: Sequence[dict[str, Any]] = (),
    guards: str | None = "small",
    split: Part = "test",
) -> dict[str, Any]:
    """Each query asked on each side; rows of `done` (an earlier run's, same settings)
    are kept and not asked again, so that a run of hours can go on where it stopped."""
    catalog = load_large_catalog(data)
    queries = catalog_queries(catalog, limit, per_subset, seed, split)
    rows, finished = kept_rows(done, (q["qid"] for q in queries), sides)
    counter = CountingModel(model)
    meta = catalog.router(counter, order_seed=order_seed, guards=guards)
    every = MetaManager(meta.categories, routing=ALL_CATEGORIES, guards=guards)
    slugs = {m.name: m.slug for m in meta.categories}
    flat_tokens = schema_tokens(catalog.tools)
    fits = flat_tokens < context_tokens
    for query in queries:
        gold = catalog.gold_names(query)
        gold_slugs = {slugs[c] for c in catalog.gold_categories(query)}
        for side in sides:
            if (side == "flat" and not fits) or (query["qid"], side) in finished:
                continue
            if side in ("hierarchy", "hierarchy_all"):
                router = meta if side == "hierarchy" else every
                run = await ask_hierarchy(counter, router, query["query"])
            elif side == "category":
                target = sorted(gold_slugs)[0]
                run = await ask_category(counter, meta, [(target, query["query"], query["query"])])
            elif side == "retrieval":
                offered = catalog.retrieve(query["query"], top_k)
                run = await ask_flat(counter, offered, query["query"], guards=meta.guards)
            else:
                run = await ask_flat(counter, catalog.tools, query["query"], guards=meta.guards)
            success = run.error is None and bool(gold & set(run.ran))
            row = {"task": query["qid"], "side": side, "correct": success, "right_tool": success,
                   "gold": sorted(gold)} | judge_calls(gold, run.attempts)  # fmt: skip
            if side.startswith("hierarchy"):
                row["first_category_right"] = bool(run.categories[:1]) and (
                    run.categories[0] in gold_slugs
                )
            rows.append(row | run.record())
            if on_row is not None:
                on_row(rows)
            _say(f"  {query['qid'][:18]:18} {side:13} {'ok ' if success else 'BAD'} {run.wall_s:7.1f}s"
                 f" {run.llm_calls} calls {run.prompt_tokens} tok {run.categories[:3]} {run.calls[:3]}")  # fmt: skip
    summary = {s: side_summary([r for r in rows if r["side"] == s]) for s in sides}
    if "flat" in sides and not fits:
        summary["flat"] = {"tasks": 0, "does_not_fit": True}
    return {
        "tools": len(catalog.tools),
        "categories": len(meta.categories),
        "category_tools": meta.categories[0].max_tools_per_prompt if meta.categories else None,
        "category_order_seed": order_seed,
        "split": split if split_known(catalog.queries) else None,
        "query_seed": seed if per_subset is not None else None,
        "per_subset": per_subset,
        "flat_schema_tokens": flat_tokens,
        "context_tokens": context_tokens,
        "top_k": top_k,
        "queries": [q["qid"] for q in queries],
        "sides": summary,
        "runs": rows,
    }


async def run_routing(
    model: ChatModel,
    data: Path,
    count: int,
    *,
    seed: int = 0,
    order_seeds: Sequence[int] = (1,),
    modes: Sequence[str] = ("ranked", "all"),
    on_row: Checkpoint | None = None,
    split: Part = "test",
) -> dict[str, Any]:
    """The main agent's first category for `count` queries: one model call each.

    `ranked`: the offer of `MainAgent` with ranking (the best `max_categories`, then
    `any_category`; the category such a call or a call by a tool's name runs in counts); `all`: every category in list order. Each category order
    (`order_seeds`) is a separate run, to show whether the result depends on it.
    """
    catalog = load_large_catalog(data)
    pool = split_queries(catalog.queries, split)
    queries = random.Random(seed).sample(pool, min(count, len(pool)))
    counter = CountingModel(model)
    rows: list[dict[str, Any]] = []
    # A request already asked (the same offer in another category order) gets the same
    # reply at temperature 0: it is taken from here, and the row says so.
    asked: dict[str, AssistantTurn] = {}
    for order_seed in order_seeds:
        meta = catalog.router(counter, order_seed=order_seed)
        routers = {"ranked": meta, "all": MetaManager(meta.categories, routing=ALL_CATEGORIES)}
        slugs = {m.name: m.slug for m in meta.categories}
        # One mode after the other: consecutive requests with the same tools share the
        # server's cached prompt prefix.
        for mode, query in itertools.product(modes, queries):
            gold = {slugs[c] for c in catalog.gold_categories(query)}
            agent = MainAgent(counter, routers[mode])
            request = agent.request_for(query["query"])
            key = request.model_dump_json()
            started = time.perf_counter()
            reused = key in asked
            turn = asked[key] if reused else await counter.complete(request)
            asked[key] = turn
            # As the agent reads it: calls written as text to names that are no category too.
            turn = await agent.routable(turn, request)
            took = time.perf_counter() - started
            counted = counter.take()
            first = (
                agent.category_for(turn.tool_calls[0], query["query"]) if turn.tool_calls else None
            )
            row = {"task": query["qid"], "side": f"{mode}/order{order_seed}",
                   "correct": first in gold, "right_tool": first in gold, "first": first,
                   "gold": sorted(gold), "error": None, "reused_reply": reused,
                   "llm_calls": counted.llm_calls,
                   "prompt_tokens": counted.prompt_tokens,
                   "completion_tokens": counted.completion_tokens,
                   "recovered_calls": counted.recovered_calls, "wall_s": round(took, 2)}  # fmt: skip
            rows.append(row)
            if on_row is not None:
                on_row(rows)
            _say(f"  {query['qid'][:18]:18} {row['side']:12} {'ok ' if row['correct'] else 'BAD'}"
                 f" {took:6.1f}s {counted.prompt_tokens} tok  {first} (gold {sorted(gold)})")  # fmt: skip
    sides = sorted({r["side"] for r in rows})
    return {
        "split": split if split_known(catalog.queries) else None,
        "queries": [q["qid"] for q in queries],
        "sides": {s: summarize([r for r in rows if r["side"] == s]) for s in sides},
        "runs": rows,
    }


def side_summary(rows: Sequence[dict[str, Any]]) -> dict[str, Any]:
    """`summarize` with precision, completion and where the LLM calls went (`tool_use`)."""
    return summarize(rows) | tool_use(rows) if rows else summarize(rows)


def show(title: str, sides: dict[str, dict[str, Any]]) -> str:
    rows = []
    for side, s in sides.items():
        if s.get("does_not_fit"):
            rows.append([side, "does not fit", "", "", "", "", "", "", ""])
            continue
        if not s.get("tasks"):
            continue
        rows.append(
            [
                side,
                s["tasks"],
                f"{s['accuracy']:.0%}",
                f"{s['right_tool']:.0%}",
                f"{s['first_category']:.0%}" if "first_category" in s else "",
                s["llm_calls"],
                f"{s['prompt_tokens']:,} / {s['completion_tokens']:,}",
                s["recovered_calls"],
                f"{s['wall_s']:,.0f}",
            ]
        )
    headers = ["side", "tasks", "accuracy", "right tool", "first category", "LLM calls",
               "prompt / completion tokens",
               "recovered calls", "wall s"]  # fmt: skip
    precision = show_precision(sides)
    return f"### {title}\n\n" + table(headers, rows) + (f"\n\n{precision}" if precision else "")


def parse(argv: Sequence[str] | None) -> argparse.Namespace:
    parser = argparse.ArgumentParser(prog="python -m benchmarks e2e", description=__doc__)
    parser.add_argument("--base-url", required=True, help="the model's API root")
    parser.add_argument("--model", required=True, help="the model name")
    parser.add_argument("--provider", choices=("openai", "dashscope"), default="openai")
    parser.add_argument("--api-key-env", default=None, help="variable holding the API key")
    parser.add_argument("--limit", type=int, default=None, help="first N tasks of each set")
    parser.add_argument("--set", choices=("demo", "catalog", "routing", "both"), default="both")
    parser.add_argument(
        "--per-subset", type=int, default=None, help="catalog: N queries of each subset (seeded)"
    )
    parser.add_argument("--seed", type=int, default=0, help="seed of the query samples")
    parser.add_argument(
        "--split",
        choices=PARTS,
        default="test",
        help="catalog, routing: the part of the committed StableToolBench split asked"
        " (benchmarks/splits/stabletoolbench.json): test for reported figures, tune for"
        " trying changes",
    )
    parser.add_argument(
        "--order-seed", type=int, default=None, help="catalog: shuffle the category order"
    )
    parser.add_argument("--routing-queries", type=int, default=100, help="routing: queries")
    parser.add_argument(
        "--routing-orders", default="1,2", help="routing: category-order seeds, comma-separated"
    )
    parser.add_argument("--tasks", default=None, help="comma-separated demo task ids (m1,d3)")
    parser.add_argument(
        "--conversation",
        action="store_true",
        help="demo: ask the tasks as one conversation with one main agent, as a chat does",
    )
    parser.add_argument("--sides", default=None, help="comma-separated subset of the sides")
    parser.add_argument("--quantisation", default="unknown", help="recorded with the results")
    parser.add_argument("--timeout", type=float, default=600.0, help="seconds per model request")
    parser.add_argument("--max-tokens", type=int, default=400)
    parser.add_argument(
        "--guards",
        choices=("auto", "small", "capable"),
        default="auto",
        help="the guard profile (auto: none given, the router chooses it from the model's"
        " name as it does by default; small: for small local models such as the 1.5B;"
        " capable: GPT-4o class); recorded with the results",
    )
    parser.add_argument(
        "--enable",
        type=lambda text: [name for name in text.split(",") if name],
        default=[],
        help="demo set: guards to run beyond the profile's (comma-separated)",
    )
    parser.add_argument("--temperature", type=float, default=0.0)
    parser.add_argument("--context", type=int, default=16_384, help="the model's context (tokens)")
    parser.add_argument("--top-k", type=int, default=10, help="tools offered by retrieval")
    parser.add_argument("--data", type=Path, default=DEFAULT_DATA, help="public data folder")
    parser.add_argument("--out", type=Path, default=None, help="results file (default e2e.json)")
    parser.add_argument("--log", type=Path, default=None, help="append every model turn here")
    add_replay(parser)
    parser.add_argument(
        "--resume",
        action="store_true",
        help="catalog: keep the rows already in --out, ask the rest",
    )
    return parser.parse_args(argv)


async def _run_sets(
    args: argparse.Namespace, model: ChatModel, wanted: list[str] | None, record: dict[str, Any]
) -> None:
    out = args.out or RESULTS / "e2e.json"
    try:
        if args.set in ("demo", "both"):
            tasks = chosen(TASKS, args.tasks)[: args.limit]
            sides = [s for s in DEMO_SIDES if wanted is None or s in wanted]
            _say(f"demo set: {len(tasks)} of {len(TASKS)} tasks, sides {', '.join(sides)}")
            save = checkpoint(out, args.model, record, "demo")
            record["demo"] = await run_demo(
                model,
                tasks,
                sides,
                on_row=save,
                guards=given(args),
                enable=args.enable,
                conversation=args.conversation,
            )
            store(out, args.model, record)
            _say(show(f"demo set, {args.model}", record["demo"]["sides"]))
        if args.set in ("catalog", "both"):
            sides = [s for s in CATALOG_SIDES if wanted is None or s in wanted]
            save = checkpoint(out, args.model, record, "catalog")
            found = await run_catalog(
                model,
                args.data,
                args.limit,
                sides,
                top_k=args.top_k,
                context_tokens=args.context,
                per_subset=args.per_subset,
                seed=args.seed,
                order_seed=args.order_seed,
                on_row=save,
                done=stored_rows(out, args.model, "catalog") if args.resume else (),
                guards=given(args),
                split=args.split,
            )
            record["catalog"] = found
            store(out, args.model, record)
            title = f"large catalog ({found['tools']} tools, {args.split} queries), {args.model}"
            _say(show(title, found["sides"]))
        if args.set == "routing":
            save = checkpoint(out, args.model, record, "routing")
            orders = [int(x) for x in args.routing_orders.split(",") if x.strip()]
            routed = await run_routing(
                model,
                args.data,
                args.routing_queries,
                seed=args.seed,
                order_seeds=orders,
                modes=wanted or ("ranked", "all"),
                on_row=save,
                split=args.split,
            )
            record["routing"] = routed
            store(out, args.model, record)
            _say(show(f"routing only, {args.model}", routed["sides"]))
    finally:
        await close_model(model)


def given(args: argparse.Namespace) -> str | None:
    """The guard profile given to the router: None under `auto` (it chooses from the model)."""
    return None if args.guards == "auto" else str(args.guards)


def main(argv: Sequence[str] | None = None) -> int:
    args = parse(argv)
    wanted = args.sides.split(",") if args.sides else None
    chosen = choose_profile(args.model, provider=args.provider, base_url=args.base_url)
    profile = chosen.guards if args.guards == "auto" else args.guards
    # Under the small profile the client reads text calls too, so that the runs count them.
    model = build_model(args, provider=args.provider, recover_text_calls=profile == "small")
    record: dict[str, Any] = {
        "model": args.model,
        "base_url": args.base_url,
        "quantisation": args.quantisation,
        "machine": machine(),
        "date": dt.datetime.now(dt.timezone.utc).strftime("%Y-%m-%d %H:%M UTC"),
        "limit": args.limit,
        "options": {"max_tokens": args.max_tokens, "temperature": args.temperature},
        "guards": profile,
        "guards_chosen": f"by the router: {chosen.reason}" if args.guards == "auto" else "given",
        "enable": args.enable,
        "commit": current_commit(),
    }
    if (replayed := replay_stats(model)) is not None:
        record["replay"] = replayed  # counted as the run goes: stored with every row
    asyncio.run(_run_sets(args, model, wanted, record))
    _say(f"-> {args.out or RESULTS / 'e2e.json'}")
    return 0
