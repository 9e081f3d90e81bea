"""`python -m benchmarks pool FILE FILE ...`: large-catalog runs of the e2e benchmark, pooled.

One catalog run at temperature 0 asks 36 queries, where one query decides whether the
hierarchy matches retrieval. Runs on other query samples (`--seed`) pool into one larger
sample: each query counts once per side, and a query asked in more than one file counts
from the last file given that has it (the newer run). The files must agree on what the
sides saw (catalog, category order, tools offered); a file that does not is named with the
setting. A partial run records no settings, so its are not checked. Prints the totals per side and, for two sides, how many queries each solved alone.

Beside success: first call right, every gold tool ran, wrong tool calls and tool calls a
query (`e2e_sides.tool_use`), and where the LLM calls went when the rows record it. Rows
stored before they named their gold tools get them from the catalog (`--data`).
"""

from __future__ import annotations

import argparse
import json
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

from .catalog import DEFAULT_DATA
from .e2e_sides import tool_use
from .report import summarize, table

SHARED_SETTINGS = ("tools", "categories", "category_tools", "category_order_seed", "top_k", "split")
"""What must be equal across pooled runs for their rows to be one sample."""


class PoolError(ValueError):
    """The files cannot be pooled: a file lacks the run, or a setting differs."""


def catalog_run(path: Path, model: str) -> dict[str, Any]:
    """The large-catalog run of `model` in the results file `path`."""
    try:
        runs = json.loads(path.read_text())["runs"]
    except (OSError, ValueError, KeyError) as exc:
        raise PoolError(f"{path}: not an e2e results file ({exc})") from exc
    found = runs.get(model, {}).get("catalog")
    if not found:
        raise PoolError(f"{path}: no catalog run of model {model!r} (has {sorted(runs)})")
    return dict(found)


def with_gold(rows: Sequence[dict[str, Any]], gold: Mapping[str, Sequence[str]]) -> int:
    """Give each row without `gold` its query's gold tool names from `gold` (qid -> names);
    returns how many rows got them."""
    filled = 0
    for row in rows:
        if "gold" not in row and row["task"] in gold:
            row["gold"] = sorted(gold[row["task"]])
            filled += 1
    return filled


def pool(runs: Sequence[tuple[str, dict[str, Any]]]) -> dict[str, Any]:
    """The rows of every run, each (task, side) once: a later run's row replaces an
    earlier one's. Returns the rows, the per-side summaries and the settings they share.

    Raises:
        PoolError: two runs differ in one of `SHARED_SETTINGS` (the later one is named).
    """
    if not runs:
        raise PoolError("no runs to pool")
    first_name, first = runs[0]
    by_key: dict[tuple[str, str], dict[str, Any]] = {}
    replaced = 0
    for name, run in runs:
        for setting in SHARED_SETTINGS:
            # A partial run (stopped before its end) has not recorded its settings yet.
            if setting in run and run.get(setting) != first.get(setting):
                raise PoolError(
                    f"{name}: {setting} is {run.get(setting)!r}, "
                    f"but {first.get(setting)!r} in {first_name}"
                )
        for row in run["runs"]:
            key = (row["task"], row["side"])
            replaced += key in by_key
            by_key[key] = row
    rows = list(by_key.values())
    sides = sorted({r["side"] for r in rows})
    return {
        "files": [name for name, _ in runs],
        "settings": {s: first.get(s) for s in SHARED_SETTINGS},
        "replaced": replaced,
        "partial": [name for name, run in runs if run.get("partial")],
        "sides": {
            s: summarize(mine) | tool_use(mine)
            for s in sides
            if (mine := [r for r in rows if r["side"] == s])
        },
        "runs": rows,
    }


