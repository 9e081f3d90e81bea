"""Python tools from wherever a user keeps them: objects in code, modules, or files named in text.

Everywhere tools are accepted (`MetaManager.from_config(tools=...)`, the
config's `python_tools`, `--tools`), the same forms work: a `BaseTool`, an
`@tool` function, a `ToolPack`, a module (its tools), or a list of these.
A text spec names a module (`my_tools`), a file (`tools/extra.py`), either
with `:attribute` (`my_tools:pack`); modules and files are looked up relative
to a base folder (the config file's, or the working directory for `--tools`).
"""

from __future__ import annotations

import hashlib
import importlib
import importlib.util
import sys
from collections.abc import Callable, Iterable
from pathlib import Path
from types import ModuleType
from typing import Any, TypeAlias

from ..exceptions import ToolDefinitionError
from .base import BaseTool
from .pack import ToolPack, as_tool

__all__ = ["ToolsLike", "collect_tools", "import_tools"]

_One: TypeAlias = BaseTool | Callable[..., Any] | ToolPack | ModuleType
ToolsLike: TypeAlias = _One | Iterable[_One]
"""What `tools=` accepts: a tool, an `@tool` function, a pack, a module, or a list of these."""


def _as_tool(item: object) -> BaseTool | None:
    try:
        return as_tool(item)  # type: ignore[arg-type]
    except ToolDefinitionError:
        return None


def _module_tools(module: ModuleType) -> list[BaseTool]:
    """The tools a module defines: its `BaseTool`s, `@tool` functions and `ToolPack`s."""
    found: list[BaseTool] = []
    for value in vars(module).values():
        if isinstance(value, ToolPack):
            found.extend(value.list_tools())
        elif (tool := _as_tool(value)) is not None:
            found.append(tool)
    return found


def collect_tools(items: object) -> list[BaseTool]:
    """Flatten `items` (see `ToolsLike`) to a list of tools, each object once, in order.

    Raises:
        ToolDefinitionError: an item is none of the accepted forms.
    """
    found: list[BaseTool] = []

    def add(item: object) -> None:
        if (tool := _as_tool(item)) is not None:
            if all(tool is not other for other in found):
                found.append(tool)
        elif isinstance(item, ToolPack):
            for inner in item.list_tools():
                add(inner)
        elif isinstance(item, ModuleType):
            for inner in _module_tools(item):
                add(inner)
        elif isinstance(item, Iterable) and not isinstance(item, str | bytes):
            for inner in item:
                add(inner)
        else:
            raise ToolDefinitionError(
                f"{item!r} is not a tool: pass a BaseTool, an @tool function, a ToolPack,"
                " a module, or a list of these"
            )

    add(items)
    return found


def import_tools(
    spec: str, *, base_dir: str | Path = ".", label: str = "--tools"
) -> list[BaseTool]:
    """The tools named by `spec`: `module`, `path/to/file.py`, either with `:attribute`.

    Args:
        spec: what to import.
        base_dir: where relative files and top-level modules are looked for first.
        label: how the spec is named in errors (`--tools`, `$.python_tools[0]`).

    Raises:
        ToolDefinitionError: it cannot be imported (the message says where it was looked
            for), has no such attribute, or holds no tool.
    """
    base = Path(base_dir).resolve()
    target, attribute = _split(spec)
    module = _import_file(target, base, spec, label) if _is_file(target) else None
    if module is None:
        module = _import_module(target, base, spec, label)
    if attribute:
        if not hasattr(module, attribute):
            raise ToolDefinitionError(f"{label} {spec!r}: {target!r} has no {attribute!r}")
        try:
            tools = collect_tools(getattr(module, attribute))
        except ToolDefinitionError:
            raise ToolDefinitionError(
                f"{label} {spec!r}: {attribute!r} is not a tool, a ToolPack or a list of tools"
            ) from None
    else:
        tools = _module_tools(module)
    if not tools:
        raise ToolDefinitionError(
            f"{label} {spec!r}: no tool found; decorate functions with @tool"
            " (or name a ToolPack or list with :attribute)"
        )
    return collect_tools(tools)


def _split(spec: str) -> tuple[str, str]:
    """`pkg.mod:attr` / `dir/file.py:attr` / `C:\\dir\\file.py` -> (target, attribute)."""
    target, sep, attribute = spec.rpartition(":")
    if not sep or not attribute.isidentifier():
        return spec, ""
    return target, attribute


def _is_file(target: str) -> bool:
    return target.endswith(".py") or "/" in target or "\\" in target


def _import_file(target: str, base: Path, spec: str, label: str) -> ModuleType:
    path = Path(target).expanduser()
    path = (path if path.is_absolute() else base / path).resolve()
    if not path.is_file():
        raise ToolDefinitionError(f"{label} {spec!r}: cannot import: no file {str(path)!r}")
    # A name of its own per file, so two `tools.py` in different folders do not clash.
    digest = hashlib.sha256(str(path).encode()).hexdigest()[:12]
    name = f"meta_tools_user_{path.stem}_{digest}"
    if name in sys.modules:
        return sys.modules[name]
    loader_spec = importlib.util.spec_from_file_location(name, path)
    if loader_spec is None or loader_spec.loader is None:
        raise ToolDefinitionError(f"{label} {spec!r}: cannot import {str(path)!r} as Python")
    module = importlib.util.module_from_spec(loader_spec)
    _search_first(path.parent)  # like running the file: its siblings import
    sys.modules[name] = module
    try:
        loader_spec.loader.exec_module(module)
    except Exception as exc:
        del sys.modules[name]
        raise ToolDefinitionError(
            f"{label} {spec!r}: cannot import {str(path)!r}: {type(exc).__name__}: {exc}"
        ) from exc
    return module


def _import_module(target: str, base: Path, spec: str, label: str) -> ModuleType:
    _search_first(base)
    try:
        return importlib.import_module(target)
    except ModuleNotFoundError as exc:
        top = target.split(".")[0]
        if exc.name in (target, top):
            raise ToolDefinitionError(
                f"{label} {spec!r}: cannot import module {target!r}: not found in"
                f" {str(base)!r} or the installed packages (a file needs its path, e.g."
                f" 'tools/{top}.py')"
            ) from None
        raise ToolDefinitionError(
            f"{label} {spec!r}: cannot import module {target!r}: it imports {exc.name!r},"
            " which is not installed"
        ) from exc
    except Exception as exc:
        raise ToolDefinitionError(
            f"{label} {spec!r}: cannot import module {target!r}: {type(exc).__name__}: {exc}"
        ) from exc


def _search_first(folder: Path) -> None:
    """Put `folder` on the import path (once), so modules there are found."""
    entry = str(folder)
    if entry not in sys.path:
        sys.path.insert(0, entry)
