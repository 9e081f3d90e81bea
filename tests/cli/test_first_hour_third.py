"""A new user's first hour, third pass (issue 50): nothing passes silently, a chat command,
the command line in one form. Each runs the real `meta-tools` command, with no key."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from tests.cli.test_app import CATEGORIES, TOOLS_MODULE
from tests.cli.test_first_hour import cli, no_key_env, write
from tests.cli_process import meta_tools_command
from tests.fakes.llm_server import (
    FakeLLMServer,
    Reply,
    openai_text_reply,
    openai_tool_reply,
    wire_tool_call,
)

# A server whose command starts and dies at once, as `npx` does on a misspelled package.
NPM_404 = "import sys; sys.stderr.write('npm ERR! 404 Not Found\\n'); sys.exit(1)"


def broken_server(prefix: str | None = "fs") -> dict[str, Any]:
    server: dict[str, Any] = {"command": sys.executable, "args": ["-c", NPM_404]}
    return server | ({"prefix": prefix} if prefix else {})


@pytest.fixture
def folder(tmp_path: Path) -> Path:
    (tmp_path / "cli_sample_tools.py").write_text(TOOLS_MODULE)
    return tmp_path


# -- 1. a server that cannot start never passes ------------------------------------------------


def test_validate_fails_on_a_server_that_cannot_start_when_only_a_pattern_names_its_tools(
    folder: Path,
) -> None:
    write(
        folder,
        {
            "mcp_servers": {"fs": broken_server()},
            "python_tools": ["cli_sample_tools.py"],
            "Files": {"description": "Read and write files.", "tools": ["fs_*"]},
            **CATEGORIES,
        },
    )
    done = cli(folder, "validate")
    assert (done.returncode, done.stdout) == (1, "")
    assert (
        "error: Meta_tool_config.json: 2 problems\n"
        "  - $.mcp_servers.fs: MCP server 'fs' could not be started: the server closed the"
        " connection during the handshake (did it exit?); its stderr ended with:\n"
        "npm ERR! 404 Not Found\n"
        "  - $.\"Files\".tools[0]: pattern 'fs_*' matches no tool: MCP server 'fs' could not"
        " be started\n"
        "hint: fix them and run `meta-tools validate` again\n"
    ) in done.stderr


def test_list_says_beside_the_category_which_server_is_down_and_below_why(folder: Path) -> None:
    write(
        folder,
        {
            "mcp_servers": {"fs": broken_server()},
            "Files": {"description": "Read and write files.", "tools": ["fs_*"]},
        },
    )
    done = cli(folder, "list")
    assert done.returncode == 0, done.stderr
    row, reason = done.stdout.splitlines()[2:4]
    assert row.split() == ["files", "│", "Files", "│", "—"]
    assert reason.split("│")[-1].strip() == (
        "'fs_*' matches no tool: MCP server 'fs' could not be started"
    )
    assert (
        "warning: MCP server 'fs' could not be started: the server closed the connection"
        " during the handshake (did it exit?); its stderr ended with:\nnpm ERR! 404 Not Found"
    ) in done.stdout
    as_json = cli(folder, "list", "--json")
    (files,) = json.loads(as_json.stdout)["categories"]
    assert files["unmatched"] == [
        {"pattern": "fs_*", "why": "MCP server 'fs' could not be started"}
    ]


# -- 5. an installed chat command --------------------------------------------------------------


def script_a_sum(server: FakeLLMServer) -> None:
    """The main agent calls Math; Math adds; the main agent answers from its result."""
    task = {"objective": "Add 2 and 3", "exact_input": "2 3"}
    server.enqueue(
        Reply(body=openai_tool_reply(wire_tool_call("call_m1", "math", task))),
        Reply(body=openai_tool_reply(wire_tool_call("call_c1", "add", {"a": 2, "b": 3}))),
        Reply(body=openai_text_reply("2 + 3 = 5")),
        Reply(body=openai_text_reply("It is 5.")),
    )


def chat(folder: Path, *args: str, stdin: str, **env: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [*meta_tools_command(), "chat", *args],
        cwd=folder,
        env=no_key_env(**env),
        input=stdin,
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )


def test_chat_talks_through_the_configs_model_and_shows_each_step_until_exit(
    folder: Path, llm_server: FakeLLMServer
) -> None:
    model = {"provider": "openai", "name": "local", "base_url": llm_server.openai_base_url}
    write(folder, {"model": model, "python_tools": ["cli_sample_tools.py"], **CATEGORIES})
    script_a_sum(llm_server)
    done = chat(folder, "--trace", "chat.jsonl", stdin="What is 2 + 3?\nexit\n")
    assert (done.returncode, done.stderr) == (0, "")
    lines = [line.rstrip() for line in done.stdout.splitlines()]
    assert lines[:3] == [
        f"Friday and the categories use the OpenAI-compatible model 'local' at"
        f" {llm_server.openai_base_url} (timeout 300 s, for a model on this machine).",
        "Guard profile 'capable' (local: nothing known says it is small).",
        "Friday's tools: math, text. Type 'exit' to leave.",
    ]
    # stdin is not echoed, so the first step follows the prompt on its line
    assert "you>   Friday → math(objective='Add 2 and 3', exact_input='2 3')" in lines
    assert any(line.startswith("    [Math] ✓ add(a=2, b=3) (") for line in lines)
    assert "  Friday ← math: success: 2 + 3 = 5" in lines
    assert "Friday> It is 5." in lines
    assert lines[-1] == "you>"
    main, select, _, answer = (r.body for r in llm_server.requests)
    assert [t["function"]["name"] for t in main["tools"]] == ["math", "text"]
    assert [t["function"]["name"] for t in select["tools"]] == ["add", "request_input", "decline"]
    assert json.loads(answer["messages"][-1]["content"])["summary"] == "2 + 3 = 5"
    events = [
        json.loads(line)["event"] for line in (folder / "chat.jsonl").read_text().splitlines()
    ]
    # The main agent's turn, with the category run inside it.
    assert events == [
        "turn_started",
        "agent_replied",
        "category_asked",
        "run_started",
        "model_called",
        "tools_selected",
        "tool_finished",
        "model_called",
        "evaluated",
        "run_finished",
        "category_answered",
        "agent_replied",
        "turn_finished",
    ]


def test_chat_without_a_model_section_takes_the_environments_local_server(
    folder: Path, llm_server: FakeLLMServer
) -> None:
    write(folder, CATEGORIES)
    script_a_sum(llm_server)
    done = chat(
        folder,
        "-t",
        "cli_sample_tools",
        stdin="What is 2 + 3?\n",  # then the end of input, as Ctrl-D
        OPENAI_BASE_URL=llm_server.openai_base_url,
        OPENAI_MODEL="from-env",
    )
    assert (done.returncode, done.stderr) == (0, "")
    assert done.stdout.startswith(
        f"Friday and the categories use the OpenAI-compatible model 'from-env' at"
        f" {llm_server.openai_base_url} (timeout 300 s, for a model on this machine).\n"
    )
    assert "Friday> It is 5." in done.stdout
    assert {r.body["model"] for r in llm_server.requests} == {"from-env"}


def test_chat_without_any_model_prints_the_ways_out(folder: Path) -> None:
    write(folder, CATEGORIES)
    done = chat(folder, stdin="hello\n")
    assert (done.returncode, done.stdout) == (1, "")
    assert done.stderr.startswith(
        "error: Meta_tool_config.json: cannot run a category: there is no `model` section"
    )
    assert "  - a local OpenAI-compatible server (Ollama, vLLM, llama.cpp), no key needed" in (
        done.stderr
    )


# -- 3. validate --offline checks the names that need no server ----------------------------------


def test_validate_offline_reports_a_misspelled_python_tool_without_starting_a_server(
    folder: Path,
) -> None:
    math = {"description": "Arithmetic on integers.", "tools": ["ad", "dm_calculate"]}
    write(
        folder,
        {
            "python_tools": ["cli_sample_tools.py"],
            # A server that could not start: --offline must not try.
            "mcp_servers": {"dm": broken_server(prefix="dm")},
            "Math": math,
            "Text": {"description": "Transform text.", "tools": ["shout"]},
        },
    )
    done = cli(folder, "validate", "--offline")
    assert (done.returncode, done.stdout) == (1, "")
    assert done.stderr.endswith(
        "error: Meta_tool_config.json: 1 problem\n"
        "  - $.\"Math\".tools[0]: tool 'ad' is listed but no source provides it;"
        " did you mean 'add'?\n"
        "hint: fix it and run `meta-tools validate` again\n"
    )
    math["tools"] = ["add", "dm_calculate"]
    write(
        folder,
        {
            "python_tools": ["cli_sample_tools.py"],
            "mcp_servers": {"dm": broken_server(prefix="dm")},
            "Math": math,
            "Text": {"description": "Transform text.", "tools": ["shout"]},
        },
    )
    done = cli(folder, "validate", "--offline")
    assert done.returncode == 0, done.stderr
    assert done.stdout == (
        "✓ Meta_tool_config.json: 2 categories, Python tool names checked (MCP servers' not)\n"
    )
    assert (
        "warning: the tool names of MCP server 'dm' were not checked: --offline does not"
        " start them\n"
    ) in done.stderr


def test_validate_offline_warns_of_a_name_close_to_a_python_tool_that_only_a_server_could_provide(
    folder: Path,
) -> None:
    write(
        folder,
        {
            "python_tools": ["cli_sample_tools.py"],
            "mcp_servers": {
                "any": broken_server(prefix=None)
            },  # no prefix: it may provide any name
            "Math": {"description": "Arithmetic on integers.", "tools": ["ad"]},
            "Text": {"description": "Transform text.", "tools": ["shout"]},
        },
    )
    done = cli(folder, "validate", "--offline")
    assert done.returncode == 0, done.stderr
    assert (
        "warning: $.\"Math\".tools[0]: tool 'ad' is no Python tool; did you mean 'add'? (an MCP"
        " server without a prefix, not started under --offline, may provide it)\n"
    ) in done.stderr


# -- 4. poorly described tools are named ------------------------------------------------------

POOR_TOOLS = '''
from meta_tools import tool


@tool
def nodoc(x: int) -> int:
    return x


@tool
def anything(**kwargs: str) -> str:
    """Do whatever the keyword arguments say."""
    return ""


@tool
def convert(value: float) -> float:
    """Convert a value from miles to kilometres."""
    return value * 1.609344
'''


def test_validate_and_list_warn_of_tools_without_a_docstring_or_taking_kwargs(
    folder: Path,
) -> None:
    (folder / "poor_tools.py").write_text(POOR_TOOLS)
    tools = ["nodoc", "anything", "convert"]
    misc = {"description": "Unit conversion and other odd jobs.", "tools": tools}
    write(folder, {"python_tools": ["poor_tools.py"], "Misc": misc})
    warnings = [
        "warning: 1 tool is described by its name alone, which hurts routing and tool choice:"
        " 'nodoc'; write a docstring (a Python tool) or a description",
        "warning: 1 tool takes **kwargs or *args, which its schema cannot describe, so the"
        " model is offered no parameter for them: 'anything'; name the parameters",
    ]
    checked = cli(folder, "validate")
    assert checked.returncode == 0, checked.stderr
    assert [
        line for line in checked.stderr.splitlines() if line.startswith("warning: 1 tool")
    ] == warnings
    listed = cli(folder, "list")
    assert listed.returncode == 0, listed.stderr
    assert [
        line for line in listed.stdout.splitlines() if line.startswith("warning: 1 tool")
    ] == warnings


# -- 12. the config file in one form everywhere ------------------------------------------------


@pytest.mark.parametrize("command", ["list", "validate", "group", "init"])
def test_every_command_without_another_argument_takes_the_config_file_positionally(
    folder: Path, command: str
) -> None:
    config = {"python_tools": ["cli_sample_tools.py"], **CATEGORIES}
    write(folder, config, name="good.json")
    if command == "init":
        done = cli(folder, "init", "new.json")
        assert done.returncode == 0, done.stderr
        assert done.stdout.startswith("wrote new.json\n")
        return
    positional = cli(folder, command, "good.json")
    option = cli(folder, command, "-c", "good.json")
    assert positional.returncode == 0, positional.stderr
    assert (positional.stdout, positional.stderr) == (option.stdout, option.stderr)


@pytest.mark.parametrize("command", ["list", "validate", "group", "chat", "demo"])
def test_two_different_config_files_are_refused_in_one_line(folder: Path, command: str) -> None:
    config = {"python_tools": ["cli_sample_tools.py"], **CATEGORIES}
    write(folder, config, name="good.json")
    write(folder, config, name="other.json")
    done = cli(folder, command, "good.json", "-c", "other.json")
    assert done.returncode == 1
    assert done.stderr.splitlines()[0] == (
        "error: two config files given: 'good.json' and -c 'other.json'"
    )
    # The same file twice is one config.
    if command in ("list", "validate"):
        assert cli(folder, command, "good.json", "-c", "good.json").returncode == 0


def test_chat_and_serve_take_the_config_file_positionally_too(folder: Path) -> None:
    write(folder, CATEGORIES, name="good.json")
    # No model: both stop at the same first check, which reads the file named.
    for command in ("chat", "serve"):
        done = cli(folder, command, "missing.json")
        assert (done.returncode, done.stderr) == (
            1,
            "error: no config file 'missing.json' found\n"
            "hint: create a starter config with `meta-tools init`, or pass one with -c PATH\n",
        )


# -- 13. init --prompts beside a config of one's own --------------------------------------------


def test_init_prompts_beside_an_existing_config_writes_the_templates_and_keeps_the_config(
    folder: Path,
) -> None:
    mine = write(folder, CATEGORIES)
    before = mine.read_text()
    done = cli(folder, "init", "--prompts")
    assert (done.returncode, done.stderr) == (0, "")
    assert done.stdout.splitlines()[:3] == [
        "wrote meta_tool_prompts/",
        "kept Meta_tool_config.json as it is (--force would replace it with the starter)",
        'to use the templates, add "prompts_dir": "meta_tool_prompts" to Meta_tool_config.json',
    ]
    assert mine.read_text() == before
    assert sorted(p.name for p in (folder / "meta_tool_prompts").iterdir()) == [
        "README.md",
        "max_iteration_summary.j2",
        "tool_result_evaluation.j2",
        "tool_selection.j2",
    ]
    again = cli(folder, "init", "--prompts")
    assert again.returncode == 1
    assert "'meta_tool_prompts' already exists; nothing was written" in again.stderr


# -- 14. small things ----------------------------------------------------------------------------


def test_python_dash_m_meta_tools_runs_the_command(folder: Path) -> None:
    done = subprocess.run(
        [sys.executable, "-m", "meta_tools", "--help"],
        cwd=folder,
        env=no_key_env(),
        capture_output=True,
        text=True,
        timeout=60,
        check=False,
    )
    assert done.returncode == 0, done.stderr
    assert done.stdout.startswith("Usage: meta-tools [OPTIONS] COMMAND [ARGS]...\n")
    assert "  chat " in done.stdout


COMMANDS = ("serve", "run", "prompt", "list", "validate", "init", "trace", "demo", "chat", "group")


def test_help_placeholders_are_upper_case_words_and_choices_are_listed(folder: Path) -> None:
    helps = {c: cli(folder, c, "--help").stdout for c in COMMANDS}
    assert "--transport [stdio|http]" in helps["serve"]
    assert "--by [topic|server]" in helps["group"]
    assert "-o, --objective TEXT" in helps["run"]
    assert "--run ID" in helps["trace"]
    # Arguments as options are: one upper-case word (typer wrote `{CATEGORY}`, `FILE <path>`).
    assert helps["run"].splitlines()[0] == "Usage: meta-tools run [OPTIONS] CATEGORY"
    assert "Arguments:\n  CATEGORY  The category" in helps["run"]
    assert helps["trace"].splitlines()[0] == "Usage: meta-tools trace [OPTIONS] FILE"
    assert helps["list"].splitlines()[0] == "Usage: meta-tools list [OPTIONS] [FILE]"
    assert "Arguments:\n  FILE  The config file (the same as -c)." in helps["list"]
    for command, text in helps.items():
        names = [line.split("  ")[0] for line in text.splitlines() if line.startswith("  ")]
        assert not [n for n in names if "<" in n or "{" in n], (command, text)
        assert not [c for c in "<>{}" if c in text.splitlines()[0]], (command, text)


def test_a_misspelled_python_tools_file_gets_did_you_mean_and_no_knock_on_problems(
    folder: Path,
) -> None:
    (folder / "unit_tools.py").write_text(TOOLS_MODULE)
    write(folder, {"python_tools": ["unit_tool.py"], **CATEGORIES})
    done = cli(folder, "validate")
    assert (done.returncode, done.stdout) == (1, "")
    assert done.stderr.endswith(
        "error: Meta_tool_config.json: 1 problem\n"
        f"  - $.python_tools[0] 'unit_tool.py': cannot import: no file"
        f" {str(folder.resolve() / 'unit_tool.py')!r}; did you mean 'unit_tools.py'? (the tool"
        " names it would provide are checked once it imports)\n"
        "hint: fix it and run `meta-tools validate` again\n"
    )
    # Every command that loads the config says the same, once.
    for command in (["list"], ["prompt", "math", "-o", "Add", "-i", "2 3"], ["serve"]):
        other = cli(folder, *command)
        assert (other.returncode, other.stdout) == (1, "")
        assert other.stderr == (  # serve: no note about the model before the error
            "error: Meta_tool_config.json: 1 problem\n"
            f"  - $.python_tools[0] 'unit_tool.py': cannot import: no file"
            f" {str(folder.resolve() / 'unit_tool.py')!r}; did you mean 'unit_tools.py'? (the"
            " tool names it would provide are checked once it imports)\n"
            "hint: fix the file; `meta-tools validate` lists every problem\n"
        ), (command, other.stderr)


def test_validate_warns_of_a_misspelled_template_with_the_name_it_may_mean(folder: Path) -> None:
    prompts = folder / "prompts"
    (prompts / "guards").mkdir(parents=True)
    (prompts / "tool_selction.j2").write_text("{{ objective }}\n")
    (prompts / "guards" / "empty_replly.j2").write_text("Say something.\n")
    write(
        folder,
        {
            "python_tools": ["cli_sample_tools.py"],
            "prompts_dir": "prompts",
            "Math": {"description": "Arithmetic on integers.", "tools": ["add"]},
            "Text": {"description": "Transform text.", "tools": ["shout"]},
        },
    )
    done = cli(folder, "validate", "--offline")
    assert done.returncode == 0, done.stderr
    assert "tool_selction.j2: no template is named so, so the default is used;" in done.stderr
    assert "did you mean 'tool_selection.j2'" in done.stderr
    assert "guards/empty_replly.j2" in done.stderr
    assert "did you mean 'guards/empty_reply.j2'?" in done.stderr


def demo_server(**extra: Any) -> dict[str, Any]:
    """The demo MCP server that ships with meta-tools (15 tools), over stdio."""
    return {"command": sys.executable, "args": ["-m", "meta_tools.demo", "--root", "."], **extra}


def test_tools_in_no_category_are_one_warning_per_server_naming_it_and_the_line_to_add(
    folder: Path,
) -> None:
    write(
        folder,
        {
            "mcp_servers": {"demo": demo_server(), "more": demo_server(prefix="more")},
            "python_tools": ["cli_sample_tools.py"],
            "Math": {"description": "Arithmetic on integers.", "tools": ["add", "calculate"]},
        },
    )
    done = cli(folder, "validate")
    assert done.returncode == 0, done.stderr
    unlisted = [line for line in done.stderr.splitlines() if "in no category" in line]
    assert unlisted == [
        "warning: tool 'shout' is in no category, so no agent can call it; to offer it, add to"
        ' a category "tools": ["shout"]',
        "warning: MCP server 'demo': 14 tools ('convert_units', 'describe_numbers',"
        " 'convert_time_zone' and 11 more) are in no category, so no agent can call them; to"
        ' offer them, add to a category "tools": ["convert_units", "describe_numbers",'
        ' "convert_time_zone", "..."]',
        "warning: MCP server 'more': 15 tools ('more_convert_units', 'more_calculate',"
        " 'more_describe_numbers' and 12 more) are in no category, so no agent can call them;"
        ' to offer them, add to a category "tools": ["more_*"]',
    ]
    listed = cli(folder, "list")
    assert [line for line in listed.stdout.splitlines() if "in no category" in line] == unlisted
