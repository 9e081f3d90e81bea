"""What every benchmark records: where results go, the machine, Markdown tables, result files.

`run` (the offline benchmarks), `e2e` and `bfcl` (a real model) all write here, and
none of them imports another for it. One results file per benchmark,
`results/NAME.json`: `{"benchmark": NAME, "runs": {KEY: run}}`, each run keyed by
`model@commit@date` (`run_key`) and recording its settings beside its rows. Only the
runs the documentation cites are kept in git; the tables of `docs/benchmarks.md` are
generated from them by `python -m benchmarks report` (`tables` below).
"""

from __future__ import annotations

import json
import os
import platform
import subprocess
from collections.abc import Callable, Iterable, Sequence
from datetime import datetime, timezone
from pathlib import Path
from typing import Any

__all__ = [
    "RESULTS",
    "Checkpoint",
    "checkpoint",
    "kept_rows",
    "latest_run",
    "machine",
    "read_runs",
    "run_key",
    "store",
    "stored_rows",
    "summarize",
    "table",
]

RESULTS = Path(__file__).resolve().parent / "results"


def machine() -> dict[str, Any]:
    cpu = platform.processor() or platform.machine()
    try:
        for line in Path("/proc/cpuinfo").read_text().splitlines():
            if line.startswith("model name"):
                cpu = line.split(":", 1)[1].strip()
                break
    except OSError:
        pass
    return {
        "cpu": cpu,
        "cores": os.cpu_count(),
        "python": platform.python_version(),
        "platform": platform.platform(),
    }


def table(headers: Sequence[str], rows: Sequence[Sequence[Any]]) -> str:
    """A Markdown table (pastes into the README as it is)."""
    cells = [[str(c) for c in row] for row in rows]
    widths = [max(len(h), *(len(r[i]) for r in cells)) for i, h in enumerate(headers)]
    line = "| " + " | ".join(h.ljust(w) for h, w in zip(headers, widths, strict=True)) + " |"
    rule = "|" + "|".join("-" * (w + 2) for w in widths) + "|"
    body = [
        "| " + " | ".join(c.ljust(w) for c, w in zip(r, widths, strict=True)) + " |" for r in cells
    ]
    return "\n".join([line, rule, *body])


def summarize(rows: Sequence[dict[str, Any]]) -> dict[str, Any]:
    """Per-side totals: accuracy, right-tool rate, calls, tokens, time."""
    n = len(rows)
    if not n:
        return {"tasks": 0}

    def total(key: str) -> int | float:
        return sum(r[key] for r in rows)

    return {
        "tasks": n,
        "accuracy": round(sum(r["correct"] for r in rows) / n, 3),
        "right_tool": round(sum(r["right_tool"] for r in rows) / n, 3),
        "errors": sum(r["error"] is not None for r in rows),
        "llm_calls": total("llm_calls"),
        "prompt_tokens": total("prompt_tokens"),
        "completion_tokens": total("completion_tokens"),
        "recovered_calls": total("recovered_calls"),
        "wall_s": round(float(total("wall_s")), 1),
    } | _first_category(rows)


def _first_category(rows: Sequence[dict[str, Any]]) -> dict[str, Any]:
    """The share of rows whose first category call went to a gold category (hierarchy sides)."""
    judged = [r for r in rows if "first_category_right" in r]
    if not judged:
        return {}
    right = sum(r["first_category_right"] for r in judged)
    return {"first_category": round(right / len(judged), 3)}


Checkpoint = Callable[[list[dict[str, Any]]], None]
"""Called with every row so far after each task on each side (a partial run is kept)."""


def current_commit() -> str:
    """The short hash of the checkout's HEAD ("unknown" outside a git checkout)."""
    try:
        done = subprocess.run(
            ["git", "rev-parse", "--short", "HEAD"],
            cwd=RESULTS.parent,
            capture_output=True,
            text=True,
            check=True,
        )
    except (OSError, subprocess.CalledProcessError):
        return "unknown"
    return done.stdout.strip() or "unknown"


