"""`python -m benchmarks.splits.make [--data DIR]`: write `stabletoolbench.json` (once).

The split was made once and is committed; running this again with the same data
and seed gives the same file (a test part that changes is no test part). It is
here so that anyone can check how the ids were drawn.

The test part holds a third of each subset (rounded up), drawn with `SEED` from
the queries that no end-to-end run had asked before the split: not the 99 of the
large-catalog samples (`--per-subset 6 --seed 0/1/2`, which every change of the
routing rounds was tried on) nor the 100 of the routing runs (`--set routing`,
seed 0). Those are tuning queries, with the rest.
"""

from __future__ import annotations

import argparse
import json
import random
from collections.abc import Sequence
from pathlib import Path

from ..catalog import DEFAULT_DATA, SPLITS, load_queries, make_split
from ..e2e_catalog import sample_queries

SEED = 49
TEST_SHARE = 1 / 3
SEEN_SAMPLES = ((6, 0), (6, 1), (6, 2))
"""(per subset, seed) of the large-catalog samples asked before the split."""
SEEN_ROUTING = (100, 0)
"""(queries, seed) of the routing-only runs asked before the split."""


def seen_before(queries: list[dict[str, object]]) -> set[str]:
    """The ids of the queries some end-to-end run asked before the split."""
    seen = {str(q["qid"]) for n, s in SEEN_SAMPLES for q in sample_queries(queries, n, s)}
    count, seed = SEEN_ROUTING
    seen |= {str(q["qid"]) for q in random.Random(seed).sample(queries, count)}
    return seen


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m benchmarks.splits.make", description=__doc__)
    parser.add_argument("--data", type=Path, default=DEFAULT_DATA, help="public data folder")
    parser.add_argument("--out", type=Path, default=SPLITS / "stabletoolbench.json")
    args = parser.parse_args(argv)
    queries = load_queries(args.data, "stabletoolbench")
    seen = seen_before(queries)
    parts = make_split(queries, seed=SEED, seen=seen, test_share=TEST_SHARE)
    record = {
        "dataset": "stabletoolbench",
        "queries": len(queries),
        "seed": SEED,
        "test_share": "ceil(1/3 of each subset)",
        "how": (
            "benchmarks.catalog.make_split(queries, seed=49, seen=..., test_share=1/3) by"
            " `python -m benchmarks.splits.make`: per subset (sorted by name), random.Random(49)"
            " draws ceil(n/3) test ids from the queries no e2e run had asked (seen: the"
            f" {len(seen)} ids of the catalog samples --per-subset 6 --seed 0, 1, 2 and the"
            " routing sample of 100, seed 0); every other id is tuning. File order kept."
        ),
        "rule": "Report large-catalog figures on `test`; try changes on `tune` only.",
        "sizes": {"tune": len(parts["tune"]), "test": len(parts["test"])},
        "seen_before_split": sorted(seen),
        **parts,
    }
    args.out.write_text(json.dumps(record, indent=1) + "\n")
    print(f"{args.out}: tune {len(parts['tune'])}, test {len(parts['test'])}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
