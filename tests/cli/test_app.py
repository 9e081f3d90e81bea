"""The `meta-tools` command: run (as a real subprocess), validate, list, schema, errors."""

import json
import os
import re
import subprocess
import sys
from pathlib import Path
from typing import Any

import anyio
import pytest
from mcp import Client, MCPError, StdioServerParameters
from typer.testing import CliRunner

from meta_tools.cli.app import app
from meta_tools.config import MetaToolsConfig
from tests.cli_process import meta_tools_command
from tests.fakes.llm_server import (
    FakeLLMServer,
    Reply,
    openai_text_reply,
    openai_tool_reply,
    wire_tool_call,
)

TOOLS_MODULE = (Path(__file__).parents[1] / "faults" / "serve_tools.py").read_text()
"""`add` and `shout`: the fault matrix's tools module, copied into each test's folder."""

CATEGORIES = {
    "Math": {"description": "Arithmetic on integers.", "tools": ["add"]},
    "Text": {"description": "Transform text.", "tools": ["shout"]},
}


@pytest.fixture
def workdir(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """A folder with a tools module and a config over it; the working directory of the test."""
    (tmp_path / "cli_sample_tools.py").write_text(TOOLS_MODULE)
    monkeypatch.chdir(tmp_path)
    return tmp_path


def write_config(folder: Path, data: dict[str, Any], name: str = "Meta_tool_config.json") -> Path:
    path = folder / name
    path.write_text(json.dumps(data, indent=2))
    return path


def fake_model(server: FakeLLMServer) -> dict[str, Any]:
    return {
        "provider": "openai",
        "name": "fake-model",
        "base_url": server.openai_base_url,
        "api_key_env": "FAKE_LLM_KEY",
        "max_retries": 0,
    }


def invoke(*args: str, env: dict[str, str] | None = None) -> Any:
    runner = CliRunner()
    return runner.invoke(app, list(args), env={"COLUMNS": "120", **(env or {})})


def timeless(text: str) -> str:
    """Replace durations and run ids, which change from run to run."""
    text = re.sub(r"\d+\.\d\d s", "T s", text)
    return re.sub(r"run [0-9a-f]{16}", "run RUN", text)


def test_run_in_a_terminal_prints_each_step_as_it_happens_then_the_result(
    workdir: Path, llm_server: FakeLLMServer
) -> None:
    write_config(workdir, {"model": fake_model(llm_server), **CATEGORIES})
    llm_server.enqueue(
        Reply(body=openai_tool_reply(wire_tool_call("call_1", "add", {"a": 2, "b": 3}))),
        Reply(body=openai_text_reply("2 + 3 = 5", usage=(30, 6))),
    )
    env = {**os.environ, "FAKE_LLM_KEY": "sk-test", "COLUMNS": "80", "NO_COLOR": "1"}
    done = subprocess.run(
        [
            *meta_tools_command(),
            *("run", "math", "--objective", "Add two numbers"),
            *("--input", "2 and 3", "--tools", "cli_sample_tools"),
        ],
        capture_output=True,
        text=True,
        env=env,
        cwd=workdir,
        timeout=60,
    )
    assert (done.returncode, done.stderr) == (0, "")
    assert timeless(done.stdout) == (
        "▶ Math run RUN Add two numbers\n"
        "  • selected add (T s, 10+5 tokens)\n"
        "  ✓ add(a=2, b=3) (T s)\n"
        "  • evaluated round 1: done (T s, 30+6 tokens)\n"
        "■ success after 1 round, 2 LLM calls, 40+11 tokens, T s\n"
        "╭─ success · Math ─────────────────────────────────────────────────────────────╮\n"
        "│ 2 + 3 = 5                                                                    │\n"
        "╰──────────────────────────────────────────────────────────────────────────────╯\n"
        " round ┃ tool ┃ ok ┃ time   ┃ result or error \n"
        "━━━━━━━╇━━━━━━╇━━━━╇━━━━━━━━╇━━━━━━━━━━━━━━━━━\n"
        " 1     │ add  │ ✓  │ T s │ 5               \n"
    )  # the totals once, as the run's last step
    assert llm_server.requests[0].headers["authorization"] == "Bearer sk-test"
    assert [t["function"]["name"] for t in llm_server.requests[0].body["tools"]] == [
        "add",
        "request_input",
        "decline",
    ]


def test_run_with_json_prints_only_the_category_result(
    workdir: Path, llm_server: FakeLLMServer
) -> None:
    write_config(workdir, {"model": fake_model(llm_server), **CATEGORIES})
    llm_server.enqueue(
        Reply(body=openai_tool_reply(wire_tool_call("call_1", "shout", {"text": "hi"}))),
        Reply(body=openai_text_reply("HI")),
    )
    done = invoke(
        "run",
        "Text",
        "-o",
        "Shout it",
        "-i",
        "hi",
        "--json",
        "-t",
        "cli_sample_tools",
        env={"FAKE_LLM_KEY": "k"},
    )
    assert done.exit_code == 0, done.output
    result = json.loads(done.stdout)
    assert result["usage"].pop("wall_s") >= 0
    assert result["executions"][0].pop("duration_s") >= 0
    assert result == {
        "category": "Text",
        "status": "success",
        "summary": "HI",
        "executions": [
            {
                "tool": "shout",
                "arguments": {"text": "hi"},
                "ok": True,
                "result": "HI",
                "round": 1,
                "cached": False,
            }
        ],
        "iterations": 1,
        "usage": {
            "llm_calls": 2,
            "prompt_tokens": 20,
            "completion_tokens": 10,
            "cache_hits": 0,
            "cache_misses": 0,
            "recovered_calls": 0,
        },
    }


def test_run_for_agent_prints_what_the_main_agents_llm_reads_of_the_result(
    workdir: Path, llm_server: FakeLLMServer
) -> None:
    write_config(workdir, {"model": fake_model(llm_server), **CATEGORIES})
    llm_server.enqueue(
        Reply(body=openai_tool_reply(wire_tool_call("call_1", "add", {"a": 2, "b": 3}))),
        Reply(body=openai_text_reply("2 + 3 = 5")),
    )
    task = ("run", "Math", "-o", "Add", "-i", "2 3", "-t", "cli_sample_tools")
    done = invoke(*task, "--for-agent", env={"FAKE_LLM_KEY": "k"})
    assert done.exit_code == 0, done.output
    # No rounds, timings, cache flags or usage (`--json` has them all).
    assert json.loads(done.stdout) == {
        "category": "Math",
        "status": "success",
        "summary": "2 + 3 = 5",
        "executions": [{"tool": "add", "arguments": {"a": 2, "b": 3}, "result": "5"}],
    }
    both = invoke(*task, "--for-agent", "--json", env={"FAKE_LLM_KEY": "k"})
    assert (both.exit_code, both.stdout) == (1, "")
    assert "error: --json and --for-agent print different views of the result" in both.stderr


def test_run_without_a_model_section_uses_the_openai_environment_variables(
    workdir: Path, llm_server: FakeLLMServer
) -> None:
    # A small model's call written as text: the profile its name calls for (small) reads
    # it, and hands the short result up without a second model call.
    write_config(workdir, CATEGORIES)
    llm_server.enqueue(
        Reply(body=openai_text_reply('{"name": "shout", "arguments": {"text": "hi"}}')),
    )
    env = {
        "OPENAI_API_KEY": "k",
        "OPENAI_MODEL": "qwen2.5-coder-1.5b",
        "OPENAI_BASE_URL": llm_server.openai_base_url,
    }
    done = invoke(
        "run", "Text", "-o", "Shout", "-i", "hi", "--json", "-t", "cli_sample_tools", env=env
    )
    assert done.exit_code == 0, done.output
    result = json.loads(done.stdout)
    assert (result["summary"], result["usage"]["recovered_calls"]) == ("shout: HI", 1)
    assert [r.body["model"] for r in llm_server.requests] == ["qwen2.5-coder-1.5b"]


def test_validate_a_good_config_exits_zero_and_prints_its_warnings(workdir: Path) -> None:
    config = {"model": {"api_key_env": "SURELY_UNSET_KEY"}, **CATEGORIES}
    write_config(workdir, config)
    done = invoke("validate", "--tools", "cli_sample_tools")
    assert (done.exit_code, done.stdout) == (
        0,
        "✓ Meta_tool_config.json: 2 categories, 2 tools, all found\n",
    )
    assert done.stderr == (
        "warning: $.model: the `model` section's key variable 'SURELY_UNSET_KEY' is not set;"
        " `run` and "
        "`serve` need it (`list` and `validate` do not)\n"
        "warning: grouping: 'Math' has a single tool: the main agent pays a category tool for"
        " it; merge it into a related category\n"
        "warning: grouping: 'Text' has a single tool: the main agent pays a category tool for"
        " it; merge it into a related category\n"
        "warning: grouping: the description of 'Text' says little that its name and tool names"
        " do not: say what the tools are for and when to pick this category\n"
    )


def test_validate_a_broken_config_lists_every_problem_and_exits_one(workdir: Path) -> None:
    broken = {
        "model": {"provider": "openai", "timeout_s": -1},
        "Math": {"description": "", "tools": ["add"], "max_iterations": 0},
        "Text": {"description": "Transform text.", "tools": []},
        "defaults": {"max_iterations": "many"},
    }
    path = write_config(workdir, broken, "broken.json")
    done = invoke("validate", str(path))
    assert (done.exit_code, done.stdout) == (1, "")
    assert done.stderr == (
        f"error: {path}: 5 problems\n"
        """  - $."Math".description: must not be empty\n"""
        """  - $."Math".max_iterations: must be at least 1 (got 0)\n"""
        """  - $."Text".tools: list at least one tool\n"""
        "  - $.model.timeout_s: must be more than 0 (got -1)\n"
        "  - $.defaults.max_iterations: must be a whole number, not a string (got 'many')\n"
        "hint: fix them and run `meta-tools validate` again\n"
    )


def test_validate_reports_unknown_tool_names_with_close_matches(workdir: Path) -> None:
    config = {**CATEGORIES, "Text": {"description": "Text.", "tools": ["shuot", "upper_*"]}}
    write_config(workdir, {"model": {"api_key_env": "HOME"}, **config})
    done = invoke("validate", "-t", "cli_sample_tools")
    assert done.exit_code == 1
    assert done.stderr == (
        "error: Meta_tool_config.json: 2 problems\n"
        """  - $."Text".tools[0]: tool 'shuot' is listed but no source provides it; did you mean 'shout'?\n"""
        """  - $."Text".tools[1]: pattern 'upper_*' matches no tool\n"""
        "hint: fix them and run `meta-tools validate` again\n"
    )


def test_schema_prints_the_json_schema_of_the_config_file() -> None:
    done = invoke("schema")
    assert done.exit_code == 0
    printed = json.loads(done.stdout)
    assert printed == {
        "$schema": "https://json-schema.org/draft/2020-12/schema",
        **MetaToolsConfig.model_json_schema(),
    }
    assert printed["additionalProperties"] == {"$ref": "#/$defs/CategoryConfig"}


def test_list_shows_each_category_its_tools_and_the_context_sizes(workdir: Path) -> None:
    write_config(workdir, CATEGORIES)
    done = invoke("list", "--json", "--tools", "cli_sample_tools")
    assert done.exit_code == 0, done.output
    listing = json.loads(done.stdout)
    main_chars = len(json.dumps(listing_openai_tools(workdir)))
    assert listing["categories"] == [
        {
            "name": "math",
            "display_name": "Math",
            "description": "Arithmetic on integers.",
            "tools": ["add"],
            "unmatched": [],
        },
        {
            "name": "text",
            "display_name": "Text",
            "description": "Transform text.",
            "tools": ["shout"],
            "unmatched": [],
        },
    ]
    assert listing["main_agent"]["tools"] == 2
    assert listing["main_agent"]["chars"] == main_chars
    assert listing["flat"]["tools"] == 2
    text = invoke("list", "--tools", "cli_sample_tools").stdout
    assert " math      │ Math     │ add   " in text
    assert f"The main agent sees 2 category tools: {main_chars:,} characters" in text


def listing_openai_tools(folder: Path) -> list[dict[str, Any]]:
    from meta_tools.cli.checks import NoModel
    from meta_tools.router.manager import MetaManager

    sys.path.insert(0, str(folder))
    try:
        import cli_sample_tools  # type: ignore[import-not-found]
    finally:
        sys.path.remove(str(folder))
    meta = MetaManager.from_config(
        folder / "Meta_tool_config.json",
        tools=[cli_sample_tools.add, cli_sample_tools.shout],
        model=NoModel(),
    )
    return meta.openai_tools()


def test_errors_are_one_line_and_a_hint_and_debug_shows_the_traceback(workdir: Path) -> None:
    done = invoke("list", "--config", "missing.json")
    assert (done.exit_code, done.stdout) == (1, "")
    assert done.stderr == (
        "error: no config file 'missing.json' found\n"
        "hint: create a starter config with `meta-tools init`, or pass one with -c PATH\n"
    )
    write_config(workdir, CATEGORIES)
    done = invoke(
        "run", "nope", "-o", "x", "-i", "y", "-t", "cli_sample_tools", env={"OPENAI_API_KEY": "k"}
    )
    assert done.exit_code == 1
    assert done.stderr == (
        "error: unknown category 'nope'; the categories are: 'math' (Math), 'text' (Text)\n"
        "hint: `meta-tools list` shows the categories\n"
    )
    write_config(workdir, {**CATEGORIES, "Math": {"description": "x", "tools": ["nope"]}})
    done = invoke("--debug", "list", "-t", "cli_sample_tools")
    assert done.exit_code == 1
    assert type(done.exception).__name__ == "ConfigError"


@pytest.mark.anyio
async def test_serve_over_stdio_keeps_stdout_for_the_protocol(workdir: Path) -> None:
    write_config(workdir, {"model": {"api_key_env": "FAKE_LLM_KEY"}, **CATEGORIES})
    command, *args = meta_tools_command()
    parameters = StdioServerParameters(
        command=command,
        args=[*args, "serve", "--tools", "cli_sample_tools"],
        env={**os.environ, "FAKE_LLM_KEY": "sk-test"},
        cwd=str(workdir),
    )
    with anyio.fail_after(60):
        async with Client(parameters) as client:
            listed = await client.list_tools()
            assert [t.name for t in listed.tools] == ["math", "text"]
            with pytest.raises(MCPError) as refused:  # an unknown tool: a protocol error
                await client.call_tool("nope", {"objective": "x", "exact_input": "y"})
            assert refused.value.code == -32602


def test_validate_reports_an_mcp_server_that_cannot_start_and_the_tools_it_left_unchecked(
    workdir: Path,
) -> None:
    server = {"transport": "stdio", "command": "no-such-command-here", "connect": "first_use"}
    config = {"mcp_servers": {"calc": server}, "model": {"api_key_env": "HOME"}, **CATEGORIES}
    write_config(workdir, {**config, "Math": {"description": "Math.", "tools": ["add", "mul"]}})
    done = invoke("validate", "--tools", "cli_sample_tools")
    assert (done.exit_code, done.stdout) == (1, "")
    assert done.stderr == (
        "error: Meta_tool_config.json: 1 problem\n"
        "  - $.mcp_servers.calc: MCP server 'calc' could not be started: the command was not"
        " found (no-such-command-here); tools not checked: mul\n"
        "hint: fix it and run `meta-tools validate` again\n"
    )


def test_the_version_is_printed_without_loading_the_commands_or_the_sdks() -> None:
    code = (
        "import sys\nsys.argv = ['meta-tools', '--version']\n"
        "from meta_tools.cli import main\nmain()\n"
        "heavy = ('mcp', 'openai', 'dashscope', 'typer', 'meta_tools.router')\n"
        "print([name for name in heavy if name in sys.modules])\n"
    )
    root = Path(__file__).resolve().parents[2]
    done = subprocess.run(
        [sys.executable, "-c", code], cwd=root, capture_output=True, text=True, check=True
    )
    from meta_tools import __version__

    assert done.stdout == f"meta-tools {__version__}\n[]\n"
