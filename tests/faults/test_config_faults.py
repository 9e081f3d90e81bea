"""A bad config or template edit is a `ConfigError` naming the file; a reload keeps the running config."""

import json
import os
import subprocess
from pathlib import Path
from typing import Any

import anyio
import pytest

from meta_tools import tool
from meta_tools.category.prompts import PromptSet
from meta_tools.cli.checks import check_config
from meta_tools.config import MetaToolsConfig
from meta_tools.exceptions import ConfigError
from meta_tools.llm import ScriptedModel
from meta_tools.router.manager import MetaManager
from meta_tools.router.reload import ConfigReloader
from tests.cli_process import meta_tools_command

pytestmark = pytest.mark.anyio

GOOD = {"Text": {"description": "Transform text.", "tools": ["shout"]}}
DEFAULT_SELECTION = (
    Path(__file__).parents[2] / "meta_tool_prompts" / "tool_selection.j2"
).read_text(encoding="utf-8")


@tool
def shout(text: str) -> str:
    """Upper-case a text."""
    return text.upper()


def deep(levels: int) -> str:
    return '{"Text": {"description": "x", "tools": ' + "[" * levels + "]" * levels + "}}"


# Each edit: (file name -> content); the expected problem is a substring of one line.
BAD_EDITS: dict[str, tuple[dict[str, bytes], str]] = {
    "nested 900 deep": ({"Meta_tool_config.json": deep(900).encode()}, "levels deep"),
    "nested 100000 deep": ({"Meta_tool_config.json": deep(100_000).encode()}, "levels deep"),
    "NUL in prompts_dir": (
        {"Meta_tool_config.json": json.dumps({**GOOD, "prompts_dir": "a\u0000b"}).encode()},
        "$.prompts_dir: contains a NUL character",
    ),
    "NUL in a server command": (
        {
            "Meta_tool_config.json": json.dumps(
                {**GOOD, "mcp_servers": {"s": {"command": "py\u0000thon"}}}
            ).encode()
        },
        "$.mcp_servers.s.command: contains a NUL character",
    ),
    "template not UTF-8": (
        {"prompts/tool_selection.j2": b"Hello \xff\xfe {{ category }}"},
        "tool_selection.j2: not UTF-8 text",
    ),
    "template divides by zero": (
        {"prompts/tool_selection.j2": b"line one\n{{ 1/0 }}\n"},
        "tool_selection.j2:2: ZeroDivisionError",
    ),
    "template assumes a tool is offered": (
        {"prompts/tool_selection.j2": b"first tool: {{ tools[0].name }}"},
        "tool_selection.j2:1:",
    ),
    "template indexes past the end": (
        {"prompts/tool_result_evaluation.j2": b"{{ tools[7].name }}"},
        "tool_result_evaluation.j2:1:",
    ),
    "template is a folder": ({"prompts/max_iteration_summary.j2/x": b""}, "not a regular file"),
    "an integer of 5000 digits": (
        {
            "Meta_tool_config.json": b'{"Text": {"description": "x", "tools": ["shout"],'
            b' "max_iterations": ' + b"9" * 5000 + b"}}"
        },
        "not valid JSON: Exceeds the limit",
    ),
    "prompts_dir name too long": (
        {"Meta_tool_config.json": json.dumps({**GOOD, "prompts_dir": "p" * 5000}).encode()},
        "prompts_dir: File name too long",
    ),
    "unpaired surrogate": (
        {"Meta_tool_config.json": b'{"Text": {"description": "x\\ud800", "tools": ["shout"]}}'},
        '$."Text".description: contains an unpaired surrogate',
    ),
}


async def test_a_template_that_is_a_fifo_is_a_problem_not_a_hang(tmp_path: Path) -> None:
    path, meta = start(tmp_path)
    reloader = ConfigReloader(meta, path)
    (tmp_path / "prompts" / "tool_selection.j2").unlink()
    os.mkfifo(tmp_path / "prompts" / "tool_selection.j2")
    with anyio.fail_after(10):
        outcome = await reloader.reload_now()
    assert outcome is not None and not outcome.applied
    assert outcome.problems == (
        f"{tmp_path / 'prompts' / 'tool_selection.j2'}: not a regular file",
    )


