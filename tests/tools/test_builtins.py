"""Built-in tools: off by default; subprocesses bounded and cleaned up; files kept under roots."""

from __future__ import annotations

import json
import os
from pathlib import Path
from typing import Any

import anyio
import psutil
import pytest

from meta_tools.config import (
    MetaToolsConfig,
    PythonBuiltinConfig,
    ShellBuiltinConfig,
)
from meta_tools.exceptions import ConfigError, ToolArgumentsError, ToolTimeoutError
from meta_tools.llm import AssistantTurn, ScriptedModel, ToolCall
from meta_tools.router.manager import MetaManager
from meta_tools.tools import ToolPack
from meta_tools.tools.builtins import (
    ProcessOutput,
    list_directory_tool,
    parse_command,
    python_tool,
    read_file_tool,
    shell_tool,
)
from tests.leaks import wait_until_stopped

pytestmark = pytest.mark.anyio

ALLOWED = ["ls", "cat", "echo", "wc", "grep", "head", "tail", "pwd"]


def python(timeout_s: float = 10.0, max_output_chars: int = 10_000) -> Any:
    return python_tool(PythonBuiltinConfig(timeout_s=timeout_s, max_output_chars=max_output_chars))


def children() -> list[psutil.Process]:
    return psutil.Process().children(recursive=True)


def config(tmp_path: Path, builtins: dict[str, Any], tools: list[str]) -> MetaToolsConfig:
    data = {"Tech": {"description": "Code and files.", "tools": tools}, "builtins": builtins}
    path = tmp_path / "Meta_tool_config.json"
    path.write_text(json.dumps(data), encoding="utf-8")
    return MetaToolsConfig.load(path)


# -- enabling -----------------------------------------------------------------------------


def test_builtins_are_off_unless_the_config_names_them(tmp_path: Path) -> None:
    with pytest.raises(ConfigError) as caught:
        MetaManager.from_config(
            config(tmp_path, {}, ["execute_python_code"]), model=ScriptedModel([])
        )
    assert caught.value.problems == [
        "$.\"Tech\".tools[0]: tool 'execute_python_code' is listed but no source provides it"
    ]


def test_named_builtins_join_the_tools_a_category_can_list(tmp_path: Path) -> None:
    (tmp_path / "docs").mkdir()
    builtins = {
        "execute_python_code": {},
        "execute_shell_command": {"allowed_commands": ["echo"]},
        "read_file": {"roots": ["docs"]},
        "list_directory": {"roots": ["docs"]},
    }
    meta = MetaManager.from_config(
        config(tmp_path, builtins, ["execute_*", "read_file", "list_directory"]),
        model=ScriptedModel([]),
    )
    [category] = meta.categories
    assert [t.name for t in category.tools.list_tools()] == [
        "execute_python_code",
        "execute_shell_command",
        "read_file",
        "list_directory",
    ]
    assert category.tools.get_tool("read_file").parameters_schema == {
        "type": "object",
        "properties": {
            "path": {
                "type": "string",
                "description": "The file, relative to the first allowed folder or absolute.",
            }
        },
        "required": ["path"],
    }


def test_a_file_tool_root_that_does_not_exist_is_a_config_error(tmp_path: Path) -> None:
    builtins = {"read_file": {"roots": ["missing"]}, "list_directory": {"roots": [".", "gone"]}}
    with pytest.raises(ConfigError) as caught:
        MetaManager.from_config(config(tmp_path, builtins, ["read_file"]), model=ScriptedModel([]))
    assert caught.value.problems == [
        "$.builtins.read_file.roots[0]: 'missing' is not an existing folder",
        "$.builtins.list_directory.roots[1]: 'gone' is not an existing folder",
    ]