def run_key(model: str | None, commit: str, date: str) -> str:
    """How a run is keyed in its results file: `model@commit@YYYY-MM-DD`."""
    return f"{model or 'no-model'}@{commit}@{date[:10]}"


def read_runs(path: Path) -> dict[str, dict[str, Any]]:
    """The runs of a results file, by key. A file in the older one-run shape
    (`{"benchmark", "machine", "seconds", "result"}`) is read as one run."""
    stored: dict[str, Any] = json.loads(path.read_text())
    if "runs" in stored:
        return dict(stored["runs"])
    commit, date = stored.get("commit", "unknown"), stored.get("date", "")
    return {run_key(None, commit, date): {"model": None, "commit": commit, "date": date} | stored}


def store(out: Path, model: str, record: dict[str, Any], *, benchmark: str = "e2e") -> None:
    """Add (or update) this checkout's run of `model` today in the results file of `benchmark`."""
    out.parent.mkdir(parents=True, exist_ok=True)
    stored: dict[str, Any] = (
        json.loads(out.read_text()) if out.exists() else {"benchmark": benchmark, "runs": {}}
    )
    now = datetime.now(timezone.utc).strftime("%Y-%m-%d %H:%M UTC")
    # The code that ran: the commit when the run started (others may land meanwhile).
    commit = str(record.get("commit") or current_commit())
    key = run_key(model, commit, str(record.get("date") or now))
    first = {"model": model, "commit": commit, "date": now}
    stored["runs"][key] = first | stored["runs"].get(key, {}) | record
    out.write_text(json.dumps(stored, indent=2, ensure_ascii=False, default=str) + "\n")


def store_offline(out: Path, record: dict[str, Any]) -> None:
    """Make this run the one run of an offline benchmark's results file.

    An offline benchmark's table shows its newest run; the run keeps what the one it
    replaces was cited for (the documentation cites the file, not a run).
    """
    previous = read_runs(out) if out.exists() else {}
    cited = next((r["cited_for"] for r in previous.values() if r.get("cited_for")), None)
    now = datetime.now(timezone.utc).strftime("%Y-%m-%d %H:%M UTC")
    commit = current_commit()
    run = {"model": None, "commit": commit, "date": now, "cited_for": cited or record["benchmark"]}
    stored = {"benchmark": record["benchmark"], "runs": {run_key(None, commit, now): run | record}}
    out.write_text(json.dumps(stored, indent=2, ensure_ascii=False, default=str) + "\n")


def checkpoint(
    out: Path, model: str, record: dict[str, Any], name: str, *, benchmark: str = "e2e"
) -> Checkpoint:
    """Store the rows so far under `name`, marked partial, after every row."""

    def save(rows: list[dict[str, Any]]) -> None:
        sides = {
            s: summarize([r for r in rows if r["side"] == s]) for s in {r["side"] for r in rows}
        }
        part = {name: {"partial": True, "sides": sides, "runs": rows}}
        store(out, model, record | part, benchmark=benchmark)

    return save


def latest_run(out: Path, model: str) -> dict[str, Any]:
    """The newest run of `model` in the results file `out` (empty when there is none)."""
    mine = [r for r in read_runs(out).values() if r.get("model") == model] if out.exists() else []
    return max(mine, key=lambda r: str(r.get("date", "")), default={})


def stored_rows(out: Path, model: str, name: str) -> list[dict[str, Any]]:
    """The rows of `model`'s newest `name` run in the results file `out` (none when there is none).

    A run of hours on this CPU outlives a sitting: `--resume` keeps these rows and
    asks only the rest.
    """
    if not out.exists():
        return []
    mine = [r for r in read_runs(out).values() if r.get("model") == model and name in r]
    if not mine:
        return []
    newest = max(mine, key=lambda r: str(r.get("date", "")))
    return list(newest[name].get("runs", []))


