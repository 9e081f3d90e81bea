"""A new user's first hour, through the installed `meta-tools` command in a subprocess, with no key."""

from __future__ import annotations

import json
import os
import socket
import subprocess
from importlib.metadata import version
from pathlib import Path
from typing import Any

import anyio
import mcp_types
import pytest
from mcp import Client, StdioServerParameters

import meta_tools
from tests.cli.test_app import CATEGORIES, TOOLS_MODULE
from tests.cli_process import meta_tools_command
from tests.fakes.llm_server import (
    FakeLLMServer,
    Reply,
    openai_text_reply,
    openai_tool_reply,
    wire_tool_call,
)
from tests.mcp.conftest import SAMPLING_TOOLS, ScriptedHost

KEYS = ("OPENAI_API_KEY", "DASHSCOPE_API_KEY", "OPENAI_BASE_URL", "OPENAI_MODEL")
WAYS_OUT = (
    "  - an API key: export OPENAI_API_KEY=sk-...  (or DASHSCOPE_API_KEY with"
    ' "model": {"provider": "dashscope", "name": "qwen-plus"} in the config)\n'
    "  - a local OpenAI-compatible server (Ollama, vLLM, llama.cpp), no key needed:"
    ' "model": {"provider": "openai", "name": "llama3.2", "base_url":'
    ' "http://127.0.0.1:11434/v1"}\n'
    '  - the MCP host\'s own model: "model": {"provider": "sampling"}, served by'
    " `meta-tools serve` to a host that supports sampling with tools\n"
)


def no_key_env(**extra: str) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if k not in KEYS}
    return {**env, "COLUMNS": "200", "NO_COLOR": "1", **extra}


def cli(folder: Path, *args: str, **env: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [*meta_tools_command(), *args],
        cwd=folder,
        env=no_key_env(**env),
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )


def write(folder: Path, data: Any, name: str = "Meta_tool_config.json") -> Path:
    path = folder / name
    path.write_text(data if isinstance(data, str) else json.dumps(data, indent=2))
    return path


@pytest.fixture
def folder(tmp_path: Path) -> Path:
    (tmp_path / "cli_sample_tools.py").write_text(TOOLS_MODULE)
    return tmp_path


# -- 1. no key, no dead end ------------------------------------------------------------------


def test_run_without_any_model_prints_the_three_ways_out(folder: Path) -> None:
    write(folder, CATEGORIES)
    done = cli(folder, "run", "math", "-o", "Add", "-i", "2 3", "-t", "cli_sample_tools")
    assert (done.returncode, done.stdout) == (1, "")
    assert done.stderr == (
        "error: Meta_tool_config.json: cannot run a category: there is no `model` section, and"
        " the default model (openai 'gpt-4o-mini') needs the environment variable"
        " 'OPENAI_API_KEY', which is not set\n"
        + WAYS_OUT
        + "hint: add one of these to the config (or set the key), then run again;"
        " `meta-tools serve` needs none of them when its host supports sampling\n"
    )


def test_run_checks_the_category_name_before_the_model(folder: Path) -> None:
    write(folder, CATEGORIES)
    done = cli(folder, "run", "maht", "-o", "Add", "-i", "2 3")
    assert done.returncode == 1
    assert done.stderr == (
        "error: unknown category 'maht'; did you mean 'math'? the categories are:"
        " 'math' (Math), 'text' (Text)\n"
        "hint: `meta-tools list` shows the categories\n"
    )


def test_a_local_openai_compatible_server_needs_no_key(
    folder: Path, llm_server: FakeLLMServer
) -> None:
    model = {"provider": "openai", "name": "local", "base_url": llm_server.openai_base_url}
    write(folder, {"model": model, **CATEGORIES})
    llm_server.enqueue(
        Reply(body=openai_tool_reply(wire_tool_call("call_1", "add", {"a": 2, "b": 3}))),
        Reply(body=openai_text_reply("5")),
    )
    done = cli(folder, "run", "math", "-o", "Add", "-i", "2 3", "--json", "-t", "cli_sample_tools")
    assert done.returncode == 0, done.stderr
    assert json.loads(done.stdout)["summary"] == "5"


