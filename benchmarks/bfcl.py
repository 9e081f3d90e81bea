"""`python -m benchmarks bfcl --base-url URL --model NAME`: the Berkeley Function Calling Leaderboard.

BFCL's data and BFCL's own AST checker (the `bfcl-eval` package, the optional
`bfcl` extra) on two settings:

- *direct*: each entry's functions alone, as BFCL asks them; sides `plain` (one
  request, as BFCL's FC mode) and `category` (the category loop);
- *pooled*: every function of BFCL's live categories in one catalog, grouped by
  topic; each live_simple / live_multiple question through `hierarchy` (`MainAgent`)
  and `retrieval` (BM25 top-k, one agent).

Tools are simulated: their real schemas (BFCL's types in JSON Schema), a fixed
text once a call validates. Prints a table per setting, with what the harness
does differently from BFCL's own runs, and adds the run under the model's name
to `benchmarks/results/bfcl.json`, one row at a time.
"""

from __future__ import annotations

import argparse
import asyncio
import datetime as dt
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

from meta_tools.llm.base import ChatModel
from meta_tools.llm.owned import close_model

from .bfcl_check import CHECKER_MODEL, check, checker_version
from .bfcl_data import (
    CATEGORIES,
    LIVE,
    POOLED_QUESTIONS,
    Entry,
    Ledger,
    Sample,
    answer_fits,
    load_entries,
    sample,
    tools_for,
)
from .bfcl_sides import (
    Answered,
    PooledCatalog,
    ask_category_call,
    ask_plain,
    ask_pooled,
    read_back,
)
from .e2e_sides import CountingModel, judge_calls, show_precision, tool_use
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

__all__ = ["DIFFERENCES", "main", "run_direct", "run_pooled", "score"]

ROOT = Path(__file__).resolve().parent.parent
DIRECT_SIDES = ("plain", "read", "category")
POOLED_SIDES = ("hierarchy", "retrieval")

DIFFERENCES = (
    "FC mode, not prompt mode: the functions go as OpenAI tools, calls come back as tool"
    " calls; BFCL's prompt mode (functions in a system prompt, calls written as Python) is"
    " not run. The `read` side takes the plain reply and reads the calls it wrote as text"
    " (meta-tools' recovery, no second request): text parsing as in prompt mode, with FC's"
    " request.",
    "The chat template is the server's (llama.cpp applies the model's own template and"
    " parses its tool calls); BFCL's local FC handlers render the template themselves,"
    " with BFCL's type names (dict, float) where we send JSON Schema's (object, number;"
    " `any` untyped, where BFCL's OpenAI conversion says string), and read <tool_call>"
    " blocks with their own parser.",
    "Quantisation: the GGUF weights the server loads (recorded as `quantisation`); BFCL"
    " runs bf16 weights in vLLM or SGLang.",
    "Sampling: the temperature, max_tokens and seed recorded under `options`; BFCL uses"
    " temperature 0.001 and lets a reply fill the rest of the context.",
    "Scoring: BFCL's ast_checker on the decoded calls. Irrelevance: `plain` and `read` are right"
    " when the reply has no call (BFCL's rule); the category loop when no function ran. The"
    " category side is scored on the distinct calls that ran over all its rounds.",
    "Validation: the simulated functions check arguments against their schemas. BFCL's"
    " answers to a few entries give a value of another type than the schema declares (a"
    " boolean for a string: 1 of 400 simple, 27 of 1,053 live_multiple in bfcl-eval"
    " 2026.3.23); BFCL's checker takes them, the category loop refuses them. Each row says"
    " whether its answer fits (`answer_fits_schema`).",
    "Samples: with --limit, N entries of each category drawn with --seed (the ids are"
    " stored); BFCL scores every entry.",
)
"""What this harness does differently from BFCL's own runs (printed next to the tables)."""


def _say(text: str) -> None:
    print(text, flush=True)


