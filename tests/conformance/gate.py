"""What the conformance suite's results mean for CI: outcomes, the lists, the verdict, the table.

A scenario's *outcome* comes from the suite's `checks.json`: `fail` when a check failed
(or the client under test exited with an error, the pseudo-check `client-exit`), `warn`
when a check only warned, else `pass`. Lists kept apart on purpose say which failed or
warning checks are expected, and why:

- `expected_failures.json`, `fixture`: scenarios bound to the suite's own fixture tools,
  prompts and resources (`test_image_content`, `test_simple_prompt`, ...), which a router
  of categories does not serve. They must fail. `no_fixture_passes`: fixture-bound
  scenarios that pass anyway, because the suite accepts our answer to a call of a tool we
  do not have; the table says so, and they must keep passing.
- `not_declared.json`: scenarios of an optional capability or extension the router does
  not declare (logging, prompts, resources, tasks). They must fail.
- `suite_quirks.json`: outcomes due to the suite version itself, each saying why our answer
  is right. They must fail (or warn) until the suite changes.
- `known_open.json`: failures or warnings that are ours to fix, each naming the item of
  issue 58 that fixes it. They must not pass: the list only shrinks.

An entry covers the whole scenario, or with `checks` only the named checks (a scenario
may fail for want of a fixture and also warn for a reason of ours), and with `versions`
only those suite versions. A listed scenario whose listed checks no longer fail (or warn)
fails the run, since the list is stale; so does a failed or warning check that no entry
covers, and an entry naming a scenario the suite does not have.
"""

from __future__ import annotations

import json
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field

Side = Literal["server", "client"]
Outcome = Literal["pass", "warn", "fail"]
SIDES: tuple[Side, ...] = ("server", "client")
HERE = Path(__file__).resolve().parent
CLIENT_EXIT = "client-exit"
"""The pseudo-check of a client under test that exited with an error."""


class _Strict(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)


class FixtureEntry(_Strict):
    reason: str = Field(min_length=10)
    checks: list[str] | None = None
    """The checks that fail for want of the fixture; the whole scenario when absent."""
    versions: list[str] | None = None
    """The suite versions the entry holds for; every version when absent."""


class OpenEntry(FixtureEntry):
    item: str = Field(pattern=r"^58\.[1-7]$")
    """The item of issue 58 whose fix makes these checks pass."""


Rule = Literal["fail", "pass", "open"]


@dataclass(frozen=True)
class ListSpec:
    file: str
    section: str
    rule: Rule
    """`fail`: the covered checks must fail or warn; `pass`: no check may fail;
    `open`: the covered checks must fail or warn, and the entry names its issue item."""

    @property
    def where(self) -> str:
        return f"{self.file} {self.section}"


LISTS: tuple[ListSpec, ...] = (
    ListSpec("expected_failures.json", "fixture", "fail"),
    ListSpec("not_declared.json", "not_declared", "fail"),
    ListSpec("suite_quirks.json", "quirks", "fail"),
    ListSpec("expected_failures.json", "no_fixture_passes", "pass"),
    ListSpec("known_open.json", "open", "open"),
)
"""Every list, in the order they take their checks (an open entry gets what the others left)."""

Entries = dict[Side, dict[str, FixtureEntry]]


@dataclass(frozen=True)
class Expectations:
    lists: dict[ListSpec, Entries]

    @classmethod
    def load(cls, folder: Path = HERE) -> Expectations:
        """Every list of `folder`, validated (a bad entry names its field)."""
        lists: dict[ListSpec, Entries] = {}
        for spec in LISTS:
            raw = json.loads((folder / spec.file).read_text("utf-8"))[spec.section]
            model = OpenEntry if spec.rule == "open" else FixtureEntry
            lists[spec] = {
                side: {
                    name: model.model_validate(entry) for name, entry in raw.get(side, {}).items()
                }
                for side in SIDES
            }
        return cls(lists)


@dataclass(frozen=True)
class Check:
    id: str
    status: str
    message: str = ""


