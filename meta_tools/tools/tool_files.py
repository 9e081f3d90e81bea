"""Python files of `@tool` functions in a folder, read without running them.

When a config lists a tool that no source provides, the likeliest cause is a
file of `@tool` functions beside the config that the config does not load.
`tool_files` finds such files by parsing them (`ast`): nothing is imported, so
a script that does something when run stays still.
"""

from __future__ import annotations

import ast
from dataclasses import dataclass
from pathlib import Path

__all__ = ["ToolFile", "tool_files"]

MAX_FILES = 200
"""The most `.py` files of one folder that are read."""

MAX_FILE_BYTES = 512_000
"""A larger file is not read (a file of tools is rarely this big)."""


@dataclass(frozen=True, slots=True)
class ToolFile:
    """A Python file and the names of the `@tool` functions it defines (`name=` if given)."""

    path: Path
    names: tuple[str, ...]


def tool_files(folder: Path) -> list[ToolFile]:
    """The `.py` files directly in `folder` that define `@tool` functions, sorted by name.

    A file that cannot be read or parsed is skipped: this only suggests.
    """
    try:
        paths = sorted(p for p in folder.glob("*.py") if p.is_file())[:MAX_FILES]
    except OSError:
        return []
    found = []
    for path in paths:
        names = _tool_names(path)
        if names:
            found.append(ToolFile(path, names))
    return found


def _tool_names(path: Path) -> tuple[str, ...]:
    try:
        if path.stat().st_size > MAX_FILE_BYTES:
            return ()
        tree = ast.parse(path.read_bytes(), filename=str(path))
    except (OSError, SyntaxError, ValueError):
        return ()
    names = []
    for node in tree.body:
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)):
            for decorator in node.decorator_list:
                name = _decorated_name(decorator, node.name)
                if name is not None:
                    names.append(name)
                    break
    return tuple(names)


def _decorated_name(decorator: ast.expr, function: str) -> str | None:
    """The tool name `decorator` gives `function`, if it is `@tool` (bare, called or dotted)."""
    call = decorator if isinstance(decorator, ast.Call) else None
    target = call.func if call is not None else decorator
    is_tool = (isinstance(target, ast.Name) and target.id == "tool") or (
        isinstance(target, ast.Attribute) and target.attr == "tool"
    )
    if not is_tool:
        return None
    if call is not None:
        for keyword in call.keywords:
            if keyword.arg == "name" and isinstance(keyword.value, ast.Constant):
                value = keyword.value.value
                return value if isinstance(value, str) else function
        if call.args and isinstance(call.args[0], ast.Constant):
            first = call.args[0].value
            return first if isinstance(first, str) else function
    return function