async def test_a_category_runs_python_code_and_the_llm_sees_the_output(tmp_path: Path) -> None:
    code = "print(sum(range(10)))"
    model = ScriptedModel(
        [
            AssistantTurn(
                tool_calls=[ToolCall(name="execute_python_code", arguments={"code": code})]
            ),
            AssistantTurn(text="The sum is 45."),
        ]
    )
    built = config(tmp_path, {"execute_python_code": {}}, ["execute_python_code"])
    async with MetaManager.from_config(built, model=model) as meta:
        result = await meta.call_tool("tech", {"objective": "Sum 0..9", "exact_input": "0..9"})
    assert (result.status, result.summary) == ("success", "The sum is 45.")
    assert result.executions[0].result == '{"exit_code": 0, "stdout": "45\\n", "stderr": ""}'
    told = model.requests[1].messages[3].content
    assert told == (
        '<tool_result tool="execute_python_code" status="ok">\n'
        '{"exit_code": 0, "stdout": "45\\n", "stderr": ""}\n</tool_result>'
    )


# -- execute_python_code ---------------------------------------------------------------------


async def test_python_returns_exit_code_stdout_and_stderr_even_when_the_program_fails() -> None:
    code = "import sys\nprint('out')\nprint('err', file=sys.stderr)\nsys.exit(3)"
    assert await python().call({"code": code}) == ProcessOutput(3, "out\n", "err\n")