def kept_rows(
    done: Sequence[dict[str, Any]], tasks: Iterable[str], sides: Sequence[str]
) -> tuple[list[dict[str, Any]], set[tuple[str, str]]]:
    """The rows of `done` for these tasks and sides, and their (task, side) keys: a
    resumed run keeps them and asks only the rest."""
    asked = set(tasks)
    rows = [r for r in done if r["task"] in asked and r["side"] in sides]
    return rows, {(r["task"], r["side"]) for r in rows}


# --- The tables of the documentation, generated from the kept runs ---------------------------

MACHINE_NOTE = "2-core CPU shared with other work"
E2E_MODEL = "Qwen2.5-Coder-Instruct 1.5B, GGUF Q4_K_M, llama.cpp `llama-server`, temperature 0"
POOLED = ("37b4ae8", "001c8b9", "458c575", "99a4c57")
#: Routing 3: the held-out test sample (36 queries, 6 a subset, seed 0); retrieval run once
#: as the baseline, the hierarchy per change (with the profile the router chooses).
ROUTING3_RETRIEVAL, ROUTING3_HIERARCHY = "59cacfc", "1dcfbf3"
#: The hierarchy's earlier runs on the same sample, shown beside it: before `clear_route`
#: (2166aa0), before `few_tools` offered 2 tools (d8ce616, whose 36 outcomes were
#: 9e0ecc6's), before the service-name reading and the written tool name called
#: (755fbd9), before `few_tools` and the retry rule (43f2c77).
ROUTING3_BEFORE = ("2166aa0", "d8ce616", "755fbd9", "43f2c77")
"""The large-catalog runs pooled into one sample of 99 queries (seeds 0, 1 and 2)."""


def _runs(name: str) -> dict[str, dict[str, Any]]:
    return read_runs(RESULTS / f"{name}.json")


def _run(name: str, commit: str, part: str, model: str = "qwen2.5-coder-1.5b") -> dict[str, Any]:
    for run in _runs(name).values():
        if run.get("commit") == commit and run.get("model") == model and part in run:
            return dict(run)
    raise LookupError(f"no {part!r} run of {model!r} at {commit!r} in results/{name}.json")


def _offline(name: str) -> dict[str, Any]:
    (run,) = _runs(name).values()
    return run


def _n(x: float) -> str:
    return f"{x:,.0f}"


def _when(run: dict[str, Any]) -> str:
    return f"{run['commit']}, {str(run['date'])[:10]}"


def _machine(run: dict[str, Any]) -> str:
    m = run.get("machine") or {}
    return f"{m.get('cpu', '?')}, {m.get('cores', '?')} cores, Python {m.get('python', '?')}"


def _side(rows: Sequence[dict[str, Any]], side: str) -> dict[str, Any]:
    mine = [r for r in rows if r["side"] == side]
    n = len(mine)
    return {
        "n": n,
        "right": sum(bool(r["correct"]) for r in mine),
        "first": sum(bool(r.get("first_category_right")) for r in mine),
        "calls": sum(r["llm_calls"] for r in mine),
        "prompt": sum(r["prompt_tokens"] for r in mine),
        "wall": sum(r["wall_s"] for r in mine),
        "right_tool": sum(bool(r.get("right_tool")) for r in mine),
    }


def _pooled_rows() -> list[dict[str, Any]]:
    """Each (query, side) once, from the newest run that asked it (as `python -m benchmarks pool`)."""
    by_key: dict[tuple[str, str], dict[str, Any]] = {}
    for commit in POOLED:
        for row in _run("e2e", commit, "catalog")["catalog"]["runs"]:
            by_key[row["task"], row["side"]] = row
    return list(by_key.values())


