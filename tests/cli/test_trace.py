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
