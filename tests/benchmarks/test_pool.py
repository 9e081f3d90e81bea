"""Large-catalog runs pooled into one sample (`python -m benchmarks pool`)."""

import json
from pathlib import Path
from typing import Any

import pytest

from benchmarks.pool import PoolError, main, paired, pool

SETTINGS = {"tools": 2009, "categories": 48, "category_tools": 10, "category_order_seed": 1,
            "top_k": 10}  # fmt: skip


def row(task: str, side: str, correct: bool, **extra: Any) -> dict[str, Any]:
    return {"task": task, "side": side, "correct": correct, "right_tool": correct,
            "error": None, "llm_calls": 2, "prompt_tokens": 100, "completion_tokens": 10,
            "recovered_calls": 0, "wall_s": 1.0} | extra  # fmt: skip


def run(*rows: dict[str, Any], **settings: Any) -> dict[str, Any]:
    return SETTINGS | settings | {"runs": list(rows)}


def test_a_query_asked_in_two_runs_counts_once_from_the_later_run() -> None:
    older = run(row("q1", "hierarchy", False), row("q2", "hierarchy", True))
    newer = run(row("q1", "hierarchy", True), row("q3", "hierarchy", False))

    pooled = pool([("v1", older), ("v2", newer)])

    hierarchy = pooled["sides"]["hierarchy"]
    assert hierarchy["tasks"] == 3
    assert hierarchy["accuracy"] == round(2 / 3, 3)  # q1 from v2, q2 from v1
    assert pooled["replaced"] == 1
    assert pooled["files"] == ["v1", "v2"]


def test_runs_that_saw_a_different_catalog_are_refused_naming_the_file_and_setting() -> None:
    with pytest.raises(PoolError, match=r"v2: category_order_seed is 2, but 1 in v1"):
        pool([("v1", run()), ("v2", run(category_order_seed=2))])


def test_a_partial_run_without_settings_pools_and_is_reported() -> None:
    partial = {"partial": True, "runs": [row("q9", "retrieval", True)]}

    pooled = pool([("v1", run(row("q1", "retrieval", False))), ("v2", partial)])

    assert pooled["sides"]["retrieval"]["tasks"] == 2
    assert pooled["partial"] == ["v2"]


def test_paired_counts_only_queries_asked_on_both_sides() -> None:
    rows = [row("a", "hierarchy", True), row("a", "retrieval", True),
            row("b", "hierarchy", True), row("b", "retrieval", False),
            row("c", "hierarchy", False), row("c", "retrieval", False),
            row("d", "retrieval", True)]  # fmt: skip

    counts = paired(rows, "hierarchy", "retrieval")

    assert counts == {"both": 1, "only hierarchy": 1, "only retrieval": 0, "neither": 1}


def write(path: Path, catalog: dict[str, Any]) -> Path:
    record = {"benchmark": "e2e", "runs": {"m": {"catalog": catalog}}}
    path.write_text(json.dumps(record))
    return path


def test_the_command_prints_the_pooled_table(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    first = write(tmp_path / "a.json", run(row("q1", "hierarchy", True, first_category_right=True),
                                           row("q1", "retrieval", False)))  # fmt: skip
    second = write(tmp_path / "b.json", run(row("q2", "hierarchy", False, first_category_right=True),
                                            row("q2", "retrieval", True)))  # fmt: skip

    assert main([str(first), str(second), "--model", "m"]) == 0

    out = capsys.readouterr().out
    assert "| hierarchy | 2       | 1 (50%) | 2" in out
    assert "both: 0, only hierarchy: 1, only retrieval: 1, neither: 0" in out


def test_the_command_names_a_file_without_the_models_run(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    path = write(tmp_path / "a.json", run())

    with pytest.raises(SystemExit) as exited:
        main([str(path), "--model", "other"])

    assert exited.value.code == 2
    assert "a.json: no catalog run of model 'other' (has ['m'])" in capsys.readouterr().err
