"""`meta-tools trace` reads a trace line by line: a bad line is skipped and named, the rest shown."""

from __future__ import annotations

import json
import os
import subprocess
from pathlib import Path
from typing import Any

from tests.cli_process import meta_tools_command

RUN = "0123456789abcdef"
EVENTS: list[dict[str, Any]] = [
    {"event": "run_started", "run_id": RUN, "category": "Math", "round": 0, "objective": "Add"},
    {"event": "model_called", "run_id": RUN, "category": "Math", "round": 0, "phase": "select",
     "tools": ["add"], "messages": [{"role": "user", "content": "2 and 3"}],
     "reply": {"tool_calls": [{"name": "add", "arguments": {"a": 2, "b": 3}}]}},
    {"event": "tool_finished", "run_id": RUN, "category": "Math", "round": 1, "tool": "add",
     "ok": True, "arguments": {"a": 2, "b": 3}, "result": "5\u2028(one line\x85still)"},
    {"event": "run_finished", "run_id": RUN, "category": "Math", "round": 1,
     "status": "success", "llm_calls": 2, "prompt_tokens": 40, "completion_tokens": 11},
]  # fmt: skip
BAD_LINES = {
    "not UTF-8": b'{"event": "run_started", "run_id": "\xff\xfe"}',
    "nested 100000 deep": b"[" * 100_000 + b"]" * 100_000,
    "a field of the wrong type": b'{"event": "model_called", "run_id": "x", "messages": "oops"}',
    "not an object": b"[1, 2]",
    "not JSON": b"not json {",
    "no run": b'{"seq": 1}',
}


def cli(folder: Path, *args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [*meta_tools_command(), *args],
        cwd=folder,
        env={**os.environ, "COLUMNS": "200", "NO_COLOR": "1"},
        capture_output=True,
        text=True,
        encoding="utf-8",
        timeout=120,
        check=False,
    )


def good(event: dict[str, Any]) -> bytes:
    return json.dumps(event, ensure_ascii=False).encode()


def test_bad_lines_are_skipped_by_number_and_every_run_is_still_shown(tmp_path: Path) -> None:
    lines = [good(EVENTS[0]), *BAD_LINES.values(), b"", *map(good, EVENTS[1:])]
    (tmp_path / "t.jsonl").write_bytes(b"\n".join(lines) + b"\n")
    done = cli(tmp_path, "trace", "t.jsonl")
    assert done.returncode == 0, done.stderr
    assert done.stderr.splitlines() == [
        "warning: line 2 skipped: not UTF-8 text (byte 0xff at column 37)",
        "warning: line 3 skipped: not JSON: recursion limit exceeded at column 202",
        "warning: line 4 skipped: not a trace event (messages: Input should be a valid array)",
        "warning: line 5 skipped: not a JSON object",
        "warning: line 6 skipped: not JSON: expected ident at column 2",
        "warning: line 7 skipped: not a trace event (event: Field required; run_id: Field"
        " required)",
    ]
    out = done.stdout
    assert f"Math run {RUN}" in out and "LLM call 1 (select, round 0) · offered: add" in out
    # A result with U+2028 and NEL in it is one line of the file (not three bad ones).
    assert '✓ tool add({"a": 2, "b": 3})' in out and "(one line" in out and "still)" in out
    assert "■ success after 1 round, 2 LLM calls, 40+11 tokens" in out


def test_past_ten_bad_lines_the_rest_are_counted_and_a_file_of_only_bad_lines_fails(
    tmp_path: Path,
) -> None:
    (tmp_path / "t.jsonl").write_bytes(b"\xff\n" * 25)
    done = cli(tmp_path, "trace", "t.jsonl")
    assert (done.returncode, done.stdout) == (1, "")
    skipped = "warning: line {} skipped: not UTF-8 text (byte 0xff at column 1)"
    assert done.stderr.splitlines() == [
        *(skipped.format(n) for n in range(1, 11)),
        "warning: 15 more lines skipped",
        "error: 't.jsonl' holds no category run that could be read (25 lines skipped)",
    ]


