"""Python tools from wherever a user keeps them: objects in code, modules, or files named in text.

Everywhere tools are accepted (`MetaManager.from_config(tools=...)`, the
config's `python_tools`, `--tools`), the same forms work: a `BaseTool`, an
`@tool` function, a `ToolPack`, a module (its tools), or a list of these.
A text spec names a module (`my_tools`), a file (`tools/extra.py`), either
with `:attribute` (`my_tools:pack`); modules and files are looked up relative
to a base folder (the config file's, or the working directory for `--tools`).

Importing runs the module's code, which may do anything a script does: exit
(`sys.exit`, a module-level `argparse`), raise `KeyboardInterrupt`, print. Each
of these is kept inside the import: anything raised becomes a
`ToolDefinitionError` naming the module (with the end of what it printed, such
as argparse's complaint), and what it prints goes to stderr once it is
imported, never to stdout, which may carry the MCP protocol.
"""

from __future__ import annotations

import hashlib
import importlib
import importlib.util
import io
import sys
from collections.abc import Callable, Iterable, Iterator
from contextlib import contextmanager
from pathlib import Path
from types import ModuleType
from typing import Any, Literal, TypeAlias

from ..exceptions import ToolDefinitionError
from ..support.suggest import did_you_mean
from .base import BaseTool
from .pack import ToolPack, as_tool

__all__ = ["ToolsLike", "collect_tools", "import_tools"]

_One: TypeAlias = BaseTool | Callable[..., Any] | ToolPack | ModuleType
ToolsLike: TypeAlias = _One | Iterable[_One]
"""What `tools=` accepts: a tool, an `@tool` function, a pack, a module, or a list of these."""

#: How much of what a module prints while it is imported is kept: the end, this many characters.
OUTPUT_CHARS = 4000


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
    seen: set[int] = set()  # ids of the tools in `found` (they stay alive in it)

    def add(item: object) -> None:
        if (tool := _as_tool(item)) is not None:
            if id(tool) not in seen:
                seen.add(id(tool))
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
        siblings = [p.name for p in path.parent.glob("*.py")] if path.parent.is_dir() else []
        hint = did_you_mean(path.name, siblings)
        raise ToolDefinitionError(
            f"{label} {spec!r}: cannot import: no file {str(path)!r}"
            + (f"; {hint}" if hint else "")
        )
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
        with _contained(f"{label} {spec!r}: cannot import {str(path)!r}"):
            loader_spec.loader.exec_module(module)
    except ToolDefinitionError:
        sys.modules.pop(name, None)
        raise
    return module


def _import_module(target: str, base: Path, spec: str, label: str) -> ModuleType:
    _search_first(base)
    try:
        what = f"{label} {spec!r}: cannot import module {target!r}"
        with _contained(what, passing=(ModuleNotFoundError,)):  # described below
            return importlib.import_module(target)
    except ModuleNotFoundError as exc:
        top = target.split(".")[0]
        if exc.name in (target, top):
            nearby = [p.stem for p in base.glob("*.py")] if "." not in target else []
            hint = did_you_mean(target, nearby)
            raise ToolDefinitionError(
                f"{label} {spec!r}: cannot import module {target!r}: not found in"
                f" {str(base)!r} or the installed packages"
                + (f"; {hint}" if hint else f" (a file needs its path, e.g. 'tools/{top}.py')")
            ) from None
        raise ToolDefinitionError(
            f"{label} {spec!r}: cannot import module {target!r}: it imports {exc.name!r},"
            " which is not installed"
        ) from exc


def _search_first(folder: Path) -> None:
    """Put `folder` on the import path (once), so modules there are found."""
    entry = str(folder)
    if entry not in sys.path:
        sys.path.insert(0, entry)


