"""A config path that is not a regular file (a FIFO, a folder) is refused, never opened.

Opening a FIFO for reading waits for a writer: `validate` and `serve` would hang, and
a reload would block its worker thread for good, so that no later edit is applied.
"""

import json
import os
import subprocess
from collections.abc import Iterator
from contextlib import contextmanager, suppress
from pathlib import Path
from typing import Any

import anyio
import anyio.to_thread
import pytest

from meta_tools import tool
from meta_tools.config import MetaToolsConfig
from meta_tools.exceptions import ConfigError
from meta_tools.llm import ScriptedModel
from meta_tools.router.manager import MetaManager
from meta_tools.router.reload import ConfigReloader, ReloadOutcome
from tests.cli_process import meta_tools_command

pytestmark = pytest.mark.anyio

FIRST = {"Text": {"description": "Transform text.", "tools": ["shout"]}}
SECOND = {"Loud": {"description": "Make text loud.", "tools": ["shout"]}}


@tool
def shout(text: str) -> str:
    """Upper-case a text."""
    return text.upper()


def write(path: Path, data: Any) -> None:
    path.write_text(json.dumps(data))


@contextmanager
def fifo_at(path: Path) -> Iterator[Path]:
    """A FIFO at `path`; on the way out a reader blocked on it (today's bug) is let go."""
    os.mkfifo(path)
    try:
        yield path
    finally:
        release(path)


def release(path: Path) -> None:
    """Let a reader blocked in open() go (it then reads an empty file); else do nothing."""
    with suppress(OSError):  # no reader: nothing is blocked
        os.close(os.open(path, os.O_WRONLY | os.O_NONBLOCK))


def run_cli(*args: str) -> subprocess.CompletedProcess[str]:
    # A hang is the bug: the timeout fails the test (and kills the process).
    return subprocess.run(
        [*meta_tools_command(), *args], capture_output=True, text=True, timeout=60, check=False
    )


async def test_loading_a_fifo_config_is_a_config_error_naming_what_it_is(tmp_path: Path) -> None:
    # In a thread, so that a blocking open fails the test instead of hanging it.
    with (
        fifo_at(tmp_path / "Meta_tool_config.json") as path,
        pytest.raises(ConfigError) as raised,
        anyio.fail_after(20),
    ):
        await anyio.to_thread.run_sync(MetaToolsConfig.load, path, abandon_on_cancel=True)
    assert raised.value.problems == [
        "cannot read the file: a FIFO (named pipe), not a regular file; point it at a JSON file"
    ]
    with pytest.raises(ConfigError) as raised:
        MetaToolsConfig.load(tmp_path)
    assert raised.value.problems == [
        "cannot read the file: a folder, not a regular file; point it at a JSON file"
    ]


@pytest.mark.parametrize("command", [["validate", "--offline"], ["serve", "--no-reload"]])
def test_the_cli_refuses_a_fifo_config_at_once(tmp_path: Path, command: list[str]) -> None:
    with fifo_at(tmp_path / "Meta_tool_config.json") as path:
        done = run_cli(*command, "-c", str(path))
    assert done.returncode == 1, done.stderr
    assert "a FIFO (named pipe), not a regular file" in done.stderr


async def test_a_reload_refuses_a_fifo_and_applies_the_next_valid_edit(tmp_path: Path) -> None:
    path = tmp_path / "Meta_tool_config.json"
    write(path, FIRST)
    meta = MetaManager.from_config(path, tools=[shout], model=ScriptedModel([]))
    outcomes: list[ReloadOutcome] = []
    changed = anyio.Event()

    async def record(outcome: ReloadOutcome) -> None:
        outcomes.append(outcome)
        changed.set()

    reloader = ConfigReloader(meta, path, on_reload=record, debounce_ms=50)
    path.unlink()
    with fifo_at(path):
        async with anyio.create_task_group() as group:
            group.start_soon(reloader.reload_now)
            with anyio.move_on_after(20):
                await changed.wait()
            blocked = not changed.is_set()
            if blocked:  # today's bug: let the blocked open go, then fail
                release(path)
        assert not blocked, "the reload blocked on opening the FIFO"
        (refused,) = outcomes
        assert not refused.applied
        assert refused.problems == (
            "cannot read the file: a FIFO (named pipe), not a regular file;"
            " point it at a JSON file",
        )
        assert [c.name for c in meta.categories] == ["Text"]
        path.unlink()
    write(path, SECOND)
    with anyio.fail_after(20):
        applied = await reloader.reload_now()
    assert applied is not None and applied.applied
    assert [c.name for c in meta.categories] == ["Loud"]