@dataclass(frozen=True)
class ScenarioResult:
    side: Side
    scenario: str
    checks: tuple[Check, ...]

    @classmethod
    def from_checks(
        cls,
        side: Side,
        scenario: str,
        checks: Iterable[Mapping[str, Any]],
        *,
        exited_with_error: bool = False,
    ) -> ScenarioResult:
        """A result from the suite's `checks.json` entries (and the client's exit)."""
        found = [
            Check(
                str(c.get("id", "?")),
                str(c.get("status", "?")),
                str(c.get("errorMessage") or c.get("description") or ""),
            )
            for c in checks
        ]
        if exited_with_error:
            found.append(
                Check(CLIENT_EXIT, "FAILURE", "the client under test exited with an error")
            )
        return cls(side, scenario, tuple(found))

    @property
    def bad(self) -> tuple[Check, ...]:
        return tuple(c for c in self.checks if c.status in ("FAILURE", "WARNING"))

    @property
    def outcome(self) -> Outcome:
        statuses = {c.status for c in self.checks}
        return "fail" if "FAILURE" in statuses else "warn" if "WARNING" in statuses else "pass"

    def detail(self, checks: Iterable[Check] | None = None) -> str:
        """The first few bad checks, in short."""
        shown = list(self.bad if checks is None else checks)
        text = "; ".join(f"{c.id}: {c.message.strip()[:140]}" for c in shown[:3])
        return text + (f"; and {len(shown) - 3} more" if len(shown) > 3 else "")


@dataclass(frozen=True)
class Verdict:
    result: ScenarioResult
    listed: str
    """The lists that hold the scenario (`fixture`, `open 58.N`, ...) joined by `+`; `` for none."""
    problems: tuple[str, ...]
    """Why this scenario fails the run; empty when its outcome is the expected one."""


def _applies(entry: FixtureEntry, version: str) -> bool:
    return entry.versions is None or version in entry.versions


def _covered(entry: FixtureEntry, bad: Iterable[Check]) -> list[Check]:
    return [c for c in bad if entry.checks is None or c.id in entry.checks]


def _verdict(result: ScenarioResult, entries: list[tuple[ListSpec, FixtureEntry]]) -> Verdict:
    side, name = result.side, result.scenario
    remaining = list(result.bad)
    labels: list[str] = []
    problems: list[str] = []
    for spec, entry in entries:
        labels.append(f"open {entry.item}" if isinstance(entry, OpenEntry) else spec.section)
        if spec.rule == "pass":
            failed = [c for c in remaining if c.status == "FAILURE"]
            if failed:
                problems.append(
                    f"{side} {name!r} now fails ({result.detail(failed)}); if only for want of the "
                    f"suite's fixture, move it from {spec.where} to the fixture list, else fix it"
                )
            remaining = [c for c in remaining if c.status != "FAILURE"]
            continue
        covered = _covered(entry, remaining)
        if not covered:
            problems.append(f"{side} {name!r} passes what {spec.where} lists now; remove the entry")
        remaining = [c for c in remaining if c not in covered]
    if remaining:
        verb = "fails" if any(c.status == "FAILURE" for c in remaining) else "warns"
        problems.append(
            f"{side} {name!r} {verb}, and no list covers it: {result.detail(remaining)}"
        )
    return Verdict(result, "+".join(labels), tuple(problems))


def judge(
    results: Iterable[ScenarioResult],
    expectations: Expectations,
    *,
    version: str,
    known_scenarios: Mapping[Side, Iterable[str]],
) -> tuple[list[Verdict], list[str]]:
    """Each result's verdict, and the problems of the lists themselves (unknown scenarios)."""
    problems = [
        f"{spec.where}: {side} scenario {name!r} is not in suite {version}'s list; "
        'remove it, or restrict it with "versions"'
        for spec, by_side in expectations.lists.items()
        for side, entries in by_side.items()
        for name, entry in entries.items()
        if _applies(entry, version) and name not in set(known_scenarios.get(side, ()))
    ]
    verdicts = []
    for result in results:
        entries = [
            (spec, entry)
            for spec, by_side in expectations.lists.items()
            if (entry := by_side[result.side].get(result.scenario)) is not None
            and _applies(entry, version)
        ]
        verdicts.append(_verdict(result, entries))
    return verdicts, problems


_MARK: dict[Outcome, str] = {"pass": "pass", "warn": "warn", "fail": "FAIL"}


def table(verdicts: Iterable[Verdict], *, version: str) -> str:
    """A Markdown table, one row per scenario: outcome (and skipped checks), list, gate, bad checks."""
    lines = [
        f"| suite {version} | scenario | outcome | list | gate | failed or warning checks |",
        "|---|---|---|---|---|---|",
    ]
    for v in verdicts:
        gate = "ok" if not v.problems else "BROKEN"
        detail = v.result.detail().replace("|", "\\|").replace("\n", " ")
        skipped = sum(c.status == "SKIPPED" for c in v.result.checks)
        mark = _MARK[v.result.outcome] + (f" ({skipped} skipped)" if skipped else "")
        lines.append(
            f"| {v.result.side} | {v.result.scenario} | {mark} | "
            f"{v.listed or '-'} | {gate} | {detail} |"
        )
    return "\n".join(lines) + "\n"