def score(entry: Entry, category: str, side: str, answered: Answered) -> dict[str, Any]:
    """One row: BFCL's verdict on the side's calls, what ran and what it cost."""
    verdict = check(entry, answered.calls)
    wanted = _wanted(entry)
    called = {name for name, _ in answered.calls}
    right_function = not called if entry.irrelevance else bool(wanted) and wanted <= called
    row = {"task": entry.id, "category": category, "side": side, "correct": verdict.valid,
           "right_tool": right_function, "check_error": verdict.error,
           "check_kind": verdict.kind, "answer_fits_schema": answer_fits(entry),
           "bfcl_calls": [[name, arguments] for name, arguments in answered.calls]}  # fmt: skip
    return row | answered.run.record()


def _line(row: dict[str, Any]) -> str:
    mark = "ok " if row["correct"] else "BAD"
    return (f"  {row['task'][:24]:24} {row['side']:9} {mark} {row['wall_s']:6.1f}s"
            f" {row['llm_calls']} calls  {row['calls'][:2]}"
            f"{'  ' + row['check_error'][:80] if row['check_error'] else ''}")  # fmt: skip


def _by_category(rows: Sequence[dict[str, Any]], sides: Sequence[str]) -> dict[str, dict[str, Any]]:
    categories = list(dict.fromkeys(r["category"] for r in rows))
    return {
        category: {
            side: summarize([r for r in rows if r["category"] == category and r["side"] == side])
            for side in sides
        }
        for category in categories
    }


def _drawn(samples: Mapping[str, Sample]) -> dict[str, dict[str, Any]]:
    """Which entries each category's sample holds, out of how many, drawn with which seed."""
    return {
        c: {"of": s.of, "seed": s.seed, "ids": [e.id for e in s.entries]}
        for c, s in samples.items()
    }


def _off_schema(rows: Sequence[dict[str, Any]]) -> dict[str, int]:
    """Per category, the entries whose BFCL answer the simulated schema refuses."""
    entries = {(r["category"], r["task"]) for r in rows if r["answer_fits_schema"] is False}
    return {c: sum(1 for category, _ in entries if category == c) for c, _ in sorted(entries)}


def _ids(samples: Mapping[str, Sample]) -> list[str]:
    return [e.id for s in samples.values() for e in s.entries]


async def run_direct(
    model: ChatModel,
    samples: Mapping[str, Sample],
    sides: Sequence[str],
    *,
    plain_model: ChatModel | None = None,
    on_row: Checkpoint | None = None,
    done: Sequence[dict[str, Any]] = (),
) -> dict[str, Any]:
    """Each sampled entry of each category on each side; `plain_model` reads no text calls.

    Rows of `done` (an earlier run's) are kept and their entries not asked again.
    `read` reads the `plain` side's replies, so it comes with `plain`.
    """
    if "read" in sides and "plain" not in sides:
        raise ValueError("the read side reads the plain side's replies: ask for both")
    counter = CountingModel(model)
    plain = CountingModel(plain_model or model)
    ledger = Ledger()
    rows, finished = kept_rows(done, _ids(samples), sides)

    def add(entry: Entry, category: str, side: str, answered: Answered) -> None:
        rows.append(score(entry, category, side, answered))
        finished.add((entry.id, side))
        if on_row is not None:
            on_row(rows)
        _say(_line(rows[-1]))

    def read(entry: Entry, category: str) -> None:
        reply = next(r for r in rows if r["task"] == entry.id and r["side"] == "plain")
        add(entry, category, "read", read_back(entry, tools_for(entry.functions, ledger), reply))

    if "read" in sides:
        # The replies an earlier run asked for are read first: that needs no model.
        for category, drawn in samples.items():
            for entry in drawn.entries:
                if (entry.id, "plain") in finished and (entry.id, "read") not in finished:
                    read(entry, category)
    for category, drawn in samples.items():
        for entry in drawn.entries:
            tools = tools_for(entry.functions, ledger)
            for side in sides:
                if (entry.id, side) in finished:
                    continue
                if side == "plain":
                    add(entry, category, side, await ask_plain(plain, entry, tools))
                elif side == "read":
                    read(entry, category)
                else:
                    add(
                        entry,
                        category,
                        side,
                        await ask_category_call(counter, entry, tools, ledger),
                    )
    return {
        "entries": _drawn(samples),
        "categories": _by_category(rows, sides),
        "off_schema": _off_schema(rows),
        "sides": {s: summarize([r for r in rows if r["side"] == s]) for s in sides},
        "runs": rows,
    }