@pytest.mark.anyio
async def test_serve_without_model_or_key_uses_the_hosts_model_and_reports_its_version(
    folder: Path,
) -> None:
    write(folder, CATEGORIES)
    command, *args = meta_tools_command()
    parameters = StdioServerParameters(
        command=command,
        args=[*args, "serve", "--tools", "cli_sample_tools", "--no-reload"],
        env=no_key_env(),
        cwd=str(folder),
    )
    host = ScriptedHost([("add", {"a": 2, "b": 3}), "2 + 3 = 5"])
    task = {"objective": "Add", "exact_input": "2 3"}
    with anyio.fail_after(60):
        async with Client(
            parameters, sampling_callback=host, sampling_capabilities=SAMPLING_TOOLS
        ) as client:
            assert client.server_info.version == meta_tools.__version__
            result = await client.call_tool("math", task)
            assert result.is_error is False
            assert result.structured_content is not None
            assert result.structured_content["summary"] == "2 + 3 = 5"
            assert result.structured_content["executions"][0]["result"] == "5"
        async with Client(parameters) as plain:  # a host that cannot sample
            refused = await plain.call_tool("math", task)
    assert refused.is_error is True
    text = refused.content[0]
    assert isinstance(text, mcp_types.TextContent)
    assert "this host did not declare the 'sampling' capability. Ways out: (1) an API key" in (
        text.text
    )
    assert "(2) a local OpenAI-compatible server" in text.text


# -- 2. init, and commands without a config ---------------------------------------------------


def test_init_writes_a_starter_that_lists_and_validates_offline(tmp_path: Path) -> None:
    done = cli(tmp_path, "init")
    assert done.returncode == 0, done.stderr
    assert done.stdout.splitlines()[0] == "wrote Meta_tool_config.json"
    starter = json.loads((tmp_path / "Meta_tool_config.json").read_text())
    assert isinstance(starter["$comment"], list)
    assert "model" not in starter  # no key needed: serve samples, run says the ways out
    assert starter["mcp_servers"]["demo"]["cwd"] == "."  # the file tools see the config's folder
    listed = cli(tmp_path, "list", "--json")
    assert listed.returncode == 0, listed.stderr
    categories = json.loads(listed.stdout)["categories"]
    assert [c["name"] for c in categories] == [
        "math_units",
        "dates_time_zones",
        "text_analysis",
        "files",
    ]
    checked = cli(tmp_path, "validate")
    assert checked.returncode == 0, checked.stderr
    assert checked.stdout == "✓ Meta_tool_config.json: 4 categories, 15 tools, all found\n"
    again = cli(tmp_path, "init")
    assert again.returncode == 1
    assert "already exists; nothing was written" in again.stderr


def test_init_with_prompts_copies_the_templates_and_points_the_config_at_them(
    tmp_path: Path,
) -> None:
    done = cli(tmp_path, "init", "--prompts", "-c", "sub/my_config.json")
    assert done.returncode == 0, done.stderr
    config = json.loads((tmp_path / "sub" / "my_config.json").read_text())
    assert config["prompts_dir"] == "meta_tool_prompts"
    copied = sorted(p.name for p in (tmp_path / "sub" / "meta_tool_prompts").iterdir())
    assert copied == [
        "README.md",
        "max_iteration_summary.j2",
        "tool_result_evaluation.j2",
        "tool_selection.j2",
    ]
    checked = cli(tmp_path, "validate", "-c", "sub/my_config.json", "--offline")
    assert checked.returncode == 0, checked.stderr


def test_commands_without_a_config_point_at_init_and_c(tmp_path: Path) -> None:
    for command in (["list"], ["serve"], ["validate"], ["run", "x", "-o", "a", "-i", "b"]):
        done = cli(tmp_path, *command)
        assert done.returncode == 1
        assert done.stderr == (
            f"error: no config file 'Meta_tool_config.json' in this folder ({tmp_path})\n"
            "hint: create a starter config with `meta-tools init`, or pass one with -c PATH\n"
        ), command


# -- 3. Python tools from the config -----------------------------------------------------------

MINE = '''
from meta_tools import tool


@tool
def reverse(text: str) -> str:
    """Reverse a text."""
    return text[::-1]
'''
PACKED = '''
from meta_tools import ToolPack, tool


@tool
def double(n: int) -> int:
    """Double a number."""
    return 2 * n


pack = ToolPack([double], name="numbers")
'''


def test_python_tools_in_the_config_are_found_relative_to_the_config_file(
    tmp_path: Path,
) -> None:
    project = tmp_path / "project"
    (project / "tools").mkdir(parents=True)
    (project / "tools" / "mine.py").write_text(MINE)
    (project / "packed_tools.py").write_text(PACKED)
    write(
        project,
        {
            "python_tools": ["tools/mine.py", "packed_tools:pack"],
            "Text": {"description": "Texts.", "tools": ["reverse"]},
            "Numbers": {"description": "Numbers.", "tools": ["double"]},
        },
    )
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    done = cli(elsewhere, "list", "--json", "-c", str(project / "Meta_tool_config.json"))
    assert done.returncode == 0, done.stderr
    listing = json.loads(done.stdout)
    assert [c["tools"] for c in listing["categories"]] == [["reverse"], ["double"]]


