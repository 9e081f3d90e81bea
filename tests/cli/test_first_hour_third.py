"""A new user's first hour, third pass (issue 50): nothing passes silently, a chat command,
the command line in one form. Each runs the real `meta-tools` command, with no key."""

from __future__ import annotations

import json
import sys
from pathlib import Path
from typing import Any

import pytest

from tests.cli.test_app import CATEGORIES, TOOLS_MODULE
from tests.cli.test_first_hour import cli, write

# A server whose command starts and dies at once, as `npx` does on a misspelled package.
NPM_404 = "import sys; sys.stderr.write('npm ERR! 404 Not Found\\n'); sys.exit(1)"


def broken_server(prefix: str = "fs") -> dict[str, Any]:
    return {"command": sys.executable, "args": ["-c", NPM_404], "prefix": prefix}


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
