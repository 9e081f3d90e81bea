"""A config updated by swapping a symbolic link is reloaded, and so are edits of its new target.

Deploy tools replace a config atomically with `ln -s v2.json tmp && mv -T tmp
Meta_tool_config.json`; a Kubernetes ConfigMap swaps the `..data` link of its folder.
An operator who revokes a category that way must see it gone.
"""

import json
import logging
import os
from pathlib import Path
from typing import Any

import anyio
import pytest

from meta_tools import tool
from meta_tools.llm import ScriptedModel
from meta_tools.router.manager import MetaManager
from meta_tools.router.reload import ConfigReloader, ReloadOutcome

pytestmark = pytest.mark.anyio

V1 = {
    "Text": {"description": "Transform text.", "tools": ["shout"]},
    "Secrets": {"description": "Read the vault.", "tools": ["read_vault"]},
}
V2 = {"Text": {"description": "Transform text.", "tools": ["shout"]}}
V3 = {"Loud": {"description": "Make text loud.", "tools": ["shout"]}}


@tool
def shout(text: str) -> str:
    """Upper-case a text."""
    return text.upper()


@tool
def read_vault(key: str) -> str:
    """Read a secret from the vault."""
    return "s3cret"


def write(path: Path, data: Any) -> None:
    path.write_text(json.dumps(data))


def swap_link(path: Path, target: str) -> None:
    """`ln -s target tmp && mv -T tmp path`: the entry becomes a link in one rename."""
    temporary = path.with_name(f".{path.name}.tmp")
    os.symlink(target, temporary)
    os.replace(temporary, path)


def categories(meta: MetaManager) -> list[str]:
    return [c.name for c in meta.categories]


class Watched:
    """A reloader running in a task group; `next()` waits (bounded) for its next outcome."""

    def __init__(self, meta: MetaManager, path: Path) -> None:
        self.outcomes: list[ReloadOutcome] = []
        self._changed = anyio.Event()
        self.reloader = ConfigReloader(meta, path, on_reload=self._record, debounce_ms=50)

    async def _record(self, outcome: ReloadOutcome) -> None:
        self.outcomes.append(outcome)
        self._changed.set()

    async def next(self) -> ReloadOutcome:
        with anyio.fail_after(20):
            await self._changed.wait()
        self._changed = anyio.Event()
        return self.outcomes[-1]


async def test_a_symlink_swap_over_the_config_is_applied_and_so_are_edits_of_its_target(
    tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    path = tmp_path / "Meta_tool_config.json"
    write(path, V1)
    write(tmp_path / "v2.json", V2)
    meta = MetaManager.from_config(path, tools=[shout, read_vault], model=ScriptedModel([]))
    watched = Watched(meta, path)
    caplog.set_level(logging.INFO, logger="meta_tools.reload")
    async with anyio.create_task_group() as group:
        await group.start(watched.reloader.run)
        swap_link(path, "v2.json")
        swapped = await watched.next()
        assert (swapped.applied, swapped.categories) == (True, ("Text",))
        assert categories(meta) == ["Text"]
        # The file the link now points to is followed too.
        write(tmp_path / "v2.json", V3)
        edited = await watched.next()
        assert (edited.applied, edited.categories) == (True, ("Loud",))
        group.cancel_scope.cancel()
    assert categories(meta) == ["Loud"]
    # What was applied is logged with the file it was read from.
    assert [o.target for o in watched.outcomes] == [str(tmp_path / "v2.json")] * 2
    assert f"{path} -> {tmp_path / 'v2.json'}: reloaded, 1 categories: Text" in caplog.text


async def test_a_config_map_swap_of_its_data_link_is_applied(tmp_path: Path) -> None:
    # A ConfigMap volume: config.json -> ..data/config.json, ..data -> ..<version>.
    (tmp_path / "..v1").mkdir()
    write(tmp_path / "..v1" / "config.json", V1)
    os.symlink("..v1", tmp_path / "..data")
    path = tmp_path / "config.json"
    os.symlink("..data/config.json", path)
    meta = MetaManager.from_config(path, tools=[shout, read_vault], model=ScriptedModel([]))
    watched = Watched(meta, path)
    async with anyio.create_task_group() as group:
        await group.start(watched.reloader.run)
        (tmp_path / "..v2").mkdir()
        write(tmp_path / "..v2" / "config.json", V2)
        swap_link(tmp_path / "..data", "..v2")
        swapped = await watched.next()
        assert (swapped.applied, swapped.categories) == (True, ("Text",))
        assert swapped.target == str(tmp_path / "..v2" / "config.json")
        # And the next version after that: the watcher follows the new target's folder.
        (tmp_path / "..v3").mkdir()
        write(tmp_path / "..v3" / "config.json", V3)
        swap_link(tmp_path / "..data", "..v3")
        again = await watched.next()
        assert (again.applied, again.categories) == (True, ("Loud",))
        group.cancel_scope.cancel()
    assert categories(meta) == ["Loud"]


async def test_a_config_that_is_a_link_at_start_follows_a_swap_to_another_file(
    tmp_path: Path,
) -> None:
    write(tmp_path / "v1.json", V1)
    write(tmp_path / "v2.json", V2)
    path = tmp_path / "Meta_tool_config.json"
    os.symlink("v1.json", path)
    meta = MetaManager.from_config(path, tools=[shout, read_vault], model=ScriptedModel([]))
    watched = Watched(meta, path)
    async with anyio.create_task_group() as group:
        await group.start(watched.reloader.run)
        swap_link(path, "v2.json")
        swapped = await watched.next()
        assert (swapped.applied, swapped.categories) == (True, ("Text",))
        group.cancel_scope.cancel()
    assert categories(meta) == ["Text"]