def test_a_python_tools_entry_that_cannot_be_imported_says_where_it_was_looked_for(
    tmp_path: Path,
) -> None:
    write(
        tmp_path,
        {
            "python_tools": ["no_such_module", "missing/file.py"],
            "Text": {"description": "Texts.", "tools": ["reverse"]},
        },
    )
    done = cli(tmp_path, "validate")
    assert done.returncode == 1
    # The tools these would provide are missing too: that is not a problem of its own.
    checked = " (the tool names it would provide are checked once it imports)"
    assert done.stderr.splitlines()[1:] == [
        "error: Meta_tool_config.json: 2 problems",
        f"  - $.python_tools[0] 'no_such_module': cannot import module 'no_such_module': not"
        f" found in {str(tmp_path)!r} or the installed packages (a file needs its path, e.g."
        f" 'tools/no_such_module.py'){checked}",
        f"  - $.python_tools[1] 'missing/file.py': cannot import: no file"
        f" {str(tmp_path / 'missing' / 'file.py')!r}{checked}",
        "hint: fix them and run `meta-tools validate` again",
    ]


def test_tools_option_takes_a_file_with_an_attribute(tmp_path: Path) -> None:
    (tmp_path / "packed_tools.py").write_text(PACKED)
    write(tmp_path, {"Numbers": {"description": "Numbers.", "tools": ["double"]}})
    done = cli(tmp_path, "validate", "-t", "packed_tools.py:pack")
    assert done.returncode == 0, done.stderr
    assert done.stdout == "✓ Meta_tool_config.json: 1 category, 1 tool, all found\n"


# -- 4. every config problem in one pass -------------------------------------------------------


def test_validate_reports_schema_and_tool_problems_in_one_pass(folder: Path) -> None:
    write(
        folder,
        {
            "defaults": {"max_iterations": "many"},
            "Math": {"description": "Math.", "tools": ["ad", "add"], "max_iteration": 3},
            "Text": {"description": "Text.", "tools": ["shout", "zz_*"]},
            "Broken": {"tools": ["shout"]},
        },
        name="six.json",
    )
    done = cli(folder, "validate", "-c", "six.json", "-t", "cli_sample_tools")
    assert done.returncode == 1
    problems = [line for line in done.stderr.splitlines() if line.startswith("  - ")]
    assert problems == [
        "  - $.\"Math\".max_iteration: unknown key; did you mean 'max_iterations'? (valid keys:"
        " description, tool_usage_notes, tools, pinned, max_iterations, tool_timeout_s,"
        " max_tools_per_prompt, max_calls_per_round, max_tool_chars_per_prompt, abstain_below,"
        " cache)",
        '  - $."Broken".description: field required',
        "  - $.defaults.max_iterations: must be a whole number, not a string (got 'many')",
        "  - $.\"Math\".tools[0]: tool 'ad' is listed but no source provides it; did you mean"
        " 'add'?",
        "  - $.\"Text\".tools[1]: pattern 'zz_*' matches no tool",
    ]
    assert done.stderr.startswith("warning: there is no `model` section, and the default model")
    assert done.stderr.endswith("hint: fix them and run `meta-tools validate` again\n")


# -- 5. what the category LLM saw --------------------------------------------------------------


def test_a_trace_records_the_prompts_arguments_and_results_and_trace_shows_them(
    folder: Path, llm_server: FakeLLMServer
) -> None:
    model = {"provider": "openai", "name": "local", "base_url": llm_server.openai_base_url}
    math = {**CATEGORIES["Math"], "tool_usage_notes": "Sum with care; token ${SECRET_NOTE}."}
    write(folder, {"model": model, **CATEGORIES, "Math": math})
    llm_server.enqueue(
        Reply(body=openai_tool_reply(wire_tool_call("call_1", "add", {"a": 2, "b": 3}))),
        Reply(body=openai_text_reply("2 + 3 = 5")),
    )
    env = {"SECRET_NOTE": "hush-42"}
    done = cli(folder, "run", "math", "-o", "Add", "-i", "2 3", "--trace", "t.jsonl", "-t",
               "cli_sample_tools", **env)  # fmt: skip
    assert done.returncode == 0, done.stderr
    assert "✓ add(a=2, b=3)" in done.stdout  # the live view shows the arguments
    raw = (folder / "t.jsonl").read_text()
    assert "hush-42" not in raw
    calls = [json.loads(line) for line in raw.splitlines() if '"model_called"' in line]
    assert [c["phase"] for c in calls] == ["select", "evaluate"]
    system = calls[0]["messages"][0]
    assert system["role"] == "system"
    assert "Sum with care; token ***." in system["content"]
    assert calls[0]["reply"]["tool_calls"][0]["arguments"] == {"a": 2, "b": 3}
    assert [m["role"] for m in calls[1]["messages"]] == ["assistant", "tool", "user"]
    shown = cli(folder, "trace", "t.jsonl", "--full")
    assert shown.returncode == 0, shown.stderr
    out = shown.stdout
    assert "Math run " in out
    assert "LLM call 1 (select, round 0) · offered: add" in out
    assert "Sum with care; token ***." in out
    assert '→ add({"a": 2, "b": 3})' in out
    assert '✓ tool add({"a": 2, "b": 3})' in out
    assert "LLM call 2 (evaluate, round 1)" in out
    assert "2 + 3 = 5" in out
    assert "■ success after 1 round, 2 LLM calls" in out
    assert "hush-42" not in out


