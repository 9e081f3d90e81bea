"""The files the CLI writes (`init`, `group --write`): never through a symbolic link.

A path where anything is (a file, a folder, a symbolic link, also one that
points nowhere) is taken. Without `--force` nothing is written there. With
`--force` a file is overwritten and a link is replaced by the file itself:
its target is never opened. A folder, a FIFO or a device is never replaced.
The final open follows no link (`O_NOFOLLOW`) and, for a free path, creates
the file or fails (`O_EXCL`), so a link put there after the check is refused
too. The folders above the file are the path the user gave, and are followed.
"""

from __future__ import annotations

import errno
import os
import stat
from dataclasses import dataclass
from pathlib import Path
from typing import Literal

from ..exceptions import MetaToolsError

__all__ = ["Taken", "WriteRefusedError", "make_folder", "taken", "write_file"]

_NOFOLLOW = getattr(os, "O_NOFOLLOW", 0)
_NONBLOCK = getattr(os, "O_NONBLOCK", 0)  # a FIFO put there must not block the open
_REFUSED = (errno.EEXIST, errno.ELOOP, errno.EISDIR, errno.ENXIO)  # what an open meets instead


@dataclass(frozen=True)
class Taken:
    """What is already at a path the CLI was asked to write."""

    path: Path
    kind: Literal["file", "folder", "link", "other"]
    target: str = ""
    """Where a link points, as the link says."""

    def describe(self, *, quoted: bool = True) -> str:
        """`'x' exists`, `'x' is a symbolic link to 'y'`, `'x' is a folder`…"""
        name = repr(str(self.path)) if quoted else str(self.path)
        match self.kind:
            case "file":
                return f"{name} exists"
            case "link":
                return f"{name} is a symbolic link to {self.target!r}"
            case "folder":
                return f"{name} is a folder"
            case _:
                return f"{name} is not a regular file"

    @property
    def replaceable(self) -> bool:
        """Whether `--force` writes a file here (a file is overwritten, a link replaced)."""
        return self.kind in ("file", "link")

    @property
    def hint(self) -> str:
        """What `--force` would do here, if anything."""
        match self.kind:
            case "file":
                return "pass --force to overwrite it"
            case "link":
                return (
                    "nothing is written through a link: pass --force to replace the link"
                    " itself (its target is left alone)"
                )
            case _:
                return "only a file or a link is replaced: choose another path"


class WriteRefusedError(MetaToolsError):
    """A path to write is taken, or was taken while writing: nothing was written there."""

    def __init__(self, found: Taken, why: str) -> None:
        self.found = found
        super().__init__(f"{found.describe()}; nothing was written: {why}")


def taken(path: Path) -> Taken | None:
    """What is at `path` (a link is not followed), or None when nothing is."""
    try:
        mode = path.lstat().st_mode
    except FileNotFoundError:
        return None
    if stat.S_ISLNK(mode):
        return Taken(path, "link", os.readlink(path))
    if stat.S_ISDIR(mode):
        return Taken(path, "folder")
    return Taken(path, "file" if stat.S_ISREG(mode) else "other")


def write_file(path: Path, data: str | bytes, *, force: bool) -> None:
    """Write `data` (text as UTF-8) to `path`: a free path, or with `force` a file or a link.

    Raises:
        WriteRefusedError: `path` is taken and `force` is False; it is a folder,
            a FIFO or a device; or something was put there meanwhile.
    """
    found = taken(path)
    if found is not None and not (force and found.replaceable):
        raise WriteRefusedError(found, found.hint)
    if found is not None and found.kind == "link":
        path.unlink()  # the link itself: its target is never opened
    flags = os.O_WRONLY | os.O_CREAT | _NOFOLLOW | _NONBLOCK
    flags |= os.O_TRUNC if found is not None and found.kind == "file" else os.O_EXCL
    try:
        fd = os.open(path, flags, 0o666)
    except OSError as exc:
        if exc.errno not in _REFUSED:
            raise
        raise WriteRefusedError(_now(path), "it was put there while writing") from None
    with os.fdopen(fd, "wb") as file:
        if not stat.S_ISREG(os.fstat(fd).st_mode):  # a FIFO with a reader opens
            raise WriteRefusedError(Taken(path, "other"), "it was put there while writing")
        file.write(data.encode("utf-8") if isinstance(data, str) else data)


def make_folder(path: Path, *, force: bool) -> None:
    """Create the folder `path`; with `force` a folder there is kept and a link replaced.

    Raises:
        WriteRefusedError: `path` is taken and `force` is False, or it is not a
            folder nor a link; or something was put there meanwhile.
    """
    found = taken(path)
    if found is not None and found.kind in ("file", "other"):
        raise WriteRefusedError(found, "a folder is needed there: move it away")
    if found is not None and not force:
        raise WriteRefusedError(found, found.hint)
    if found is not None and found.kind == "folder":
        return
    if found is not None:
        path.unlink()  # a link, never followed
    try:
        path.mkdir()
    except FileExistsError:
        raise WriteRefusedError(_now(path), "it was put there while writing") from None


def _now(path: Path) -> Taken:
    return taken(path) or Taken(path, "other")
