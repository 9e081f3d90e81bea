"""A listed tool no source provides, found in a `@tool` file the config does not load.

A newcomer writes `tips.py` beside `Meta_tool_config.json`, lists `tip_amount`
in a category and forgets `python_tools` (or `-t`). `UnloadedTools` reads the
config's folder once (without running anything, see `tools.tool_files`) and
says which file defines the name, or a close one, and the exact line to add.
"""

from __future__ import annotations

import json
from collections.abc import Collection
from pathlib import Path

from ..config import MetaToolsConfig
from ..support.suggest import close_names
from ..tools.tool_files import ToolFile, tool_files

__all__ = ["UnloadedTools"]


class UnloadedTools:
    """The `@tool` files of a config's folder that neither `python_tools` nor `-t` loaded.

    A file whose tools are all among `available` counts as loaded (given with
    `-t`, or imported some other way). A config not read from a file has no folder.
    """

    def __init__(self, config: MetaToolsConfig, available: Collection[str]) -> None:
        self._config = config
        self._available = available
        self._files: list[ToolFile] | None = None

    def hint(self, name: str) -> str:
        """Where an unloaded file defines `name` (or a close name) and how to load it; or ''."""
        files = self._unloaded()
        exact = [f for f in files if name in f.names]
        if exact:
            return self._advice(exact[0], f"defines @tool {name!r}")
        for file in files:
            close = close_names(name, file.names, n=1)
            if close:
                found = close[0]
                return self._advice(
                    file, f"defines @tool {found!r}", then=f"; then list {found!r}, not {name!r}"
                )
        return ""

    def _advice(self, file: ToolFile, defines: str, *, then: str = "") -> str:
        entries = [*self._config.python_tools, file.path.name]
        line = f'"python_tools": {json.dumps(entries)}'
        return (
            f"{file.path.name} beside the config {defines} but is not loaded: add"
            f" {line} to the config (or pass -t {file.path} to the command){then}"
        )

    def _unloaded(self) -> list[ToolFile]:
        if self._files is None:
            self._files = self._read()
        return self._files

    def _read(self) -> list[ToolFile]:
        source = Path(self._config.source)
        if not source.is_file():  # a config built from data has no folder of its own
            return []
        folder = source.parent
        loaded = {_spec_path(spec, folder) for spec in self._config.python_tools}
        return [
            file
            for file in tool_files(folder)
            if file.path.resolve() not in loaded
            and not all(n in self._available for n in file.names)
        ]


def _spec_path(spec: str, folder: Path) -> Path:
    """The file a `python_tools` entry names (`tips.py`, `tips.py:pack`, `tips`), resolved."""
    head, colon, tail = spec.rpartition(":")
    target = head if colon and "/" not in tail and "\\" not in tail else spec
    if not target.endswith(".py"):
        target = target.replace(".", "/") + ".py"
    return (folder / target).resolve()