async def run_pooled(
    model: ChatModel,
    pool: Sequence[Entry],
    samples: Mapping[str, Sample],
    sides: Sequence[str],
    *,
    top_k: int = 10,
    on_row: Checkpoint | None = None,
    done: Sequence[dict[str, Any]] = (),
) -> dict[str, Any]:
    """The sampled questions over one catalog of every function of `pool`.

    Rows of `done` (an earlier run's) are kept and their questions not asked again.
    """
    counter = CountingModel(model)
    catalog = PooledCatalog(pool, counter, top_k=top_k)
    tools = catalog.tools
    _say(f"pooled catalog: {len(tools)} functions in {len(catalog.meta.categories)} categories")
    reach = _reach(catalog, [e for drawn in samples.values() for e in drawn.entries])
    _say(f"without a model: {_shown_reach(reach)}")
    rows, finished = kept_rows(done, _ids(samples), sides)
    entries = {e.id: e for drawn in samples.values() for e in drawn.entries}
    for row in rows:  # kept rows are judged as new ones are, whatever code stored them
        _judge_first_category(row, catalog, entries[row["task"]])
    for category, drawn in samples.items():
        for entry in drawn.entries:
            for side in sides:
                if (entry.id, side) in finished:
                    continue
                answered = await ask_pooled(counter, catalog, entry, side)
                row = score(entry, category, side, answered)
                gold = _wanted(entry)
                row |= {"gold": sorted(gold)} | judge_calls(gold, answered.run.attempts)
                _judge_first_category(row, catalog, entry)
                rows.append(row)
                if on_row is not None:
                    on_row(rows)
                _say(_line(row))
    return {
        "functions": len(tools),
        "distinct_names": len({t.bfcl_name for t in tools}),
        "renamed": sum(t.name != t.bfcl_name for t in tools),
        "categories": len(catalog.meta.categories),
        "category_sizes": sorted((len(d.tools) for d in catalog.drafts), reverse=True),
        "top_k": top_k,
        "reach": reach,
        "entries": _drawn(samples),
        "by_category": _by_category(rows, sides),
        "sides": {s: _pooled_summary([r for r in rows if r["side"] == s]) for s in sides},
        "runs": rows,
    }


def _wanted(entry: Entry) -> set[str]:
    """BFCL's names of the functions the entry's answer calls (its gold tools)."""
    return {name for answer in entry.answer or () for name in answer}


def _pooled_summary(rows: Sequence[dict[str, Any]]) -> dict[str, Any]:
    """`summarize` with precision, completion and where the LLM calls went (`tool_use`)."""
    return summarize(rows) | tool_use(rows) if rows else summarize(rows)


def _judge_first_category(row: dict[str, Any], catalog: PooledCatalog, entry: Entry) -> None:
    """A hierarchy row's `first_category_right`: its first category holds a function of
    the name the answer calls (`PooledCatalog.gold_categories`)."""
    if row["side"] == "hierarchy":
        first = row["categories"][:1]
        row["first_category_right"] = bool(first) and first[0] in catalog.gold_categories(entry)


def _reach(catalog: PooledCatalog, entries: Sequence[Entry]) -> dict[str, int]:
    """How often each side can reach a right function at all, before any model call
    (`PooledCatalog.reach`): in the ranking's first or top 3 categories, in retrieval's top k."""
    found = [catalog.reach(entry) for entry in entries]
    return {
        "questions": len(found),
        "gold_category_first": sum(place == 0 for place, _ in found),
        "gold_category_top3": sum(place is not None and place < 3 for place, _ in found),
        "retrieval_holds_gold": sum(held for _, held in found),
    }