# -- 7. small things ---------------------------------------------------------------------------


def test_version_comes_from_the_package_metadata(tmp_path: Path) -> None:
    assert meta_tools.__version__ == version("meta-tools")
    for flag in ("--version", "-V"):
        done = cli(tmp_path, flag)
        assert (done.returncode, done.stdout) == (0, f"meta-tools {meta_tools.__version__}\n")


def test_debug_and_log_level_work_after_the_command_too(folder: Path) -> None:
    write(folder, {**CATEGORIES, "Math": {"description": "x", "tools": ["nope"]}})
    done = cli(folder, "list", "-t", "cli_sample_tools", "--debug")
    assert done.returncode == 1
    assert "Traceback (most recent call last)" in done.stderr
    assert "meta_tools.exceptions.ConfigError" in done.stderr
    wrong = cli(folder, "list", "--log-level", "loud")
    assert wrong.returncode == 1
    assert wrong.stderr.startswith(
        "error: --log-level must be one of debug, info, warning, error, not 'loud'"
    )


def test_help_shows_no_type_noise(tmp_path: Path) -> None:
    for command in ([], ["run"], ["serve"], ["validate"]):
        done = cli(tmp_path, *command, "--help")
        assert done.returncode == 0
        assert "<bool>" not in done.stdout
        assert "--help" in done.stdout
    root = cli(tmp_path, "--help").stdout
    for name in ("init", "trace", "--version", "--log-level", "--debug"):
        assert name in root


def test_a_port_in_use_is_named(folder: Path) -> None:
    write(folder, {"model": {"provider": "sampling"}, **CATEGORIES})
    with socket.socket() as taken:
        taken.bind(("127.0.0.1", 0))
        taken.listen(1)
        port = taken.getsockname()[1]
        done = cli(folder, "serve", "--transport", "http", "--port", str(port), "--no-reload",
                   "-t", "cli_sample_tools")  # fmt: skip
    assert done.returncode == 1
    assert done.stderr.splitlines()[-2:] == [
        f"error: cannot listen on 127.0.0.1:{port}: Address already in use",
        "hint: another process uses that port: pass another --port, or 0 for a free one",
    ]


@pytest.mark.anyio
async def test_the_readme_scripted_model_example_runs_on_the_repo_config(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    from meta_tools import MetaManager
    from meta_tools.llm import AssistantTurn, ScriptedModel, ToolCall

    monkeypatch.chdir(Path(__file__).parents[2])
    arguments = {"value": 42.195, "from_unit": "km", "to_unit": "mi"}
    model = ScriptedModel(
        [
            AssistantTurn(tool_calls=[ToolCall(name="convert_units", arguments=arguments)]),
            AssistantTurn(text="42.195 km is 26.22 miles."),
        ]
    )
    with anyio.fail_after(60):
        async with MetaManager.from_config("Meta_tool_config.json", model=model) as meta:
            result = await meta.call_tool(
                "math_units", {"objective": "Convert", "exact_input": "42.195 km"}
            )
    assert (result.status, result.summary) == ("success", "42.195 km is 26.22 miles.")
    assert json.loads(result.executions[0].result or "")["result"] == pytest.approx(26.2188, 1e-4)


def test_serve_with_a_model_section_whose_key_is_unset_names_the_ways_out(folder: Path) -> None:
    write(folder, {"model": {"name": "gpt-4o", "api_key_env": "MY_UNSET_KEY"}, **CATEGORIES})
    done = cli(folder, "serve", "-t", "cli_sample_tools")
    assert (done.returncode, done.stdout) == (1, "")
    assert done.stderr == (
        "error: Meta_tool_config.json: cannot run a category: the `model` section's key"
        " variable 'MY_UNSET_KEY' is not set\n" + WAYS_OUT + "hint: add one of these to the"
        " config (or set the key), then run again\n"
    )
