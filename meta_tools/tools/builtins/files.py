"""`read_file` and `list_directory`, confined to configured root folders.

A path is refused when it has a `..` part, or when it (following every
symlink) lands outside the roots. The check is made on the opened file
descriptor too where the OS can name it (Linux `/proc/self/fd`), so swapping
a folder for a symlink between the check and the open does not get out.
"""

from __future__ import annotations

import os
import stat
from collections.abc import Sequence
from pathlib import Path, PurePath
from typing import Annotated

from typing_extensions import Doc

from ...exceptions import ToolArgumentsError
from ..function import FunctionTool

__all__ = ["MAX_ENTRIES", "Confinement", "list_directory_tool", "read_file_tool"]

MAX_ENTRIES = 1000
_SCAN_LIMIT = 10 * MAX_ENTRIES  # entries kept for sorting; the rest are only counted
_PROC_FD = Path("/proc/self/fd")


class Confinement:
    """Resolves paths the LLM gives against root folders, refusing anything outside.

    Args:
        tool: the tool name used in error messages.
        roots: existing folders (resolved, symlinks followed, when built).
    """

    def __init__(self, tool: str, roots: Sequence[Path]) -> None:
        self.tool = tool
        self.roots = [Path(os.path.realpath(root)) for root in roots]

    def refuse(self, problem: str) -> ToolArgumentsError:
        """The error for a bad `path` argument (the LLM can correct it)."""
        return ToolArgumentsError(self.tool, [f"'path': {problem}"])

    def inside(self, path: str) -> bool:
        """Whether the real path `path` lies in a root."""
        return any(os.path.commonpath([root, path]) == str(root) for root in self.roots)

    def resolve(self, path: str) -> Path:
        """The real path `path` names, if it stays inside a root.

        Relative paths are relative to the first root.

        Raises:
            ToolArgumentsError: `..`, a NUL byte, or a location outside every root.
        """
        if "\x00" in path:
            raise self.refuse("contains a NUL byte")
        if ".." in PurePath(path).parts:
            raise self.refuse(f"{path!r} contains '..'; give a path inside {self.describe()}")
        candidate = Path(path) if os.path.isabs(path) else self.roots[0] / path
        real = os.path.realpath(candidate)
        if not self.inside(real):
            raise self.refuse(f"{path!r} is outside the allowed folders {self.describe()}")
        return Path(real)

    def open(self, path: str, *, directory: bool) -> int:
        """Open `path` read-only (no blocking on FIFOs, no final symlink) and re-check it.

        Raises:
            ToolArgumentsError: outside the roots, missing, or not a file / folder.
        """
        real = self.resolve(path)
        flags = os.O_RDONLY | os.O_NONBLOCK | getattr(os, "O_NOFOLLOW", 0)
        flags |= getattr(os, "O_CLOEXEC", 0) | (getattr(os, "O_DIRECTORY", 0) if directory else 0)
        kind = "folder" if directory else "file"
        try:
            fd = os.open(real, flags)
        except FileNotFoundError:
            raise self.refuse(f"no such {kind}: {path!r}") from None
        except NotADirectoryError:
            raise self.refuse(f"{path!r} is not a folder") from None
        except OSError as exc:
            raise self.refuse(f"cannot open {path!r}: {exc.strerror}") from None
        try:
            self._check_opened(fd, path, directory)
        except BaseException:
            os.close(fd)
            raise
        return fd

    def _check_opened(self, fd: int, path: str, directory: bool) -> None:
        if _PROC_FD.is_dir():
            opened = os.readlink(_PROC_FD / str(fd))
            if not self.inside(opened):
                raise self.refuse(f"{path!r} is outside the allowed folders {self.describe()}")
        mode = os.fstat(fd).st_mode
        if directory and not stat.S_ISDIR(mode):
            raise self.refuse(f"{path!r} is not a folder")
        if not directory and not stat.S_ISREG(mode):
            what = "a folder; use list_directory" if stat.S_ISDIR(mode) else "not a regular file"
            raise self.refuse(f"{path!r} is {what}")

    def describe(self) -> str:
        return ", ".join(str(root) for root in self.roots)


def read_file_tool(roots: Sequence[Path], *, max_bytes: int) -> FunctionTool:
    """The `read_file` tool: UTF-8 text under `roots`, at most `max_bytes` of it."""
    confinement = Confinement("read_file", roots)

    def read_file(
        path: Annotated[str, Doc("The file, relative to the first allowed folder or absolute.")],
    ) -> str:
        fd = confinement.open(path, directory=False)
        with os.fdopen(fd, "rb") as file:
            size = os.fstat(file.fileno()).st_size
            data = file.read(max_bytes + 1)
        if b"\x00" in data[:8192]:
            raise confinement.refuse(f"{path!r} is a binary file ({size} bytes); not shown")
        text = data[:max_bytes].decode("utf-8", errors="replace")
        if len(data) > max_bytes:
            text += f"…[truncated: the file has {size} bytes, {max_bytes} are shown]"
        return text

    description = (
        f"Read a UTF-8 text file (at most {max_bytes} bytes are returned). Allowed folders: "
        f"{confinement.describe()}; relative paths start in {confinement.roots[0]}."
    )
    return FunctionTool("read_file", read_file, description=description)


def list_directory_tool(roots: Sequence[Path]) -> FunctionTool:
    """The `list_directory` tool: the entries of a folder under `roots`, sorted."""
    confinement = Confinement("list_directory", roots)

    def list_directory(
        path: Annotated[
            str, Doc("The folder, relative to the first allowed folder or absolute.")
        ] = ".",
    ) -> list[str]:
        fd = confinement.open(path, directory=True)
        found: list[str] = []
        total = 0
        try:
            with os.scandir(fd) as entries:
                for entry in entries:
                    total += 1
                    if len(found) < _SCAN_LIMIT:
                        found.append(_entry_line(entry))
        finally:
            os.close(fd)
        shown = sorted(found)[:MAX_ENTRIES]
        if total > len(shown):
            shown.append(f"…[{total - len(shown)} more entries]")
        return shown

    description = (
        "List a folder: one entry per line, 'name/' for folders, 'name@' for symlinks, "
        f"'name (N bytes)' for files. Allowed folders: {confinement.describe()}; "
        f"relative paths start in {confinement.roots[0]}."
    )
    return FunctionTool("list_directory", list_directory, description=description)


def _entry_line(entry: os.DirEntry[str]) -> str:
    if entry.is_symlink():
        return f"{entry.name}@"
    if entry.is_dir(follow_symlinks=False):
        return f"{entry.name}/"
    try:
        size = entry.stat(follow_symlinks=False).st_size
    except OSError:
        return entry.name
    return f"{entry.name} ({size} bytes)"
