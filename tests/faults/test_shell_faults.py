"""The shell built-in cannot read outside the file tools' roots, has no default programs,
and caps output in characters, as documented."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from meta_tools.config import MetaToolsConfig, ShellBuiltinConfig
from meta_tools.exceptions import ConfigError, ToolArgumentsError
from meta_tools.router.from_config import builtin_tools
from meta_tools.tools.builtins import shell_tool
from meta_tools.tools.builtins.process import ProcessOutput

pytestmark = pytest.mark.anyio

PROGRAMS = ["cat", "head", "tail", "grep", "wc", "ls", "echo"]


@pytest.fixture
def tree(tmp_path: Path) -> Path:
    """root/{notes.txt, escape@ -> ../secret.txt, out@ -> ..}; secret.txt beside root."""
    root = tmp_path / "root"
    root.mkdir()
    (root / "notes.txt").write_text("hello notes\n")
    (tmp_path / "secret.txt").write_text("top secret\n")
    (root / "escape").symlink_to(tmp_path / "secret.txt")
    (root / "out").symlink_to(tmp_path)
    return root


def test_the_shell_has_no_default_programs_they_are_named_explicitly() -> None:
    with pytest.raises(ConfigError) as caught:
        MetaToolsConfig.from_data(
            {"A": {"description": "a", "tools": ["x"]}, "builtins": {"execute_shell_command": {}}},
            source="c.json",
        )
    assert caught.value.problems == [
        "$.builtins.execute_shell_command.allowed_commands: field required"
    ]


@pytest.mark.parametrize(
    "command",
    [
        "cat /etc/passwd",
        "head -n 1 /etc/hostname",
        "tail ../secret.txt",
        "grep -r secret /",
        "grep --file=/etc/passwd x notes.txt",
        "grep -f/etc/passwd notes.txt",
        "wc -l escape",  # a symlink inside the root that points outside
        "cat out/secret.txt",
        "ls ..",
        "ls /",
    ],
)
async def test_a_path_argument_outside_the_roots_is_refused(tree: Path, command: str) -> None:
    shell = shell_tool(ShellBuiltinConfig(allowed_commands=PROGRAMS), cwd=tree)
    with pytest.raises(ToolArgumentsError) as caught:
        await shell.call({"command": command})
    assert "is outside the allowed folders" in str(caught.value)
    assert "top secret" not in str(caught.value)


async def test_paths_inside_the_roots_still_work(tree: Path) -> None:
    shell = shell_tool(ShellBuiltinConfig(allowed_commands=PROGRAMS), cwd=tree)
    assert await shell.call({"command": "cat notes.txt"}) == ProcessOutput(0, "hello notes\n", "")
    assert await shell.call({"command": f"grep -c hello {tree / 'notes.txt'}"}) == ProcessOutput(
        0, "1\n", ""
    )
    assert await shell.call({"command": "echo a/b is text"}) == ProcessOutput(
        0, "a/b is text\n", ""
    )  # a slash in plain text resolves inside the root: allowed


async def test_the_shell_is_confined_to_the_file_tools_roots(tree: Path) -> None:
    config_path = tree.parent / "Meta_tool_config.json"
    config_path.write_text(
        json.dumps(
            {
                "Files": {"description": "Files.", "tools": ["execute_shell_command"]},
                "builtins": {
                    "execute_shell_command": {"allowed_commands": ["cat", "pwd"]},
                    "read_file": {"roots": ["root"]},
                },
            }
        )
    )
    (shell,) = [
        t
        for t in builtin_tools(MetaToolsConfig.load(config_path))
        if t.name == "execute_shell_command"
    ]
    assert await shell.call({"command": "pwd"}) == ProcessOutput(0, f"{tree}\n", "")
    with pytest.raises(ToolArgumentsError):
        await shell.call({"command": f"cat {config_path}"})  # the config's folder is outside


async def test_the_output_cap_counts_characters_not_bytes(tmp_path: Path) -> None:
    shell = shell_tool(
        ShellBuiltinConfig(allowed_commands=["cat"], max_output_chars=100), cwd=tmp_path
    )
    (tmp_path / "wide.txt").write_text("é" * 100, encoding="utf-8")  # 100 characters, 200 bytes
    assert await shell.call({"command": "cat wide.txt"}) == ProcessOutput(0, "é" * 100, "")
    (tmp_path / "wider.txt").write_text("é" * 101, encoding="utf-8")
    output = await shell.call({"command": "cat wider.txt"})
    assert output.stdout == "é" * 100 + "…[output cut at 100 characters; the process was stopped]"
