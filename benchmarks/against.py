"""`python -m benchmarks.against COMMIT`: the one-tool overhead of this checkout against a commit's.

Timing on a shared machine is noisy, so the two are measured in one sitting,
alternately, each in its own process: COMMIT (checked out in a temporary git
worktree), then this checkout under each guard profile, `--reps` times. The
table gives each side's median CPU per call and its ratio to COMMIT's.
"""

from __future__ import annotations

import argparse
import json
import statistics
import subprocess
import sys
import tempfile
from collections.abc import Sequence
from pathlib import Path

from .report import table

ROOT = Path(__file__).resolve().parent.parent
#: Run in the tree to measure; an older tree's `_sequential` takes no profile.
_PROBE = """
import asyncio, inspect, json, sys
from benchmarks.overhead import _sequential
calls, guards = int(sys.argv[1]), sys.argv[2]
takes = "guards" in inspect.signature(_sequential).parameters
row = asyncio.run(_sequential(calls, guards) if takes else _sequential(calls))
print(json.dumps(row["cpu_mean_ms"]))
"""


def _cpu_ms(tree: Path, calls: int, guards: str) -> float:
    done = subprocess.run(
        [sys.executable, "-c", _PROBE, str(calls), guards],
        cwd=tree,
        env={"PYTHONPATH": str(tree), "PATH": "/usr/bin:/bin"},
        capture_output=True,
        text=True,
        check=True,
    )
    return float(json.loads(done.stdout.strip().splitlines()[-1]))


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m benchmarks.against", description=__doc__)
    parser.add_argument("commit", help="the commit to measure against (e.g. 0aad6a7)")
    parser.add_argument("--reps", type=int, default=5, help="alternations (default 5)")
    parser.add_argument("--calls", type=int, default=3000, help="one-tool calls a measurement")
    args = parser.parse_args(argv)
    with tempfile.TemporaryDirectory(prefix="against-") as folder:
        old = Path(folder) / "tree"
        subprocess.run(
            ["git", "worktree", "add", "--detach", "-q", str(old), args.commit],
            cwd=ROOT,
            check=True,
        )
        try:
            sides = {f"{args.commit} (all its guards)": (old, "capable")}
            sides |= {f"this checkout, {g}": (ROOT, g) for g in ("capable", "small")}
            samples: dict[str, list[float]] = {name: [] for name in sides}
            for _ in range(args.reps):
                for name, (tree, guards) in sides.items():
                    samples[name].append(_cpu_ms(tree, args.calls, guards))
        finally:
            subprocess.run(
                ["git", "worktree", "remove", "--force", str(old)], cwd=ROOT, check=False
            )
    base = statistics.median(next(iter(samples.values())))
    rows = [
        [name, f"{statistics.median(v):.3f}", f"{statistics.median(v) / base:.2f}×", len(v)]
        for name, v in samples.items()
    ]
    print(table(["side", "CPU per one-tool call, median ms", "against the commit", "runs"], rows))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
