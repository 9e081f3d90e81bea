"""What every benchmark records: where results go, the machine, Markdown tables, result files.

`run` (the offline benchmarks), `e2e` and `bfcl` (a real model) all write here, and
none of them imports another for it.
"""

from __future__ import annotations

import json
import os
import platform
from collections.abc import Callable, Iterable, Sequence
from pathlib import Path
from typing import Any

__all__ = [
    "RESULTS",
    "Checkpoint",
    "checkpoint",
    "kept_rows",
    "machine",
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


def store(out: Path, model: str, record: dict[str, Any], *, benchmark: str = "e2e") -> None:
    """Add (or update) the run of `model` in the results file of `benchmark`."""
    out.parent.mkdir(parents=True, exist_ok=True)
    stored: dict[str, Any] = (
        json.loads(out.read_text()) if out.exists() else {"benchmark": benchmark, "runs": {}}
    )
    stored["runs"][model] = stored["runs"].get(model, {}) | record
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


def stored_rows(out: Path, model: str, name: str) -> list[dict[str, Any]]:
    """The rows of `model`'s `name` run in the results file `out` (none when there is none).

    A run of hours on this CPU outlives a sitting: `--resume` keeps these rows and
    asks only the rest.
    """
    if not out.exists():
        return []
    found = json.loads(out.read_text())["runs"].get(model, {}).get(name, {})
    return list(found.get("runs", []))


def kept_rows(
    done: Sequence[dict[str, Any]], tasks: Iterable[str], sides: Sequence[str]
) -> tuple[list[dict[str, Any]], set[tuple[str, str]]]:
    """The rows of `done` for these tasks and sides, and their (task, side) keys: a
    resumed run keeps them and asks only the rest."""
    asked = set(tasks)
    rows = [r for r in done if r["task"] in asked and r["side"] in sides]
    return rows, {(r["task"], r["side"]) for r in rows}