@contextmanager
def _contained(what: str, *, passing: tuple[type[BaseException], ...] = ()) -> Iterator[None]:
    """Run an import with its output held back and anything it raises made a `ToolDefinitionError`.

    `what` starts the error message (`$.python_tools[0] 'x.py': cannot import '/p/x.py'`);
    the exceptions in `passing` are raised as they are, for the caller to describe.
    What the module printed goes to stderr when it imported, and ends the error
    message when it did not.

    Raises:
        ToolDefinitionError: the import raised anything, `SystemExit` and
            `KeyboardInterrupt` included (a module's code is not ours to exit or stop).
    """
    out, err = _HeldOutput("stdout"), _HeldOutput("stderr")
    # Process-wide, as imports are: one thread's import must not write to the protocol.
    sys.stdout, sys.stderr = out, err
    try:
        yield
    except passing:
        raise
    except BaseException as exc:  # SystemExit and KeyboardInterrupt too (see above)
        raise ToolDefinitionError(f"{what}: {_raised(exc)}{_printed(out, err)}") from exc
    else:
        printed = out.text() + err.text()
        if printed and err.real is not None:
            err.real.write(printed)
    finally:
        sys.stdout, sys.stderr = out.real, err.real
        out.release()
        err.release()


def _raised(exc: BaseException) -> str:
    if isinstance(exc, SystemExit):
        code = exc.code if exc.code is not None else 0
        return (
            f"it exited (SystemExit: {code!r}) while being imported; run a module's script"
            ' code under `if __name__ == "__main__":`'
        )
    if isinstance(exc, KeyboardInterrupt):
        return "KeyboardInterrupt while it was being imported"
    return f"{type(exc).__name__}: {exc}"


def _printed(*streams: _HeldOutput) -> str:
    """`; the last line it printed: '...'` (argparse's complaint, say), or nothing."""
    lines = [line.strip() for s in streams for line in s.text().splitlines() if line.strip()]
    if not lines:
        return ""
    last = lines[-1] if len(lines[-1]) <= 300 else lines[-1][:300] + "…"
    return f"; the last line it printed: {last!r}"


class _HeldOutput(io.TextIOBase):
    """Stands in for `sys.stdout` or `sys.stderr` while a module is imported.

    Keeps the last `OUTPUT_CHARS` characters written. Once released, writes go to
    whatever the real stream is then, so that a stream the module kept (a logging
    handler it made) still works, and nothing piles up here.
    """

    def __init__(self, name: Literal["stdout", "stderr"]) -> None:
        super().__init__()
        self.name = name
        self.real = getattr(sys, name)
        self._parts: list[str] = []
        self._size = 0
        self._cut = 0
        self._held = True

    def write(self, text: str) -> int:
        if not self._held:
            target = getattr(sys, self.name)
            return len(text) if target is self or target is None else int(target.write(text))
        self._parts.append(text)
        self._size += len(text)
        if self._size > 2 * OUTPUT_CHARS:
            kept = "".join(self._parts)[-OUTPUT_CHARS:]
            self._cut += self._size - len(kept)
            self._parts, self._size = [kept], len(kept)
        return len(text)

    def text(self) -> str:
        """What was written while held: its last `OUTPUT_CHARS` characters, with a marker if cut."""
        kept = "".join(self._parts)[-OUTPUT_CHARS:]
        cut = self._cut + self._size - len(kept)
        return f"[{cut} characters cut]\n{kept}" if cut else kept

    def release(self) -> None:
        self._held = False
        self._parts, self._size = [], 0

    def flush(self) -> None:
        if not self._held and (target := getattr(sys, self.name)) not in (self, None):
            target.flush()

    @property
    def encoding(self) -> str:  # type: ignore[override]
        return str(getattr(self.real, "encoding", None) or "utf-8")

    def isatty(self) -> bool:
        return bool(self.real is not None and self.real.isatty())

    def fileno(self) -> int:
        if self.real is None:
            raise io.UnsupportedOperation("fileno")
        return int(self.real.fileno())

    def writable(self) -> bool:
        return True
