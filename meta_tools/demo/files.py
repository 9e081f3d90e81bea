"""Demo tools, files group: list, read, search and describe files under one sandbox folder.

Every path is relative to the sandbox root; a path that leaves it (`..`,
an absolute path, a symlink pointing outside) is refused. Reads are bounded.
"""

from __future__ import annotations

import fnmatch
import hashlib
import os
from pathlib import Path
from typing import Annotated, Any

from mcp.server.mcpserver.exceptions import ToolError
from pydantic import Field

__all__ = ["FileSandbox"]

MAX_ENTRIES = 500
MAX_READ_BYTES = 1_000_000
MAX_SEARCH_FILES = 2_000


class FileSandbox:
    """File tools confined to `root` (resolved once; symlinks are followed and checked)."""

    def __init__(self, root: str | os.PathLike[str]) -> None:
        self.root = Path(root).resolve()
        if not self.root.is_dir():
            raise ValueError(f"sandbox root {str(root)!r} is not a directory")

    def _resolve(self, path: str) -> Path:
        cleaned = path.strip() or "."
        if Path(cleaned).is_absolute():
            raise ToolError(
                f"{path!r} is an absolute path; give a path relative to the sandbox folder"
            )
        target = (self.root / cleaned).resolve()
        if target != self.root and self.root not in target.parents:
            raise ToolError(f"{path!r} is outside the sandbox folder; paths must stay inside it")
        return target

    def _relative(self, target: Path) -> str:
        return target.relative_to(self.root).as_posix() if target != self.root else "."

    def _existing(self, path: str, *, directory: bool) -> Path:
        target = self._resolve(path)
        if not target.exists():
            raise ToolError(f"{path!r} does not exist; use list_files to see what is there")
        if directory and not target.is_dir():
            raise ToolError(f"{path!r} is a file, not a folder")
        if not directory and not target.is_file():
            raise ToolError(f"{path!r} is a folder, not a file; use list_files for folders")
        return target

    def _walk(self, start: Path, pattern: str, recursive: bool) -> list[Path]:
        """Matching paths under `start`, sorted, never leaving the sandbox."""
        found: list[Path] = []
        if recursive:
            for folder, dirs, files in os.walk(start):
                dirs.sort()
                base = Path(folder)
                for name in sorted(dirs) + sorted(files):
                    candidate = base / name
                    inside = candidate.resolve()
                    if inside != self.root and self.root not in inside.parents:
                        continue
                    if fnmatch.fnmatch(name, pattern):
                        found.append(candidate)
            found.sort(key=lambda p: p.relative_to(start).parts)
        else:
            found = [p for p in sorted(start.iterdir()) if fnmatch.fnmatch(p.name, pattern)]
        return found

    def list_files(
        self,
        path: Annotated[str, Field(description="Folder to list, relative to the sandbox.")] = ".",
        pattern: Annotated[str, Field(description="Glob on file names, e.g. '*.md'.")] = "*",
        recursive: Annotated[bool, Field(description="Include sub-folders.")] = False,
    ) -> dict[str, Any]:
        """List the files and folders in a sandbox folder (names, kinds and sizes)."""
        start = self._existing(path, directory=True)
        entries = []
        matched = self._walk(start, pattern, recursive)
        for entry in matched[:MAX_ENTRIES]:
            is_dir = entry.is_dir()
            entries.append(
                {
                    "path": self._relative(entry),
                    "type": "folder" if is_dir else "file",
                    "size": None if is_dir else entry.stat().st_size,
                }
            )
        return {
            "folder": self._relative(start),
            "entries": entries,
            "total": len(matched),
            "truncated": len(matched) > MAX_ENTRIES,
        }

    def _read_text(self, target: Path, path: str) -> str:
        size = target.stat().st_size
        if size > MAX_READ_BYTES:
            raise ToolError(
                f"{path!r} is {size} bytes; files over {MAX_READ_BYTES} bytes are not read"
            )
        data = target.read_bytes()
        if b"\x00" in data[:8192]:
            raise ToolError(f"{path!r} is a binary file; only text files can be read")
        return data.decode("utf-8", errors="replace")

    def read_file(
        self,
        path: Annotated[str, Field(description="File to read, relative to the sandbox.")],
        start_line: Annotated[int, Field(description="First line to return (1-based).", ge=1)] = 1,
        max_lines: Annotated[
            int, Field(description="How many lines to return at most.", ge=1, le=2000)
        ] = 200,
    ) -> dict[str, Any]:
        """Read a text file from the sandbox, a range of lines at a time."""
        target = self._existing(path, directory=False)
        lines = self._read_text(target, path).splitlines()
        if lines and start_line > len(lines):
            raise ToolError(
                f"{path!r} has {len(lines)} lines; start_line {start_line} is past the end"
            )
        chosen = lines[start_line - 1 : start_line - 1 + max_lines]
        return {
            "path": self._relative(target),
            "start_line": start_line,
            "end_line": start_line + len(chosen) - 1,
            "total_lines": len(lines),
            "content": "\n".join(chosen),
            "truncated": start_line - 1 + len(chosen) < len(lines),
        }

    def search_files(
        self,
        query: Annotated[str, Field(description="Text to find (case-insensitive).")],
        path: Annotated[str, Field(description="Folder to search, relative to the sandbox.")] = ".",
        pattern: Annotated[str, Field(description="Glob on file names, e.g. '*.py'.")] = "*",
        max_matches: Annotated[int, Field(description="Stop after this many.", ge=1, le=500)] = 50,
    ) -> dict[str, Any]:
        """Search the text files of a sandbox folder (and its sub-folders) for a word or phrase."""
        if not query.strip():
            raise ToolError("query must not be empty")
        start = self._existing(path, directory=True)
        needle = query.lower()
        matches: list[dict[str, Any]] = []
        searched = 0
        for candidate in self._walk(start, pattern, recursive=True):
            if not candidate.is_file() or candidate.stat().st_size > MAX_READ_BYTES:
                continue
            if searched >= MAX_SEARCH_FILES or len(matches) >= max_matches:
                break
            searched += 1
            data = candidate.read_bytes()
            if b"\x00" in data[:8192]:
                continue
            for number, line in enumerate(data.decode("utf-8", errors="replace").splitlines(), 1):
                if needle in line.lower():
                    matches.append(
                        {
                            "path": self._relative(candidate),
                            "line": number,
                            "text": line.strip()[:300],
                        }
                    )
                    if len(matches) >= max_matches:
                        break
        return {"query": query, "files_searched": searched, "matches": matches}

    def file_info(
        self, path: Annotated[str, Field(description="File or folder, relative to the sandbox.")]
    ) -> dict[str, Any]:
        """Describe a file or folder: kind, size, line count and SHA-256 of a file."""
        target = self._resolve(path)
        if not target.exists():
            raise ToolError(f"{path!r} does not exist; use list_files to see what is there")
        if target.is_dir():
            children = list(target.iterdir())
            return {
                "path": self._relative(target),
                "type": "folder",
                "files": sum(1 for c in children if c.is_file()),
                "folders": sum(1 for c in children if c.is_dir()),
            }
        size = target.stat().st_size
        info: dict[str, Any] = {"path": self._relative(target), "type": "file", "size": size}
        if size <= MAX_READ_BYTES:
            data = target.read_bytes()
            info["sha256"] = hashlib.sha256(data).hexdigest()
            info["binary"] = b"\x00" in data[:8192]
            info["lines"] = (
                None
                if info["binary"]
                else data.count(b"\n") + (1 if data and not data.endswith(b"\n") else 0)
            )
        return info