# -- main-agent turns: trees, one line per run, and an unknown --run -----------------------
TURN = "turn_00aa11bb22cc33dd"
TURN_EVENTS: list[dict[str, Any]] = [
    {"event": "turn_started", "run_id": TURN, "ts": 1_700_000_000.0, "round": 0,
     "agent": "Friday", "request": "What is 2 + 3?\nAnd then some more words to cut off here."},
    {"event": "agent_replied", "run_id": TURN, "round": 1, "tools": ["maths", "parcels"],
     "calls": ["parcels"]},
    {"event": "category_asked", "run_id": TURN, "round": 1, "call_id": "c1",
     "category": "parcels", "by": "model", "objective": "Add", "exact_input": "2 3"},
    *({**e, "main_call_id": "c1", "turn_id": TURN, "run_id": "1111222233334444",
       "category": "Parcels"} for e in (EVENTS[0], {**EVENTS[3], "status": "no_suitable_tool"})),
    *({**e, "main_call_id": "c1", "turn_id": TURN} for e in EVENTS),
    {"event": "category_answered", "run_id": TURN, "round": 1, "call_id": "c1",
     "called": "parcels", "category": "Math", "status": "success", "declined": ["Parcels"],
     "tool_calls": 1, "summary": "2 + 3 = 5", "remainder": "the weather in Paris"},
    {"event": "agent_replied", "run_id": TURN, "round": 2, "tools": ["maths", "parcels"],
     "text": "It is 5."},
    {"event": "turn_finished", "run_id": TURN, "round": 2, "outcome": "answered",
     "answer": "It is 5.", "categories": ["Parcels", "Math"], "tool_calls": 1, "llm_calls": 2,
     "prompt_tokens": 90, "completion_tokens": 9, "duration_s": 1.5},
    {**EVENTS[0], "run_id": "ffff0000ffff0000", "ts": 1_700_000_100.0, "objective": "Add 1 and 1"},
    {"event": "turn_started", "run_id": "turn_99887766554433ff", "ts": 1_700_000_200.0,
     "agent": "Friday", "request": "And the weather?"},
]  # fmt: skip


def write_turns(folder: Path, events: list[dict[str, Any]] = TURN_EVENTS) -> None:
    (folder / "t.jsonl").write_bytes(b"\n".join(map(good, events)) + b"\n")


def in_utc(folder: Path, *args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [*meta_tools_command(), *args],
        cwd=folder,
        env={**os.environ, "COLUMNS": "200", "NO_COLOR": "1", "TZ": "UTC"},
        capture_output=True,
        text=True,
        encoding="utf-8",
        timeout=120,
        check=False,
    )


SUMMARY = [
    'turn_99887766554433ff  2023-11-14 22:16:40  Friday: "And the weather?"'
    "                                          no category    0 tool calls  unfinished  ?",
    'ffff0000ffff0000       2023-11-14 22:15:00  Math: "Add 1 and 1"'
    "                                                 Math           0 tool calls  unfinished  ?",
    'turn_00aa11bb22cc33dd  2023-11-14 22:13:20  Friday: "What is 2 + 3? And then some more'
    ' words to cut off here."  Parcels, Math  1 tool call   answered    1.50 s',
]


def test_summary_prints_one_line_per_run_newest_first(tmp_path: Path) -> None:
    write_turns(tmp_path)
    done = in_utc(tmp_path, "trace", "t.jsonl", "--summary")
    assert (done.returncode, done.stderr) == (0, "")
    assert done.stdout.splitlines() == SUMMARY
    only = in_utc(tmp_path, "trace", "t.jsonl", "--summary", "--run", "turn_00")
    # Alone, its columns are as wide as its own values.
    assert only.stdout.splitlines() == [
        'turn_00aa11bb22cc33dd  2023-11-14 22:13:20  Friday: "What is 2 + 3? And then some more'
        ' words to cut off here."  Parcels, Math  1 tool call  answered  1.50 s'
    ]


def test_a_turn_without_its_category_runs_lines_is_summed_up_from_its_own_record(
    tmp_path: Path,
) -> None:
    # A trace of the main agent's side only (the category runs written elsewhere).
    write_turns(tmp_path, [e for e in TURN_EVENTS if e["run_id"] == TURN])
    done = in_utc(tmp_path, "trace", "t.jsonl", "--summary")
    assert (done.returncode, done.stderr) == (0, "")
    assert done.stdout.splitlines() == [
        'turn_00aa11bb22cc33dd  2023-11-14 22:13:20  Friday: "What is 2 + 3? And then some more'
        ' words to cut off here."  Parcels, Math  1 tool call  answered  1.50 s'
    ]