def apply(tmp_path: Path, files: dict[str, bytes]) -> None:
    for name, content in files.items():
        path = tmp_path / name
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_bytes(content)


def start(tmp_path: Path) -> tuple[Path, MetaManager]:
    (tmp_path / "prompts").mkdir()
    (tmp_path / "prompts" / "tool_selection.j2").write_text(DEFAULT_SELECTION, encoding="utf-8")
    path = tmp_path / "Meta_tool_config.json"
    path.write_text(json.dumps({**GOOD, "prompts_dir": "prompts"}), encoding="utf-8")
    return path, MetaManager.from_config(path, tools=[shout], model=ScriptedModel([]))


@pytest.mark.parametrize("edit", list(BAD_EDITS))
async def test_a_bad_edit_is_reported_and_the_running_config_is_kept(
    tmp_path: Path, edit: str
) -> None:
    path, meta = start(tmp_path)
    reloader = ConfigReloader(meta, path)
    files, expected = BAD_EDITS[edit]
    apply(tmp_path, files)
    outcome = await reloader.reload_now()
    assert outcome is not None and not outcome.applied
    assert any(expected in problem for problem in outcome.problems), outcome.problems
    assert not any("unexpected" in problem for problem in outcome.problems)
    assert [t.name for t in meta.list_tools()] == ["text"]
    assert meta.config is not None and meta.config.prompts_dir == "prompts"


@pytest.mark.parametrize("edit", list(BAD_EDITS))
async def test_validate_reports_each_bad_edit_as_a_problem_of_the_file(
    tmp_path: Path, edit: str
) -> None:
    path, _ = start(tmp_path)
    files, expected = BAD_EDITS[edit]
    apply(tmp_path, files)
    report = await check_config(path, [shout], offline=True)
    assert any(expected in problem for problem in report.problems), report.problems
    assert not any("unexpected" in problem for problem in report.problems)


def test_a_template_that_raises_when_rendered_fails_at_load_naming_file_and_line(
    tmp_path: Path,
) -> None:
    (tmp_path / "tool_selection.j2").write_text("ok\n\n{{ {}['missing'] }}", encoding="utf-8")
    with pytest.raises(ConfigError) as caught:
        PromptSet.load(tmp_path)
    (problem,) = caught.value.problems
    assert problem.startswith(f"{tmp_path / 'tool_selection.j2'}:3: ")


def test_duplicate_keys_at_any_depth_are_config_errors_with_their_json_path(
    tmp_path: Path,
) -> None:
    text = """{
      "Files": {"description": "Read files.", "tools": ["shout"]},
      "Files": {"description": "Other.", "tools": ["shout"], "tools": ["x"]},
      "defaults": {"max_iterations": 2, "max_iterations": 3},
      "mcp_servers": {"s": {"command": "x", "env": {"A": "1", "A": "2"}}}
    }"""
    path = tmp_path / "Meta_tool_config.json"
    path.write_text(text, encoding="utf-8")
    with pytest.raises(ConfigError) as caught:
        MetaToolsConfig.load(path)
    assert caught.value.source == str(path)
    assert caught.value.problems == [
        '$."Files": duplicate key (only one may be given)',
        '$."Files".tools: duplicate key (only one may be given)',
        "$.defaults.max_iterations: duplicate key (only one may be given)",
        "$.mcp_servers.s.env.A: duplicate key (only one may be given)",
    ]


def test_the_same_key_in_different_objects_is_no_duplicate(tmp_path: Path) -> None:
    data: dict[str, Any] = {
        "A": {"description": "a", "tools": ["shout"]},
        "B": {"description": "a", "tools": ["shout"]},
    }
    path = tmp_path / "Meta_tool_config.json"
    path.write_text(json.dumps(data), encoding="utf-8")
    assert list(MetaToolsConfig.load(path).categories) == ["A", "B"]