def headline() -> str:
    """The README's table: the held-out test sample, both sides, success, precision and cost."""
    rows = []
    for label, commit, side in (
        ("hierarchy (`MainAgent`, ranked categories)", ROUTING3_HIERARCHY, "hierarchy"),
        ("retrieval (BM25 top 10 of the catalog)", ROUTING3_RETRIEVAL, "retrieval"),
    ):
        run = _run("e2e", commit, "catalog")
        s = run["catalog"]["sides"][side]
        n = s["tasks"]
        rows.append(
            [label, f"{round(s['accuracy'] * n)} / {n}", f"{s['wrong_calls']:.2f}",
             f"{s['llm_calls'] / n:.1f}", _n(s["prompt_tokens"] / n), f"{s['wall_s'] / n:.0f}",
             f"{_when(run)}, {run['guards']}"]
        )  # fmt: skip
    return table(
        ["side", "queries solved", "wrong tool calls a query", "LLM calls a query",
         "prompt tokens a query", "wall s a query", "code, date, guards"], rows,
    )  # fmt: skip


def held_out_table() -> str:
    """Routing 3 on the held-out test sample: precision, completion and cost, and where
    each side's LLM calls went (a query's average)."""
    sides = {}
    for label, commit, side in (
        ("hierarchy", ROUTING3_HIERARCHY, "hierarchy"),
        *((f"hierarchy, at {before}", before, "hierarchy") for before in ROUTING3_BEFORE),
        ("retrieval", ROUTING3_RETRIEVAL, "retrieval"),
    ):
        run = _run("e2e", commit, "catalog")
        sides[label] = (run, run["catalog"]["sides"][side])
    rows = [
        [side, s["tasks"], f"{round(s['accuracy'] * s['tasks'])}", f"{s['first_call_right']:.0%}",
         f"{s['all_gold_ran']:.0%}", f"{s['wrong_calls']:.2f}", f"{s['tool_calls']:.2f}",
         f"{s['llm_calls'] / s['tasks']:.1f}", _n(s["prompt_tokens"] / s["tasks"]),
         f"{s['wall_s'] / s['tasks']:.0f}", _when(run)]
        for side, (run, s) in sides.items()
    ]  # fmt: skip
    precision = table(
        ["side", "queries", "solved", "first call right", "every gold tool ran",
         "wrong tool calls a query", "tool calls a query", "LLM calls a query",
         "prompt tokens a query", "wall s a query", "code, date"], rows,
    )  # fmt: skip
    places = sorted({k for _, s in sides.values() for k in s.get("llm_calls_by", {})})
    where = table(
        ["side", *places],
        [[side, *(s.get("llm_calls_by", {}).get(k, "") for k in places)]
         for side, (_, s) in sides.items()],
    )  # fmt: skip
    return f"{precision}\n\nLLM calls a query, by where they went:\n\n{where}"


def context_table() -> str:
    run = _offline("context")
    rows = []
    for dataset, label in (("livemcpbench", "LiveMCPBench"), ("sealtools", "Seal-Tools")):
        m = run["result"][dataset]["main_agent"]
        rows.append(
            [f"{label}: {m['tools']:,} tools in {m['categories']} categories",
             f"{_n(m['flat_chars'])} / {_n(m['flat_tokens'])}",
             f"{_n(m['meta_chars'])} / {_n(m['meta_tokens'])}", f"{m['tokens_saved']:.1%}"]
        )  # fmt: skip
    blocks = run["result"]["livemcpbench"]["largest_category_call"]
    whole, short = blocks["whole category"], blocks["shortlist"]
    rows.append(
        ["largest tool block one category call sees (LiveMCPBench)",
         f"{whole['tools']} tools, {_n(whole['chars'])} / {_n(whole['tokens'])}",
         f"{short['tools']} tools, {_n(short['chars'])} / {_n(short['tokens'])}", ""]
    )  # fmt: skip
    return table(["what the model sees", "flat: chars / tokens", "meta-tools", "saved"], rows)