def _shown_reach(reach: Mapping[str, int]) -> str:
    return (
        f"of {reach['questions']} questions, a function of the name the answer calls is in"
        f" the ranking's first category for {reach['gold_category_first']}, in its top 3 for"
        f" {reach['gold_category_top3']}, and in retrieval's top k for"
        f" {reach['retrieval_holds_gold']}"
    )


def _percent(summary: Mapping[str, Any], key: str = "accuracy") -> str:
    return f"{summary[key]:.1%}" if summary.get("tasks") else ""


def show_direct(title: str, found: Mapping[str, Any]) -> str:
    rows = []
    for category, sides in found["categories"].items():
        counts = found["entries"][category]
        n = next((s["tasks"] for s in sides.values() if s.get("tasks")), 0)
        cells = [category, f"{n} of {counts['of']}"]
        for side in DIRECT_SIDES:
            s = sides.get(side, {})
            cells += [_percent(s), _percent(s, "right_tool")]
        category_side = sides.get("category", {})
        calls = category_side.get("llm_calls", 0) / max(category_side.get("tasks", 0), 1)
        cells.append(f"{calls:.1f}" if category_side.get("tasks") else "")
        cells.append(found["off_schema"].get(category, 0))
        rows.append(cells)
    per_side = [
        f"{side} {what}" for side in DIRECT_SIDES for what in ("(BFCL AST)", "right function")
    ]
    headers = ["category", "entries", *per_side, "category LLM calls / entry", "answers off schema"]
    return f"### {title}\n\n" + table(headers, rows)


def show_pooled(title: str, found: Mapping[str, Any]) -> str:
    categories = list(found["by_category"])
    rows = []
    for side, s in found["sides"].items():
        if not s.get("tasks"):
            continue
        per = [_percent(found["by_category"][c][side]) for c in categories]
        first = f"{s['first_category']:.1%}" if "first_category" in s else ""
        rows.append([side, s["tasks"], _percent(s), *per, _percent(s, "right_tool"), first,
                     s["llm_calls"], f"{s['prompt_tokens']:,}", f"{s['wall_s']:,.0f}"])  # fmt: skip
    headers = ["side", "questions", "BFCL AST", *categories, "right function",
               "first category", "LLM calls", "prompt tokens", "wall s"]  # fmt: skip
    heading = (f"### {title}: {found['functions']:,} functions, {found['categories']} categories"
               f" by topic, retrieval top {found['top_k']}")  # fmt: skip
    reach = found.get("reach")
    note = f"\n\nWithout a model: {_shown_reach(reach)}." if reach else ""
    precision = show_precision(found["sides"])
    return heading + "\n\n" + table(headers, rows) + note + (f"\n\n{precision}" * bool(precision))


def differences() -> str:
    return "What differs from BFCL's own runs:\n" + "\n".join(f"- {d}" for d in DIFFERENCES)


def parse(argv: Sequence[str] | None) -> argparse.Namespace:
    parser = argparse.ArgumentParser(prog="python -m benchmarks bfcl", description=__doc__)
    parser.add_argument("--base-url", required=True, help="an OpenAI-compatible API root")
    parser.add_argument("--model", required=True, help="the model name")
    parser.add_argument("--api-key-env", default=None, help="variable holding the API key")
    parser.add_argument("--categories", default=",".join(CATEGORIES),
                        help=f"direct setting, comma-separated: {', '.join(CATEGORIES)}")  # fmt: skip
    parser.add_argument("--setting", choices=("direct", "pooled", "both"), default="both")
    parser.add_argument("--sides", default=None, help="comma-separated subset of the sides")
    parser.add_argument("--limit", type=int, default=None,
                        help="N entries of each category (a sample drawn with --seed)")  # fmt: skip
    parser.add_argument("--seed", type=int, default=0, help="seed of the samples")
    parser.add_argument("--tune", action="store_true",
                        help="draw from outside the reported sample (50 a category, seed 0)")  # fmt: skip
    parser.add_argument("--top-k", type=int, default=10, help="pooled: functions retrieval offers")
    parser.add_argument("--quantisation", default="unknown", help="recorded with the results")
    parser.add_argument("--timeout", type=float, default=600.0, help="seconds per model request")
    parser.add_argument("--max-tokens", type=int, default=400)
    parser.add_argument("--temperature", type=float, default=0.0)
    parser.add_argument("--out", type=Path, default=None, help="results file (default bfcl.json)")
    parser.add_argument("--log", type=Path, default=None, help="append every model turn here")
    add_replay(parser)
    parser.add_argument(
        "--resume", action="store_true", help="keep the rows in --out, ask the rest"
    )
    args = parser.parse_args(argv)
    unknown = [c for c in args.categories.split(",") if c.strip() and c.strip() not in CATEGORIES]
    if unknown:
        parser.error(f"--categories: no category {', '.join(unknown)} ({', '.join(CATEGORIES)})")
    return args