def test_python_tools_that_exit_or_stop_at_import_are_config_problems_of_validate(
    tmp_path: Path,
) -> None:
    modules = {
        "exits.py": "import sys\nsys.exit(0)\n",
        "parses.py": "import argparse\n\nparser = argparse.ArgumentParser(prog='parses')\n"
        "parser.add_argument('--name', required=True)\nargs = parser.parse_args()\n",
        "interrupts.py": "raise KeyboardInterrupt\n",
        "quits.py": "raise SystemExit('bye')\n",
        "chatty.py": "from meta_tools import tool\n\nprint('hello from chatty')\n\n\n"
        '@tool\ndef chat(text: str) -> str:\n    """Echo a text."""\n    return text\n',
    }
    for name, code in modules.items():
        (tmp_path / name).write_text(code)
    specs = ["exits.py", "parses.py", "interrupts.py", "quits"]
    config = {"python_tools": [*specs, "chatty.py"], **GOOD, "Text": {"description": "Echo.",
              "tools": ["chat"]}}  # fmt: skip
    (tmp_path / "Meta_tool_config.json").write_text(json.dumps(config))
    done = cli(tmp_path, "validate", "--offline")
    assert (done.returncode, done.stdout) == (1, "")
    exits = "it exited (SystemExit: {}) while being imported; run a module's script code under"
    guard = ' `if __name__ == "__main__":`'
    assert [line for line in done.stderr.splitlines() if line.startswith("  - ")] == [
        f"  - $.python_tools[0] 'exits.py': cannot import {str(tmp_path / 'exits.py')!r}: "
        + exits.format(0) + guard,
        f"  - $.python_tools[1] 'parses.py': cannot import {str(tmp_path / 'parses.py')!r}: "
        + exits.format(2) + guard + "; the last line it printed: 'parses: error: the following"
        " arguments are required: --name'",
        f"  - $.python_tools[2] 'interrupts.py': cannot import"
        f" {str(tmp_path / 'interrupts.py')!r}: KeyboardInterrupt while it was being imported",
        "  - $.python_tools[3] 'quits': cannot import module 'quits': "
        + exits.format("'bye'") + guard,
    ]  # fmt: skip
    assert done.stderr.startswith("hello from chatty\n")  # printed by a module that imported
    assert "\nerror: Meta_tool_config.json: 4 problems\n" in done.stderr
    assert "usage:" not in done.stderr
    config["python_tools"] = ["chatty.py"]
    (tmp_path / "Meta_tool_config.json").write_text(json.dumps(config))
    listed = cli(tmp_path, "list", "--json")
    assert listed.returncode == 0, listed.stderr
    assert json.loads(listed.stdout)["categories"][0]["tools"] == ["chat"]  # stdout is the JSON
    assert listed.stderr == "hello from chatty\n"


def test_a_python_tools_file_that_is_missing_is_one_problem_of_the_library_too(
    tmp_path: Path,
) -> None:
    (tmp_path / "unit_tools.py").write_text("")
    config = {
        "python_tools": ["unit_tool.py"],
        "Units": {"description": "Convert units.", "tools": ["convert_units", "to_celsius"]},
        "Also": {"description": "More.", "tools": ["units_*"]},
    }
    path = tmp_path / "Meta_tool_config.json"
    path.write_text(json.dumps(config))
    with pytest.raises(ConfigError) as caught:
        MetaManager.from_config(path, model=ScriptedModel([]))
    (problem,) = caught.value.problems
    assert problem.startswith("$.python_tools[0] 'unit_tool.py': cannot import")
    assert "unit_tools.py" in problem  # did you mean
    assert problem.endswith("(the tool names it would provide are checked once it imports)")


def cli(folder: Path, *args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [*meta_tools_command(), *args],
        cwd=folder,
        env={**os.environ, "COLUMNS": "300", "NO_COLOR": "1"},
        capture_output=True,
        text=True,
        encoding="utf-8",
        timeout=120,
        check=False,
    )