def overhead_table() -> str:
    rows = []
    over = _offline("overhead")["result"]
    for r in over["rows"]:
        rows.append(
            [f"router CPU per one-tool call, {r['concurrency']} in flight"
             + (f", guards {r['guards']!r}" if "guards" in r else ""),
             f"{r['cpu_per_call_ms']} ms"]
        )  # fmt: skip
    rows.append(["memory per call in flight", f"{over['memory']['peak_kib_per_call']} KiB"])
    for r in _offline("parallel")["result"]["rows"]:
        rows.append([f"one round of {r['tools']} tools of 1 s", f"{r['wall_s']} s"])
    mcp = _offline("mcp")["result"]
    for r in mcp["rows"]:
        rows.append([f"level-1 MCP call, {r['mode']}", f"{r['mean_ms']} ms mean"])
    return table(["router cost (scripted model, no network)", "measured"], rows)


def ranking_table() -> str:
    run = _offline("ranking")
    rows = [
        [name, _n(r["tools"]), r["categories"], _n(r["queries"]), f"{r['recall@1']:.3f}",
         f"{r['recall@3']:.3f}", f"{r['offered_recall']:.3f} / {r['offered_mean']:.1f}",
         f"{r['p50_ms']:.1f} / {r['p99_ms']:.1f} ms"]
        for name, r in run["result"].items()
    ]  # fmt: skip
    return table(
        ["catalog, queries", "tools", "categories", "queries", "R@1", "R@3",
         "offered: recall / mean count", "one `rank`: p50 / p99"], rows,
    )  # fmt: skip


#: The demo runs of the two guard profiles, and of `capable` with only the guards that read
#: calls written as text (`text_calls`, `unread_call`): the code each ran on.
GUARDS_SMALL, GUARDS_CAPABLE, GUARDS_READING = "047a67d", "6dabdcf", "95f00b3"
#: The demo set with no guards section (the router chose `small` by the model's name),
#: after the hand-ups of issue 56: the current code's run, and the one before it.
GUARDS_CHOSEN, GUARDS_CHOSEN_BEFORE = "1dcfbf3", "2166aa0"


def demo_table() -> str:
    first = _run("e2e", "a782b34", "demo")
    small = _run("e2e", "a782b34", "demo", model="qwen2.5-coder-0.5b")
    now = _run("e2e", "4687c1f", "demo")
    guarded = _run("e2e", GUARDS_SMALL, "demo")
    unguarded = _run("e2e", GUARDS_CAPABLE, "demo")
    reading = _run("e2e", GUARDS_READING, "demo")
    chosen = _run("e2e", GUARDS_CHOSEN, "demo")
    chosen_before = _run("e2e", GUARDS_CHOSEN_BEFORE, "demo")
    rows = []
    for label, run, side in (
        ("1.5B, hierarchy, no guards section: `small` chosen by its name", chosen, "hierarchy"),
        ("1.5B, hierarchy, the same, the run before", chosen_before, "hierarchy"),
        ("1.5B, hierarchy, guard profile `small` (before the hand-ups)", guarded, "hierarchy"),
        ("1.5B, hierarchy, `capable` + `text_calls`, `unread_call`", reading, "hierarchy"),
        ("1.5B, hierarchy, guard profile `capable`", unguarded, "hierarchy"),
        ("1.5B, hierarchy (before guard profiles: all guards)", now, "hierarchy"),
        ("1.5B, hierarchy (first run)", first, "hierarchy"),
        ("1.5B, the right category called directly", first, "category"),
        ("1.5B, flat: one agent offered all 15 tools", first, "flat"),
        ("0.5B, hierarchy", small, "hierarchy"),
        ("0.5B, the right category called directly", small, "category"),
        ("0.5B, flat", small, "flat"),
    ):
        t = _side(run["demo"]["runs"], side)
        rows.append(
            [label, f"{t['right']} / {t['n']}", _n(t["prompt"] / t["n"]),
             f"{t['calls'] / t['n']:.1f}", _when(run)]
        )  # fmt: skip
    return table(
        ["side", "tasks right", "prompt tokens a task", "LLM calls a task", "code, date"], rows
    )