def _samples(
    categories: Mapping[str, str], limit: int | None, seed: int, *, tune: bool = False
) -> dict[str, Sample]:
    return {
        name: sample(load_entries(bfcl), limit, seed, tune=tune)
        for name, bfcl in categories.items()
    }


async def _run(args: argparse.Namespace, record: dict[str, Any], out: Path) -> None:
    wanted = args.sides.split(",") if args.sides else None
    model = build_model(args, recover_text_calls=True)
    plain = build_model(args, recover_text_calls=False)
    if (replayed := replay_stats(model)) is not None:
        record["replay"] = replayed  # the loop sides' (the plain side keeps its own count)
    try:
        if args.setting in ("direct", "both"):
            names = [c.strip() for c in args.categories.split(",") if c.strip()]
            samples = _samples(
                {c: CATEGORIES[c] for c in names}, args.limit, args.seed, tune=args.tune
            )
            sides = [s for s in DIRECT_SIDES if wanted is None or s in wanted]
            save = checkpoint(out, args.model, record, "direct", benchmark="bfcl")
            done = stored_rows(out, args.model, "direct") if args.resume else []
            record["direct"] = await run_direct(
                model, samples, sides, plain_model=plain, on_row=save, done=done
            )
            store(out, args.model, record, benchmark="bfcl")
            _say(show_direct(f"BFCL direct, {args.model}", record["direct"]))
        if args.setting in ("pooled", "both"):
            pool = [e for category in LIVE for e in load_entries(category)]
            samples = _samples(
                {c: c for c in POOLED_QUESTIONS}, args.limit, args.seed, tune=args.tune
            )
            sides = [s for s in POOLED_SIDES if wanted is None or s in wanted]
            save = checkpoint(out, args.model, record, "pooled", benchmark="bfcl")
            done = stored_rows(out, args.model, "pooled") if args.resume else []
            record["pooled"] = await run_pooled(
                model, pool, samples, sides, top_k=args.top_k, on_row=save, done=done
            )
            store(out, args.model, record, benchmark="bfcl")
            _say(show_pooled(f"BFCL pooled, {args.model}", record["pooled"]))
        _say(differences())
    finally:
        for each in (model, plain):
            await close_model(each)


def main(argv: Sequence[str] | None = None) -> int:
    args = parse(argv)
    out = args.out or RESULTS / "bfcl.json"
    record: dict[str, Any] = {
        "model": args.model,
        "commit": current_commit(),  # the code that runs: others may land during a sitting
        "base_url": args.base_url,
        "quantisation": args.quantisation,
        "machine": machine(),
        "date": dt.datetime.now(dt.timezone.utc).strftime("%Y-%m-%d %H:%M UTC"),
        "bfcl_eval": checker_version(),
        "checker_model_entry": CHECKER_MODEL,
        "limit": args.limit,
        "seed": args.seed,
        "tune": args.tune,
        "options": {"max_tokens": args.max_tokens, "temperature": args.temperature, "seed": 0},
        "differences": list(DIFFERENCES),
    }
    asyncio.run(_run(args, record, out))
    _say(f"-> {out}")
    return 0
