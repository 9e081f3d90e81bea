"""Untrusted text never drives the terminal: every print path of the real command strips it.

Tool results, summaries, trace files and an MCP server's stderr carry escape
sequences of every kind; the output keeps their visible words and none of the
control characters.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from meta_tools.cli.terminal import printable, printable_json
from tests.cli.test_app import TOOLS_MODULE, fake_model, write_config
from tests.cli_process import meta_tools_command
from tests.fakes.llm_server import (
    FakeLLMServer,
    Reply,
    openai_text_reply,
    openai_tool_reply,
    wire_tool_call,
)

ATTACKS = {
    "OSC title, BEL-ended": "\x1b]0;pwned\x07",
    "OSC 52 clipboard, ST-ended": "\x1b]52;c;ZWNobyBwd25lZA==\x1b\\",
    "OSC 8 link": "\x1b]8;;http://evil.example/\x1b\\click\x1b]8;;\x1b\\",
    "CSI clear screen and home": "\x1b[2J\x1b[H",
    "SGR hidden text": "\x1b[8m",
    "CSI with intermediates": "\x1b[1 q",
    "C1 CSI": "\x9b31m",
    "C1 OSC": "\x9d0;pwned\x9c",
    "DCS query": "\x1bP$q m\x1b\\",
    "APC": "\x1b_payload\x1b\\",
    "reset (RIS)": "\x1bc",
    "charset switch": "\x1b(0",
    "unterminated OSC": "\x1b]0;",
    "CR overwrite": "\rfake",
    "backspaces": "\x08\x08",
    "bidi override": "\u202etxt.exe\u202c",
    "bidi isolate": "\u2067x\u2069",
    "NUL, DEL, VT, FF": "\x00\x7f\x0b\x0c",
}
HOSTILE = "page " + " ".join(ATTACKS.values()) + " end"
CONTROLS = {chr(c) for c in [*range(0x09), *range(0x0B, 0x20), *range(0x7F, 0xA0)]}
BIDI = set("\u202a\u202b\u202c\u202d\u202e\u2066\u2067\u2068\u2069")


def assert_printable(text: str) -> None:
    found = sorted({f"U+{ord(c):04X}" for c in text if c in CONTROLS | BIDI})
    assert not found, f"control characters reached the terminal: {found}"


def cli(folder: Path, *args: str, **env: str) -> subprocess.CompletedProcess[bytes]:
    return subprocess.run(
        [*meta_tools_command(), *args],
        cwd=folder,
        env={**os.environ, "COLUMNS": "200", "NO_COLOR": "1", **env},
        capture_output=True,
        timeout=120,
        check=False,
    )


def decoded(done: subprocess.CompletedProcess[bytes]) -> tuple[str, str]:
    return done.stdout.decode("utf-8"), done.stderr.decode("utf-8")


@pytest.fixture
def folder(tmp_path: Path) -> Path:
    (tmp_path / "cli_sample_tools.py").write_text(TOOLS_MODULE)
    (tmp_path / "pages.py").write_text(
        "from meta_tools import tool\n\n\n@tool\ndef fetch_page(url: str) -> str:\n"
        f'    """Fetch a web page."""\n    return {HOSTILE!r}\n'
    )
    return tmp_path


@pytest.mark.parametrize("attack", ATTACKS.values(), ids=ATTACKS.keys())
def test_printable_strips_each_kind_of_control_sequence(attack: str) -> None:
    shown = printable(f"before {attack} after")
    assert_printable(shown)
    assert shown.startswith("before ") and shown.endswith(" after")
    assert "pwned" not in shown and "evil.example" not in shown and "payload" not in shown


def test_printable_keeps_text_newlines_and_tabs_and_json_keeps_its_value() -> None:
    assert printable("plain\ttext\nnext line é 漢字") == "plain\ttext\nnext line é 漢字"
    text = json.dumps({"summary": HOSTILE}, ensure_ascii=False)
    safe = printable_json(text)
    assert_printable(safe)
    assert json.loads(safe) == {"summary": HOSTILE}


def test_run_prints_tool_results_arguments_and_summaries_without_control_sequences(
    folder: Path, llm_server: FakeLLMServer
) -> None:
    categories = {"Web": {"description": "Read web pages.", "tools": ["fetch_page"]}}
    write_config(folder, {"model": fake_model(llm_server), **categories})
    url = "http://example.test/\x1b[2J\x1b]0;pwned\x07"
    for _ in range(2):
        llm_server.enqueue(
            Reply(body=openai_tool_reply(wire_tool_call("call_1", "fetch_page", {"url": url}))),
            Reply(body=openai_text_reply(f"The page says: {HOSTILE}")),
        )
    task = ("run", "web", "-o", "Read \x1b]0;pwned\x07 it", "-i", url, "-t", "pages")
    done = cli(folder, *task, FAKE_LLM_KEY="k")
    out, err = decoded(done)
    assert (done.returncode, err) == (0, ""), err
    assert_printable(out)
    assert "✓ fetch_page(url=" in out and "The page says: page" in out
    assert "click" in out and "fake" in out and "txt.exe" in out  # the visible words stay
    as_json = cli(folder, *task, "--json", FAKE_LLM_KEY="k")
    out, err = decoded(as_json)
    assert as_json.returncode == 0, err
    assert_printable(out)
    result: dict[str, Any] = json.loads(out)  # the very value, escaped where it must be
    assert result["summary"] == f"The page says: {HOSTILE}"
    assert result["executions"][0]["result"] == HOSTILE


def test_list_validate_and_logs_print_a_failed_servers_stderr_without_control_sequences(
    folder: Path,
) -> None:
    crash = f"import sys; sys.stderr.write({HOSTILE!r} + '\\n'); sys.exit(3)"
    server = {"transport": "stdio", "command": sys.executable, "args": ["-c", crash]}
    tools = {"Math": {"description": "Arithmetic on integers.", "tools": ["add", "evil_tool"]}}
    write_config(folder, {"mcp_servers": {"evil": server}, **tools})
    listed = cli(folder, "list", "-t", "cli_sample_tools", "--log-level", "debug")
    out, err = decoded(listed)
    assert listed.returncode == 0, err
    assert "MCP server 'evil' stderr: page" in err  # the log line
    assert "its stderr ended with:\npage" in err  # the warning
    assert_printable(out + err)
    checked = cli(folder, "validate", "-t", "cli_sample_tools")
    out, err = decoded(checked)
    assert checked.returncode == 1
    assert "$.mcp_servers.evil: MCP server 'evil' could not be started" in err
    assert "its stderr ended with:\npage" in err and " end; tools not checked: evil_tool" in err
    assert_printable(out + err)


def test_trace_prints_every_field_without_control_sequences(folder: Path) -> None:
    bad = HOSTILE
    events: list[dict[str, Any]] = [
        {"event": "run_started", "run_id": f"r1{bad}", "category": bad, "round": 0,
         "main_call_id": bad, "objective": bad},
        {"event": "model_called", "run_id": f"r1{bad}", "category": bad, "round": 0,
         "phase": bad, "tools": [bad],
         "messages": [{"role": "system", "content": bad}, {"role": bad, "content": bad},
                      {"role": "tool", "name": bad, "content": bad}],
         "reply": {"content": bad, "tool_calls": [{"name": bad, "arguments": {bad: bad}}]}},
        {"event": "tool_finished", "run_id": f"r1{bad}", "category": bad, "round": 1,
         "tool": bad, "ok": True, "arguments": {"url": bad}, "result": bad},
        {"event": "tool_finished", "run_id": f"r1{bad}", "category": bad, "round": 1,
         "tool": bad, "ok": False, "arguments": bad, "error": bad},
        {"event": "run_finished", "run_id": f"r1{bad}", "category": bad, "round": 1,
         "status": bad, "llm_calls": 2},
    ]  # fmt: skip
    path = folder / "t.jsonl"
    path.write_text("".join(json.dumps(e, ensure_ascii=False) + "\n" for e in events))
    for extra in ((), ("--full",)):
        done = cli(folder, "trace", "t.jsonl", *extra)
        out, err = decoded(done)
        assert (done.returncode, err) == (0, ""), err
        assert_printable(out)
        assert out.count("page") >= 10 and "LLM call 1" in out and "■" in out
