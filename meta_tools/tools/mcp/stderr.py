"""A stdio MCP server's stderr: logged, and its last lines kept for error messages."""

from __future__ import annotations

import logging
import os
import threading
from collections import deque
from typing import IO, TextIO, cast

import anyio
import anyio.to_thread

__all__ = ["StderrTail"]

logger = logging.getLogger("meta_tools.mcp")

_TAIL_LINES = 20


class StderrTail:
    """A pipe for a subprocess's stderr that keeps its last lines (for error messages).

    A daemon thread reads the pipe, logs each line at DEBUG and keeps the last
    `_TAIL_LINES`; it ends at EOF, when the process and our copy of the write
    end are both closed.
    """

    def __init__(self, server: str) -> None:
        self._server = server
        self._lines: deque[str] = deque(maxlen=_TAIL_LINES)
        self._done = threading.Event()
        self._logging = True  # off once the session ends: late lines are kept, not logged
        read_fd, write_fd = os.pipe()
        self._writer: TextIO | None = cast(TextIO, os.fdopen(write_fd, "w", encoding="utf-8"))
        reader = os.fdopen(read_fd, "r", encoding="utf-8", errors="replace")
        thread = threading.Thread(
            target=self._drain, args=(reader,), name=f"mcp-stderr-{server}", daemon=True
        )
        thread.start()

    def writer(self) -> TextIO:
        """The write end to hand to the subprocess (ours is closed by `close_writer`)."""
        assert self._writer is not None
        return self._writer

    def stop_logging(self) -> None:
        self._logging = False

    def close_writer(self) -> None:
        """Drop our copy of the write end once the process holds its own."""
        if self._writer is not None:
            self._writer.close()
            self._writer = None

    def _drain(self, reader: IO[str]) -> None:
        with reader:
            for line in reader:
                text = line.rstrip()
                if text:
                    self._lines.append(text)
                    if self._logging:
                        logger.debug("MCP server %r stderr: %s", self._server, text)
        self._done.set()

    async def text(self, *, wait_s: float = 0.5) -> str:
        """The last lines; waits briefly for a dying process's last words."""
        self.close_writer()
        await anyio.to_thread.run_sync(self._done.wait, wait_s)
        return "\n".join(self._lines)