def catalog_table() -> str:
    rows = []
    samples = (("seed 0", "37b4ae8"), ("seed 1", "458c575"), ("seed 2", "99a4c57"))
    for label, commit in samples:
        run = _run("e2e", commit, "catalog")
        h, r = (_side(run["catalog"]["runs"], s) for s in ("hierarchy", "retrieval"))
        rows.append(
            [label, h["n"], h["right"], r["right"], _n(h["prompt"] / h["n"]),
             _n(r["prompt"] / r["n"]), _when(run)]
        )  # fmt: skip
    pooled = _pooled_rows()
    h, r = _side(pooled, "hierarchy"), _side(pooled, "retrieval")
    rows.append(
        ["**pooled** (each query once, newest run)", h["n"], f"**{h['right']}**",
         f"**{r['right']}**", _n(h["prompt"] / h["n"]), _n(r["prompt"] / r["n"]),
         "37b4ae8 to 99a4c57"]
    )  # fmt: skip
    return table(
        ["query sample", "queries", "hierarchy solved", "retrieval solved",
         "hierarchy prompt tokens a query", "retrieval", "code, date"], rows,
    )  # fmt: skip


def routing_table() -> str:
    rows = []
    for label, commit, prefix in (
        ("the ranked categories", "c036ada", "ranked"),
        ("all 48 categories, in list order", "a492cc2", "all"),
    ):
        run = _run("e2e", commit, "routing")
        got = run["routing"]["runs"]
        one, two = (_side(got, f"{prefix}/order{i}") for i in (1, 2))
        asked = [r for r in got if not r.get("reused_reply")]
        tokens = sum(r["prompt_tokens"] for r in asked) / max(len(asked), 1)
        rows.append([label, f"{one['right']} / {one['n']}", f"{two['right']} / {two['n']}",
                     _n(tokens), _when(run)])  # fmt: skip
    return table(
        ["main agent offered", "first category right, order 1", "order 2",
         "prompt tokens a query", "code, date"], rows,
    )  # fmt: skip


def bfcl_table() -> str:
    run = _run("bfcl", "e74293c", "direct")
    got = run["direct"]["runs"]
    categories = sorted({r["category"] for r in got}, key=[r["category"] for r in got].index)
    rows = []
    for c in categories:
        mine = [r for r in got if r["category"] == c]
        right = {
            s: sum(bool(r["correct"]) for r in mine if r["side"] == s)
            for s in ("plain", "read", "category")
        }
        n = len({r["task"] for r in mine})
        rows.append([c, n, right["plain"], right["read"], right["category"]])
    return table(
        ["BFCL category", "entries", "plain FC request", "read: calls read from its text",
         "category loop"], rows,
    )  # fmt: skip


#: BFCL pooled runs, newest first: the current one and the one before (the retrieval rows
#: of both were asked at a0742af, see their `commit_note`).
BFCL_POOLED = ("1dcfbf3", "2166aa0")
#: A side of a pooled run asked at another commit than the run's (kept by `--resume`).
BFCL_ASKED_AT = {("1dcfbf3", "retrieval"): "a0742af", ("2166aa0", "retrieval"): "a0742af"}


def bfcl_pooled_table() -> str:
    rows = []
    for commit in BFCL_POOLED:
        run = _run("bfcl", commit, "pooled")
        for side, label in (("hierarchy", "hierarchy (`MainAgent`, 42 topic groups)"),
                            ("retrieval", "retrieval (BM25 top 10 of 1,746)")):  # fmt: skip
            t = _side(run["pooled"]["runs"], side)
            rows.append([label, f"{t['right']} / {t['n']}", f"{t['right_tool']}",
                         f"{t['calls'] / t['n']:.1f}", _n(t["prompt"] / t["n"]),
                         f"{t['wall'] / t['n']:.0f}",
                         _when(run | {"commit": BFCL_ASKED_AT.get((commit, side), commit)})])  # fmt: skip
    return table(["side", "right (BFCL AST)", "right function called", "LLM calls a question",
                  "prompt tokens a question", "wall s a question", "code, date"], rows)  # fmt: skip