def test_an_unknown_run_is_refused_with_the_runs_newest_first_and_a_close_id(
    tmp_path: Path,
) -> None:
    write_turns(tmp_path)
    done = in_utc(tmp_path, "trace", "t.jsonl", "--run", "turn_00ab")
    assert (done.returncode, done.stdout) == (1, "")
    assert done.stderr.splitlines() == [
        "error: no run 'turn_00ab' in 't.jsonl'; did you mean 'turn_00aa'? Its runs, newest first:",
        *(f"  - {line}" for line in SUMMARY),
        "hint: pass a run's id, or its start, to --run",
    ]
    far = in_utc(tmp_path, "trace", "t.jsonl", "--run", "zzz")
    assert far.stderr.splitlines()[0] == "error: no run 'zzz' in 't.jsonl'; its runs, newest first:"


def test_an_unknown_run_lists_only_the_newest_runs_of_a_long_trace(tmp_path: Path) -> None:
    runs = [
        {**EVENTS[0], "run_id": f"{n:016x}", "ts": 1_700_000_000.0 + n, "objective": f"Add {n}"}
        for n in range(25)
    ]
    write_turns(tmp_path, runs)
    done = in_utc(tmp_path, "trace", "t.jsonl", "--run", "zzz")
    listed = done.stderr.splitlines()[1:-1]
    assert [line.split()[1] for line in listed[:-1]] == [f"{n:016x}" for n in range(24, 14, -1)]
    assert listed[-1] == "  - … 15 older runs: `meta-tools trace FILE --summary` lists all"


def test_a_turn_is_shown_with_its_calls_the_runs_behind_them_and_the_answer(
    tmp_path: Path,
) -> None:
    write_turns(tmp_path)
    done = in_utc(tmp_path, "trace", "t.jsonl")
    assert (done.returncode, done.stderr) == (0, "")
    lines = [line.rstrip() for line in done.stdout.splitlines()]
    at = lines.index(f"Friday turn {TURN}")
    assert lines[at : at + 7] == [
        f"Friday turn {TURN}",
        "What is 2 + 3?",
        "And then some more words to cut off here.",
        "├── LLM call 1 · offered: maths, parcels",
        "│   └── reply",
        "│       → parcels",
        "├── Friday → parcels(objective='Add', exact_input='2 3')",
    ]
    # The declined run and the retried one are under the call, in order.
    assert lines[at + 7 : at + 11] == [
        "│   ├── Parcels run 1111222233334444 · main call c1",
        "│   │   Add",
        "│   │   └── ■ no_suitable_tool after 1 round, 2 LLM calls, 40+11 tokens, 0.00 s",
        "│   └── Math run 0123456789abcdef · main call c1",
    ]
    end = lines.index("Math run ffff0000ffff0000")
    assert lines[end - 9 : end] == [
        "├── ← parcels: success from Math (after Parcels declined), 1 tool call",
        "│   ├── 2 + 3 = 5",
        "│   └── left undone: the weather in Paris",
        "├── LLM call 2 · offered: maths, parcels",
        "│   └── reply",
        "│       It is 5.",
        "└── ■ answered after 2 LLM calls, 1 tool call, 90+9 tokens, 1.50 s",
        "    └── It is 5.",
        "",
    ]


def test_a_turns_every_field_is_printed_without_control_sequences(tmp_path: Path) -> None:
    from tests.cli.test_terminal import HOSTILE, assert_printable

    bad = HOSTILE
    turn = f"turn_{bad}"
    events: list[dict[str, Any]] = [
        {"event": "turn_started", "run_id": turn, "agent": bad, "session": bad, "request": bad},
        {"event": "agent_replied", "run_id": turn, "tools": [bad], "calls": [bad], "text": bad},
        {"event": "agent_replied", "run_id": turn, "error": bad},
        {"event": "category_asked", "run_id": turn, "call_id": bad, "category": bad,
         "objective": bad, "exact_input": bad},
        {**EVENTS[0], "main_call_id": bad, "turn_id": turn, "category": bad},
        {"event": "category_answered", "run_id": turn, "call_id": bad, "called": bad,
         "category": bad, "status": bad, "declined": [bad], "summary": bad, "question": bad,
         "remainder": bad},
        {"event": "category_answered", "run_id": turn, "called": bad, "error": bad},
        {"event": "turn_finished", "run_id": turn, "outcome": bad, "answer": bad, "error": bad,
         "categories": [bad]},
    ]  # fmt: skip
    write_turns(tmp_path, events)
    for extra in ((), ("--full",), ("--summary",), ("--run", "nothing")):
        done = cli(tmp_path, "trace", "t.jsonl", *extra)
        assert done.returncode == (1 if "--run" in extra else 0), done.stderr
        assert_printable(done.stdout + done.stderr)
        assert (done.stdout + done.stderr).count("page") >= 2
