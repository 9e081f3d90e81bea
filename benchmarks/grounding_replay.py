"""`python -m benchmarks grounding [--data DIR]`: the grounding check replayed on recorded calls.

Which first calls of the recorded real-model runs (`benchmarks/results/`: the demo set, the
large catalog, BFCL direct and pooled) the category's check (`meta_tools.category.grounding`)
would have held back, split by whether the run was right. No model: it reads what the model
called, the task it was given and the tool it called. Right runs held back are the cost of
the check, wrong ones its reach. The task is the request the run started from (a category's
objective and input may add words, so the replay holds back at least as much as the loop).
"""

from __future__ import annotations

import argparse
import glob
import json
import re
from collections import Counter
from collections.abc import Iterator, Mapping, Sequence
from pathlib import Path
from typing import Any

import anyio

from meta_tools.demo.server import build_server
from meta_tools.guards.grounding import Grounds, guessed_values
from meta_tools.llm import ToolCall
from meta_tools.tools.base import BaseTool
from meta_tools.tools.mcp.connection import McpToolSource

from .e2e_tasks import TASKS

RESULTS = Path(__file__).parent / "results"
_CALL = re.compile(r"^([\w.\-]+)\((.*)\)$", re.S)


def _first_call(run: Mapping[str, Any]) -> tuple[str, dict[str, Any]] | None:
    for call in (run.get("calls") or [])[:1]:
        match = _CALL.match(call)
        if match:
            try:
                arguments = json.loads(match.group(2))
            except ValueError:
                return None
            return (match.group(1), arguments) if isinstance(arguments, dict) else None
    return None


def _runs(pattern: str, key: str) -> Iterator[dict[str, Any]]:
    for path in sorted(glob.glob(str(RESULTS / pattern))):
        for run in json.loads(Path(path).read_text())["runs"].values():
            yield from (run.get(key) or {}).get("runs", [])


def _held(tool: Any, name: str, arguments: dict[str, Any], task: str) -> bool:
    call = ToolCall(name=name, arguments=arguments)
    return bool(guessed_values(call, tool, Grounds.of(task, "")))


async def _demo_tools() -> dict[str, Any]:
    async with McpToolSource("demo", build_server()) as source:
        await source.connect()
        return {t.name: t for t in source.tools()}


def _replay(
    runs: Iterator[dict[str, Any]], tools: Mapping[str, Any], tasks: Mapping[str, str]
) -> Counter[tuple[bool, bool]]:
    """(right, held back) of each run's first call, for runs whose tool and task are known."""
    counts: Counter[tuple[bool, bool]] = Counter()
    for run in runs:
        first = _first_call(run)
        if first and first[0] in tools and run["task"] in tasks:
            counts[run["correct"], _held(tools[first[0]], *first, tasks[run["task"]])] += 1
    return counts


def replay_demo() -> Counter[tuple[bool, bool]]:
    prompts = {t.id: t.prompt for t in TASKS}
    return _replay(_runs("e2e*.json", "demo"), anyio.run(_demo_tools), prompts)


def replay_catalog(data: Path) -> Counter[tuple[bool, bool]]:
    from .e2e_catalog import load_large_catalog

    catalog = load_large_catalog(data)
    tools: dict[str, BaseTool] = {t.name: t for t in catalog.tools}
    queries = {q["qid"]: q["query"] for q in catalog.queries}
    return _replay(_runs("e2e-routing*.json", "catalog"), tools, queries)


def replay_bfcl() -> Counter[tuple[str, bool]]:
    from .bfcl_data import Ledger, load_entries, tools_for

    categories = ("simple_python", "multiple", "parallel", "irrelevance")
    categories += ("live_simple", "live_multiple", "live_irrelevance")
    entries = {e.id: e for c in categories for e in load_entries(c)}
    counts: Counter[tuple[str, bool]] = Counter()
    for name, setting in (("bfcl.json", "direct"), ("bfcl-pooled.json", "pooled")):
        for model in json.loads((RESULTS / name).read_text())["runs"].values():
            for run in model[setting]["runs"]:
                entry, first = entries[run["task"]], _first_call(run)
                if run["side"] == "plain" or first is None:
                    continue
                tools = {t.name: t for t in tools_for(entry.functions, Ledger())}
                tool = tools.get(first[0]) or tools.get(re.sub(r"_\d+$", "", first[0]))
                if tool is not None:
                    verdict = "irrelevance" if entry.irrelevance else str(run["correct"])
                    counts[verdict, _held(tool, tool.name, first[1], entry.prompt)] += 1
    return counts


def _row(name: str, counts: Mapping[tuple[Any, bool], int], right: Sequence[Any]) -> str:
    def total(held: bool, verdicts: Sequence[Any]) -> int:
        return sum(n for (v, h), n in counts.items() if v in verdicts and (not held or h))

    wrong = [v for v, _ in counts if v not in right]
    return (
        f"| {name} | {total(False, right)} | {total(True, right)} "
        f"| {total(False, wrong)} | {total(True, wrong)} |"
    )


def main(argv: Sequence[str]) -> int:
    parser = argparse.ArgumentParser(prog="python -m benchmarks grounding", description=__doc__)
    parser.add_argument("--data", type=Path, default=Path("../shared/data"))
    args = parser.parse_args(argv)
    lines = [
        "| recorded first calls | right runs | right held back | wrong runs | wrong held back |",
        "|---|---|---|---|---|",
        _row("demo set", replay_demo(), [True]),
    ]
    if args.data.is_dir():
        lines.append(_row("large catalog", replay_catalog(args.data), [True]))
    try:
        lines.append(_row("BFCL (wrong: irrelevance and misses)", replay_bfcl(), ["True"]))
    except SystemExit as exc:  # the bfcl extra is not installed
        lines.append(f"BFCL skipped: {exc}")
    print("\n".join(lines))
    return 0
