"""Every Python block of the README runs as written, offline and without a key."""

from __future__ import annotations

import re
import subprocess
import sys
from pathlib import Path

import pytest

from meta_tools.guards import ALL
from tests.cli.test_first_hour import no_key_env
from tests.fakes.llm_server import (
    FakeLLMServer,
    Reply,
    openai_text_reply,
    openai_tool_reply,
    wire_tool_call,
)

ROOT = Path(__file__).resolve().parents[1]
BLOCK = re.compile(r"^( *)```python\n(.*?)^\1```", re.DOTALL | re.MULTILINE)


def python_blocks() -> list[str]:
    """The README's Python blocks, each dedented by its fence's indent (list items indent)."""
    text = (ROOT / "README.md").read_text(encoding="utf-8")
    blocks = []
    for match in BLOCK.finditer(text):
        indent = len(match.group(1))
        blocks.append("".join(line[indent:] for line in match.group(2).splitlines(True)))
    return blocks


def run_block(code: str, **env: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-c", code],
        cwd=ROOT,
        env=no_key_env(**env),
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )


BLOCKS = python_blocks()
# What each block prints: the README's snippets in the order they appear.
EXPECTED = {
    "ScriptedModel": "success 42.195 km is 26.22 miles.\n",
    "def shout": "no model for the categories: OpenAIChatModel('gpt-4o-mini') has no API key",
    "AsyncOpenAI": "It is a Thursday.\n",
}


def test_the_readme_has_the_python_blocks_this_test_knows() -> None:
    found = [next((k for k in EXPECTED if k in block), block[:60]) for block in BLOCKS]
    assert found == list(EXPECTED)


@pytest.mark.parametrize("marker", ["ScriptedModel", "def shout"])
def test_a_readme_block_runs_without_a_key(marker: str) -> None:
    (code,) = [b for b in BLOCKS if marker in b]
    done = run_block(code)
    assert done.returncode == 0, done.stderr
    assert "Traceback" not in done.stderr
    assert done.stdout.startswith(EXPECTED[marker])


def test_the_agent_loop_block_runs_against_a_local_openai_compatible_server(
    llm_server: FakeLLMServer,
) -> None:
    (code,) = [b for b in BLOCKS if "AsyncOpenAI" in b]
    task = {"objective": "Find the weekday", "exact_input": "2025-12-25"}
    llm_server.enqueue(
        Reply(body=openai_tool_reply(wire_tool_call("c1", "dates_time_zones", task))),
        Reply(
            body=openai_tool_reply(wire_tool_call("c2", "describe_date", {"date": "2025-12-25"}))
        ),
        Reply(body=openai_text_reply("2025-12-25 is a Thursday.")),
        Reply(body=openai_text_reply("It is a Thursday.")),
    )
    done = run_block(code, OPENAI_BASE_URL=llm_server.openai_base_url)  # and no key
    assert done.returncode == 0, done.stderr
    assert done.stdout == EXPECTED["AsyncOpenAI"]
    assert llm_server.pending == 0


def test_the_readme_stays_short_and_its_test_command_is_the_one_ci_runs() -> None:
    text = (ROOT / "README.md").read_text(encoding="utf-8")
    assert len(text.splitlines()) <= 300
    ci = (ROOT / ".ci" / "run").read_text(encoding="utf-8")
    assert 'pip install -e ".[dev]"\npython -m pytest -q\n' in text
    assert 'pip install -e ".[dev]"\n' in ci
    assert "\npython -m pytest -q\n" in ci


def test_the_readme_counts_the_guards_there_are() -> None:
    text = (ROOT / "README.md").read_text(encoding="utf-8")
    assert f"The router has {len(ALL)} *guards*" in text