def paired(rows: Sequence[dict[str, Any]], a: str, b: str) -> dict[str, int]:
    """Over the queries asked on both sides `a` and `b`: how many both, only one, or
    neither solved."""
    solved: dict[str, dict[str, bool]] = {a: {}, b: {}}
    for row in rows:
        if row["side"] in solved:
            solved[row["side"]][row["task"]] = bool(row["correct"])
    both_asked = solved[a].keys() & solved[b].keys()
    counts = {"both": 0, f"only {a}": 0, f"only {b}": 0, "neither": 0}
    for task in both_asked:
        x, y = solved[a][task], solved[b][task]
        key = "both" if x and y else f"only {a}" if x else f"only {b}" if y else "neither"
        counts[key] += 1
    return counts


def show(pooled: dict[str, Any]) -> str:
    """The pooled totals as a Markdown table, with the paired counts of two sides."""
    headers = ["side", "queries", "success", "first category right", "first call right",
               "every gold tool ran", "wrong tool calls a query", "tool calls a query",
               "LLM calls", "LLM calls a query", "prompt tokens per query",
               "completion tokens", "wall s"]  # fmt: skip
    rows = []
    for side, s in pooled["sides"].items():
        mine = [r for r in pooled["runs"] if r["side"] == side]
        n = len(mine)
        right = sum(bool(r["correct"]) for r in mine)
        judged = [r for r in mine if "first_category_right" in r]
        first = sum(bool(r["first_category_right"]) for r in judged) if judged else ""
        judged = s.get("judged")
        precision = (
            [f"{s['first_call_right']:.0%}", f"{s['all_gold_ran']:.0%}",
             f"{s['wrong_calls']:.2f}", f"{s['tool_calls']:.2f}"]
            if judged else ["", "", "", ""]
        )  # fmt: skip
        rows.append([side, n, f"{right} ({right / n:.0%})", first, *precision, s["llm_calls"],
                     f"{s['llm_calls'] / n:.1f}", f"{s['prompt_tokens'] / n:,.0f}",
                     f"{s['completion_tokens']:,}", f"{s['wall_s']:,.0f}"])  # fmt: skip
    text = table(headers, rows)
    places = {side: s["llm_calls_by"] for side, s in pooled["sides"].items() if "llm_calls_by" in s}
    if places:
        keys = sorted({k for p in places.values() for k in p})
        text += "\n\nLLM calls a query, by where they went (rows that record it):\n\n"
        text += table(
            ["side", *keys], [[n, *(p.get(k, "") for k in keys)] for n, p in places.items()]
        )
    names = list(pooled["sides"])
    if len(names) == 2:
        counts = paired(pooled["runs"], *names)
        text += "\n\n" + ", ".join(f"{k}: {v}" for k, v in counts.items())
    return text


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m benchmarks pool", description=__doc__)
    parser.add_argument("files", nargs="+", type=Path, help="e2e results files, oldest first")
    parser.add_argument("--model", default="qwen2.5-coder-1.5b", help="the model's run to read")
    parser.add_argument(
        "--data", type=Path, default=DEFAULT_DATA, help="public data: gold of older rows"
    )
    args = parser.parse_args(argv)
    try:
        runs = [(str(f), catalog_run(f, args.model)) for f in args.files]
    except PoolError as exc:
        parser.exit(2, f"pool: {exc}\n")
    if args.data.is_dir() and any("gold" not in r for _, run in runs for r in run["runs"]):
        from .e2e_catalog import load_large_catalog

        large = load_large_catalog(args.data)
        gold = {q["qid"]: sorted(large.gold_names(q)) for q in large.queries}
        for _, run in runs:
            with_gold(run["runs"], gold)
    try:
        pooled = pool(runs)
    except PoolError as exc:
        parser.exit(2, f"pool: {exc}\n")
    print(f"pooled {', '.join(pooled['files'])} ({pooled['replaced']} rows replaced)")
    for name in pooled["partial"]:
        print(f"note: {name} is a partial run (stopped before its last query)")
    print()
    print(show(pooled))
    return 0
