"""The conformance gate: which outcomes fail the run, and the committed lists it reads."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from tests.conformance.gate import (
    LISTS,
    Expectations,
    OpenEntry,
    ScenarioResult,
    Side,
    Verdict,
    judge,
    table,
)

VERSION = "0.1.16"


def write_lists(folder: Path, **sections: dict[str, Any]) -> Expectations:
    """The list files in `folder`, each section empty unless given (server side)."""
    files: dict[str, dict[str, Any]] = {}
    for spec in LISTS:
        server = sections.get(spec.section, {})
        files.setdefault(spec.file, {})[spec.section] = {"server": server, "client": {}}
    for name, content in files.items():
        (folder / name).write_text(json.dumps(content), "utf-8")
    return Expectations.load(folder)


def result(
    name: str, *statuses: str, side: Side = "server", exited: bool = False
) -> ScenarioResult:
    checks = [
        {"id": f"{name}-{n}", "status": s, "errorMessage": f"{s} {n}"}
        for n, s in enumerate(statuses)
    ]
    return ScenarioResult.from_checks(side, name, checks, exited_with_error=exited)


def verdict(expectations: Expectations, one: ScenarioResult) -> Verdict:
    """The verdict on `one`, a scenario the suite has."""
    known: dict[Side, list[str]] = {"server": [], "client": []}
    known[one.side].append(one.scenario)
    verdicts, problems = judge([one], expectations, version=VERSION, known_scenarios=known)
    assert problems == []
    return verdicts[0]


FIXTURE = {"reason": "calls the suite's fixture tool test_image_content"}
OPEN = {"item": "58.3", "reason": "no priming event on a POST SSE stream"}


def test_an_unlisted_scenario_that_passes_is_fine_and_one_that_fails_or_warns_breaks_the_run(
    tmp_path: Path,
) -> None:
    lists = write_lists(tmp_path)
    assert verdict(lists, result("ping", "SUCCESS", "INFO")).problems == ()
    assert verdict(lists, result("ping", "SUCCESS", "FAILURE")).problems == (
        "server 'ping' fails, and no list covers it: ping-1: FAILURE 1",
    )
    assert verdict(lists, result("ping", "WARNING")).problems == (
        "server 'ping' warns, and no list covers it: ping-0: WARNING 0",
    )


def test_a_fixture_bound_scenario_must_fail_and_breaks_the_run_once_it_passes(
    tmp_path: Path,
) -> None:
    lists = write_lists(tmp_path, fixture={"tools-call-image": FIXTURE})
    failing = verdict(lists, result("tools-call-image", "FAILURE"))
    passing = verdict(lists, result("tools-call-image", "SUCCESS"))
    assert (failing.listed, failing.problems) == ("fixture", ())
    assert passing.problems == (
        "server 'tools-call-image' passes what expected_failures.json fixture lists now; "
        "remove the entry",
    )


def test_a_known_open_scenario_may_fail_or_warn_but_breaks_the_run_once_it_passes(
    tmp_path: Path,
) -> None:
    lists = write_lists(tmp_path, open={"server-sse-polling": OPEN})
    assert verdict(lists, result("server-sse-polling", "WARNING")).listed == "open 58.3"
    assert verdict(lists, result("server-sse-polling", "FAILURE")).problems == ()
    assert verdict(lists, result("server-sse-polling", "SUCCESS")).problems == (
        "server 'server-sse-polling' passes what known_open.json open lists now; remove the entry",
    )


def test_entries_limited_to_named_checks_leave_every_other_check_to_the_gate(
    tmp_path: Path,
) -> None:
    lists = write_lists(
        tmp_path,
        fixture={"server-sse-polling": {**FIXTURE, "checks": ["server-sse-polling-0"]}},
        open={"server-sse-polling": {**OPEN, "checks": ["server-sse-polling-1"]}},
    )
    both = verdict(lists, result("server-sse-polling", "FAILURE", "WARNING"))
    fixed = verdict(lists, result("server-sse-polling", "FAILURE", "SUCCESS"))
    other = verdict(lists, result("server-sse-polling", "FAILURE", "WARNING", "WARNING"))
    assert (both.listed, both.problems) == ("fixture+open 58.3", ())
    assert fixed.problems == (
        "server 'server-sse-polling' passes what known_open.json open lists now; remove the entry",
    )
    assert other.problems == (
        "server 'server-sse-polling' warns, and no list covers it: server-sse-polling-2: WARNING 2",
    )


def test_a_pass_without_the_fixture_must_keep_passing(tmp_path: Path) -> None:
    reason = {"reason": "accepts our unknown-category error text as simple text"}
    lists = write_lists(tmp_path, no_fixture_passes={"tools-call-simple-text": reason})
    assert verdict(lists, result("tools-call-simple-text", "SUCCESS")).problems == ()
    (problem,) = verdict(lists, result("tools-call-simple-text", "FAILURE")).problems
    assert problem.startswith("server 'tools-call-simple-text' now fails (tools-call-simple-text-0")
    assert "move it from expected_failures.json no_fixture_passes to the fixture list" in problem


def test_a_client_that_exits_with_an_error_fails_even_when_its_checks_pass(tmp_path: Path) -> None:
    lists = write_lists(tmp_path)
    one = result("initialize", "SUCCESS", side="client", exited=True)
    assert one.outcome == "fail"
    assert verdict(lists, one).problems == (
        "client 'initialize' fails, and no list covers it: "
        "client-exit: the client under test exited with an error",
    )


def test_an_entry_for_a_scenario_the_suite_lacks_is_a_problem_unless_kept_to_other_versions(
    tmp_path: Path,
) -> None:
    lists = write_lists(
        tmp_path,
        fixture={
            "tools-call-imgae": FIXTURE,
            "server-stateless": {**FIXTURE, "versions": ["0.2.0-alpha.12"]},
        },
    )
    _, problems = judge([], lists, version=VERSION, known_scenarios={"server": ["ping"]})
    assert problems == [
        "expected_failures.json fixture: server scenario 'tools-call-imgae' is not in suite "
        '0.1.16\'s list; remove it, or restrict it with "versions"'
    ]


def test_an_open_entry_must_name_an_item_of_issue_58(tmp_path: Path) -> None:
    with pytest.raises(ValueError, match="item"):
        write_lists(tmp_path, open={"server-sse-polling": {**OPEN, "item": "12.1"}})


def test_the_table_has_a_row_per_scenario_with_its_outcome_list_and_gate(tmp_path: Path) -> None:
    lists = write_lists(tmp_path, fixture={"tools-call-image": FIXTURE})
    verdicts, _ = judge(
        [result("ping", "SUCCESS", "SKIPPED"), result("tools-call-image", "FAILURE")],
        lists,
        version=VERSION,
        known_scenarios={"server": ["ping", "tools-call-image"]},
    )
    assert table(verdicts, version=VERSION).splitlines() == [
        "| suite 0.1.16 | scenario | outcome | list | gate | failed or warning checks |",
        "|---|---|---|---|---|---|",
        "| server | ping | pass (1 skipped) | - | ok |  |",
        "| server | tools-call-image | FAIL | fixture | ok | tools-call-image-0: FAILURE 0 |",
    ]


def test_the_committed_lists_load_and_no_scenario_is_both_fixture_bound_and_passing() -> None:
    lists = Expectations.load()
    by_section = {spec.section: entries for spec, entries in lists.lists.items()}
    for side in ("server", "client"):
        bound = {
            name
            for section in ("fixture", "not_declared", "quirks")
            for name in by_section[section][side]
        }
        assert bound & set(by_section["no_fixture_passes"][side]) == set()
    opened = by_section["open"]["server"] | by_section["open"]["client"]
    assert opened and all(isinstance(entry, OpenEntry) for entry in opened.values())