def captions() -> dict[str, str]:
    """Where each table's figures come from: code, date, model, machine, sample size."""
    ctx, rank = _offline("context"), _offline("ranking")
    first = _run("e2e", "a782b34", "demo")
    return {
        "context": f"`results/context.json`: code {_when(ctx)}; {_machine(ctx)}; no model; "
        f"tokens counted with {ctx['result'].get('tokenizer', 'o200k_base')}.",
        "overhead": f"`results/overhead.json`, `parallel.json`, `mcp.json`: code "
        f"{_when(_offline('overhead'))}; {_machine(_offline('overhead'))}; a scripted model.",
        "ranking": f"`results/ranking.json`: code {_when(rank)}; {_machine(rank)}; no model.",
        "e2e": f"`results/e2e.json`: {E2E_MODEL}; {_machine(first)} ({MACHINE_NOTE}); "
        "`max_tokens` 400 (1.5B), 200 (0.5B).",
        "bfcl": f"`results/bfcl.json`: {E2E_MODEL}; {_machine(first)} ({MACHINE_NOTE}); "
        "`max_tokens` 400; BFCL's own AST checker (`bfcl-eval` 2026.3.23).",
    }


def tables() -> dict[str, str]:
    """Every generated block of the documentation, by name."""
    cap = captions()
    return {
        "headline": headline(),
        "context": context_table() + "\n\n" + cap["context"],
        "overhead": overhead_table() + "\n\n" + cap["overhead"],
        "ranking": ranking_table() + "\n\n" + cap["ranking"],
        "demo": demo_table() + "\n\n" + cap["e2e"],
        "catalog": catalog_table() + "\n\n" + cap["e2e"],
        "held_out": held_out_table() + "\n\n" + cap["e2e"],
        "routing": routing_table() + "\n\n" + cap["e2e"],
        "bfcl": bfcl_table() + "\n\n" + cap["bfcl"],
        "bfcl_pooled": bfcl_pooled_table() + "\n\n" + cap["bfcl"],
    }


GENERATED = ("README.md", "docs/benchmarks.md")
"""The pages whose `<!-- report:NAME -->` ... `<!-- /report:NAME -->` blocks are generated."""


def fill(text: str, blocks: dict[str, str]) -> str:
    """`text` with every generated block replaced by the current table of its name.

    Raises:
        KeyError: a block names no table.
    """
    import re

    def one(match: re.Match[str]) -> str:
        name = match.group(1)
        return f"<!-- report:{name} -->\n{blocks[name]}\n<!-- /report:{name} -->"

    return re.sub(r"<!-- report:(\w+) -->\n.*?<!-- /report:\1 -->", one, text, flags=re.S)


def report_main(argv: Sequence[str]) -> int:
    """`python -m benchmarks report [--check]`: regenerate the tables in the README and docs.

    With `--check`, change nothing and exit 1 when a page's tables are not the current ones.
    """
    import argparse

    parser = argparse.ArgumentParser(prog="python -m benchmarks report", description=__doc__)
    parser.add_argument("--check", action="store_true", help="exit 1 if a page is out of date")
    args = parser.parse_args(argv)
    blocks, stale = tables(), []
    for name in GENERATED:
        page = RESULTS.parent.parent / name
        old = page.read_text(encoding="utf-8")
        new = fill(old, blocks)
        if new != old:
            stale.append(name)
            if not args.check:
                page.write_text(new, encoding="utf-8")
    if args.check and stale:
        print(f"out of date: {', '.join(stale)}; run `python -m benchmarks report`")
        return 1
    print(f"{'rewrote' if stale else 'up to date'}: {', '.join(stale or GENERATED)}")
    return 0