async def test_python_child_gets_an_empty_folder_and_none_of_the_services_environment(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setenv("OPENAI_API_KEY", "sk-must-not-leak-123")
    code = "import os, json\nprint(json.dumps([sorted(os.environ), os.listdir('.')]))"
    output = await python().call({"code": code})
    assert json.loads(output.stdout) == [
        ["HOME", "LANG", "LC_ALL", "PATH", "PYTHONIOENCODING", "TMPDIR"],
        ["main.py"],
    ]


async def test_python_past_its_timeout_is_killed_with_the_processes_it_started(
    tmp_path: Path,
) -> None:
    pid_file = tmp_path / "grandchild.pid"
    code = (
        "import subprocess, sys, time\n"
        "child = subprocess.Popen([sys.executable, '-c', 'import time; time.sleep(60)'])\n"
        f"open({str(pid_file)!r}, 'w').write(str(child.pid))\n"
        "print('started', flush=True)\n"
        "time.sleep(60)\n"
    )
    with pytest.raises(ToolTimeoutError) as caught:
        await python(timeout_s=1).call({"code": code})
    assert str(caught.value) == (
        "tool 'execute_python_code' did not finish within 1 s and was stopped;"
        " output so far: started\n"
    )
    assert await wait_until_stopped([int(pid_file.read_text())]) == []
    assert children() == []


async def test_endless_output_is_cut_at_the_cap_and_the_process_stopped() -> None:
    output = await python(max_output_chars=500).call({"code": "while True: print('x' * 99)"})
    assert output.stdout == (
        ("x" * 99 + "\n") * 5 + "…[output cut at 500 characters; the process was stopped]"
    )
    assert output.exit_code < 0  # killed by a signal
    assert children() == []


async def test_programs_left_running_in_the_background_are_stopped_when_it_exits(
    tmp_path: Path,
) -> None:
    pid_file = tmp_path / "background.pid"
    code = (
        "import subprocess, sys\n"
        "child = subprocess.Popen([sys.executable, '-c', 'import time; time.sleep(60)'],"
        " stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)\n"
        f"open({str(pid_file)!r}, 'w').write(str(child.pid))\n"
    )
    with anyio.fail_after(5):  # not the tool's 10 s timeout: the exit ends the call
        assert await python().call({"code": code}) == ProcessOutput(0, "", "")
    assert await wait_until_stopped([int(pid_file.read_text())]) == []


async def test_a_call_cancelled_by_the_category_timeout_kills_the_process(tmp_path: Path) -> None:
    pid_file = tmp_path / "child.pid"
    code = f"import os, time\nopen({str(pid_file)!r}, 'w').write(str(os.getpid()))\ntime.sleep(60)"
    pack = ToolPack([python(timeout_s=60)])
    with pytest.raises(ToolTimeoutError, match="did not finish within 1 s"):
        await pack.call_tool("execute_python_code", {"code": code}, timeout=1)
    assert await wait_until_stopped([int(pid_file.read_text())]) == []
    assert children() == []


# -- execute_shell_command --------------------------------------------------------------------


async def test_shell_runs_one_allowed_program_without_a_shell(tmp_path: Path) -> None:
    shell = shell_tool(ShellBuiltinConfig(allowed_commands=ALLOWED), cwd=tmp_path)
    assert await shell.call({"command": "echo 'two  spaces' \"*\" plain"}) == ProcessOutput(
        0, "two  spaces * plain\n", ""
    )
    assert await shell.call({"command": "pwd"}) == ProcessOutput(0, f"{tmp_path}\n", "")


@pytest.mark.parametrize(
    ("command", "problem"),
    [
        ("", "'command' is empty; give one command such as 'ls -l'"),
        ("echo 'open", "'command' cannot be parsed: No closing quotation"),
        *[
            (
                command,
                f"'command' uses the shell operator {operator!r}: pipes, redirections, command"
                " lists and subshells are not supported; run one command per call",
            )
            for command, operator in [
                ("ls | wc -l", "|"),
                ("cat a>b", ">"),
                ("echo hi; rm -rf /", ";"),
                ("ls && date", "&&"),
                ("echo $(whoami)", "("),
                ("cat < /etc/passwd", "<"),
                ("sleep 1 &", "&"),
            ]
        ],
        (
            "echo `whoami`",
            "'command' uses substitution or a variable in '`whoami`': nothing is expanded;"
            " write the values out",
        ),
        (
            "echo $HOME",
            "'command' uses substitution or a variable in '$HOME': nothing is expanded;"
            " write the values out",
        ),
        (
            "rm -rf /",
            "'command': 'rm' is not an allowed program; allowed: " + ", ".join(ALLOWED),
        ),
        ("/bin/ls", "'command': give the bare program name, not the path '/bin/ls'"),
        ("./ls", "'command': give the bare program name, not the path './ls'"),
    ],
)
def test_shell_refuses_operators_expansions_and_programs_off_the_list(
    command: str, problem: str
) -> None:
    with pytest.raises(ToolArgumentsError) as caught:
        parse_command(command, ALLOWED)
    assert caught.value.problems == [problem]
    assert str(caught.value) == f"invalid arguments for tool 'execute_shell_command': {problem}"


async def test_a_shell_command_past_its_timeout_is_stopped(tmp_path: Path) -> None:
    (tmp_path / "log.txt").write_text("line\n")
    shell = shell_tool(ShellBuiltinConfig(allowed_commands=ALLOWED, timeout_s=1), cwd=tmp_path)
    with pytest.raises(ToolTimeoutError) as caught:
        await shell.call({"command": "tail -f log.txt"})
    assert str(caught.value) == (
        "tool 'execute_shell_command' did not finish within 1 s and was stopped;"
        " output so far: line\n"
    )
    assert children() == []


async def test_an_allowed_program_that_is_not_installed_is_reported(tmp_path: Path) -> None:
    shell = shell_tool(ShellBuiltinConfig(allowed_commands=["no-such-program-xyz"]), cwd=tmp_path)
    with pytest.raises(ToolArgumentsError, match="'no-such-program-xyz' is not installed here"):
        await shell.call({"command": "no-such-program-xyz --help"})


# -- read_file and list_directory -------------------------------------------------------------


@pytest.fixture
def tree(tmp_path: Path) -> Path:
    """root/{notes.txt, sub/deep.txt, inside@ -> notes.txt, out_file@, out_dir@}; secret.txt outside."""
    root = tmp_path / "root"
    (root / "sub").mkdir(parents=True)
    (root / "notes.txt").write_text("hello notes\n")
    (root / "sub" / "deep.txt").write_text("deep\n")
    (tmp_path / "secret.txt").write_text("top secret\n")
    (root / "inside").symlink_to(root / "notes.txt")
    (root / "out_file").symlink_to(tmp_path / "secret.txt")
    (root / "out_dir").symlink_to(tmp_path)
    return root


async def test_read_file_reads_text_under_a_root_including_symlinks_that_stay_inside(
    tree: Path,
) -> None:
    read = read_file_tool([tree], max_bytes=1000)
    assert await read.call({"path": "notes.txt"}) == "hello notes\n"
    assert await read.call({"path": "sub/deep.txt"}) == "deep\n"
    assert await read.call({"path": str(tree / "sub" / "deep.txt")}) == "deep\n"
    assert await read.call({"path": "inside"}) == "hello notes\n"


@pytest.mark.parametrize(
    ("path", "problem"),
    [
        ("../secret.txt", "'../secret.txt' contains '..'; give a path inside {root}"),
        ("sub/../notes.txt", "'sub/../notes.txt' contains '..'; give a path inside {root}"),
        ("{outside}", "'{outside}' is outside the allowed folders {root}"),
        ("/etc/passwd", "'/etc/passwd' is outside the allowed folders {root}"),
        ("out_file", "'out_file' is outside the allowed folders {root}"),
        ("out_dir/secret.txt", "'out_dir/secret.txt' is outside the allowed folders {root}"),
        ("missing.txt", "no such file: 'missing.txt'"),
        ("sub", "'sub' is a folder; use list_directory"),
        ("a\x00b", "contains a NUL byte"),
    ],
)
async def test_read_file_refuses_dotdot_outside_paths_and_symlinks_out(
    tree: Path, path: str, problem: str
) -> None:
    outside = str(tree.parent / "secret.txt")
    read = read_file_tool([tree], max_bytes=1000)
    with pytest.raises(ToolArgumentsError) as caught:
        await read.call({"path": path.format(outside=outside)})
    expected = problem.format(root=tree.resolve(), outside=outside)
    assert str(caught.value) == f"invalid arguments for tool 'read_file': 'path': {expected}"


async def test_a_long_file_is_cut_at_max_bytes_and_binary_files_are_refused(tree: Path) -> None:
    (tree / "big.txt").write_text("y" * 5000)
    (tree / "blob.bin").write_bytes(b"\x00\x01\x02" * 10)
    read = read_file_tool([tree], max_bytes=100)
    assert await read.call({"path": "big.txt"}) == (
        "y" * 100 + "…[truncated: the file has 5000 bytes, 100 are shown]"
    )
    with pytest.raises(ToolArgumentsError, match=r"'blob.bin' is a binary file \(30 bytes\)"):
        await read.call({"path": "blob.bin"})


async def test_a_fifo_under_the_root_is_refused_without_blocking(tree: Path) -> None:
    os.mkfifo(tree / "pipe")
    read = read_file_tool([tree], max_bytes=100)
    with anyio.fail_after(5), pytest.raises(ToolArgumentsError, match="not a regular file"):
        await read.call({"path": "pipe"})


async def test_list_directory_lists_sorted_entries_and_refuses_folders_outside(
    tree: Path,
) -> None:
    listing = list_directory_tool([tree])
    assert await listing.call({}) == [
        "inside@",
        "notes.txt (12 bytes)",
        "out_dir@",
        "out_file@",
        "sub/",
    ]
    assert await listing.call({"path": "sub"}) == ["deep.txt (5 bytes)"]
    with pytest.raises(ToolArgumentsError, match="'out_dir' is outside the allowed folders"):
        await listing.call({"path": "out_dir"})
    with pytest.raises(ToolArgumentsError, match=r"'notes\.txt' is not a folder"):
        await listing.call({"path": "notes.txt"})


async def test_a_huge_folder_listing_is_capped_with_a_count_of_the_rest(tmp_path: Path) -> None:
    for index in range(1003):
        (tmp_path / f"f{index:04d}").touch()
    listing = await list_directory_tool([tmp_path]).call({})
    assert len(listing) == 1001
    assert listing[0] == "f0000 (0 bytes)"
    assert listing[-1] == "…[3 more entries]"
