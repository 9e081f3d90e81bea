"""Run one child process with a timeout, an output cap and a clean kill of its whole group.

The child starts in a new session (its own process group), so a timeout, an
output overflow or a cancelled call kills it together with anything it
spawned, and the exit is always awaited: no zombie, no open pipe is left.
"""

from __future__ import annotations

import codecs
import os
import signal
import subprocess
from collections.abc import Mapping, Sequence
from dataclasses import dataclass

import anyio
from anyio.abc import ByteReceiveStream, Process
from anyio.lowlevel import RunVar

from ...exceptions import ToolTimeoutError

__all__ = ["MAX_CHILD_PROCESSES", "ProcessOutput", "minimal_env", "run_process"]

_CHUNK = 65_536

MAX_CHILD_PROCESSES = 8
"""Children of the built-ins alive at once in this process (per event loop); more wait."""
_SLOTS: RunVar[anyio.CapacityLimiter] = RunVar("meta_tools_child_processes")


def _slots() -> anyio.CapacityLimiter:
    """The process-wide bound on running children, made once per event loop."""
    try:
        return _SLOTS.get()
    except LookupError:
        limiter = anyio.CapacityLimiter(MAX_CHILD_PROCESSES)
        _SLOTS.set(limiter)
        return limiter


@dataclass(frozen=True, slots=True)
class ProcessOutput:
    """What a finished child left: its exit code (negative: killed by that signal) and output."""

    exit_code: int
    stdout: str
    stderr: str


class _Capture:
    """One output stream, decoded as UTF-8 and kept up to `limit` characters (not bytes)."""

    def __init__(self, limit: int) -> None:
        self.limit = limit
        self.parts: list[str] = []
        self.chars = 0
        self.overflow = False
        self._decoder = codecs.getincrementaldecoder("utf-8")(errors="replace")

    def add(self, chunk: bytes, *, final: bool = False) -> bool:
        """Keep what fits; True when the stream went past the limit."""
        text = self._decoder.decode(chunk, final=final)
        room = self.limit - self.chars
        self.parts.append(text[: max(room, 0)])
        self.chars += min(len(text), max(room, 0))
        if len(text) > room:
            self.overflow = True
        return self.overflow

    def text(self) -> str:
        if not self.overflow:
            self.add(b"", final=True)  # a character cut by the end of the stream
        shown = "".join(self.parts)
        if self.overflow:
            shown += f"…[output cut at {self.limit} characters; the process was stopped]"
        return shown


def minimal_env(**extra: str) -> dict[str, str]:
    """The environment of a child: PATH and a UTF-8 locale, nothing of ours (no API keys)."""
    return {
        "PATH": os.environ.get("PATH", os.defpath),
        "LANG": "C.UTF-8",
        "LC_ALL": "C.UTF-8",
        **extra,
    }


def _kill_group(process: Process) -> None:
    """SIGKILL the child's process group (the child and everything it started)."""
    if hasattr(os, "killpg"):
        try:
            os.killpg(process.pid, signal.SIGKILL)
        except (ProcessLookupError, PermissionError):  # already gone
            return
    else:  # pragma: no cover - Windows has no process groups
        try:
            process.kill()
        except ProcessLookupError:
            return


async def run_process(
    argv: Sequence[str],
    *,
    tool: str,
    cwd: str,
    env: Mapping[str, str],
    timeout_s: float,
    max_output_chars: int,
) -> ProcessOutput:
    """Run `argv` to completion and collect its output, each stream capped.

    A stream that passes `max_output_chars` characters ends the run: the group is
    killed and the output is returned with a visible marker. At most
    `MAX_CHILD_PROCESSES` children run at once; a call waits for a free slot
    (within its tool's timeout).

    Raises:
        ToolTimeoutError: the child ran past `timeout_s` (it was killed; the
            message carries the output so far).
    """
    async with _slots():
        return await _run(
            argv, tool=tool, cwd=cwd, env=env, timeout_s=timeout_s, limit=max_output_chars
        )


async def _run(
    argv: Sequence[str],
    *,
    tool: str,
    cwd: str,
    env: Mapping[str, str],
    timeout_s: float,
    limit: int,
) -> ProcessOutput:
    process = await anyio.open_process(
        list(argv),
        stdin=subprocess.DEVNULL,
        cwd=cwd,
        env=dict(env),
        start_new_session=True,
    )
    out = _Capture(limit)
    err = _Capture(limit)

    async def drain(stream: ByteReceiveStream | None, capture: _Capture) -> None:
        if stream is None:
            return
        async for chunk in stream:
            if capture.add(chunk):
                _kill_group(process)  # EOF follows on both streams
                return

    exit_code = -1
    group_killed = False

    async def reap() -> None:
        nonlocal exit_code, group_killed
        exit_code = await process.wait()
        _kill_group(process)  # what it left running in its group would hold the pipes open
        group_killed = True

    try:
        with anyio.move_on_after(timeout_s) as deadline:
            async with anyio.create_task_group() as group:
                group.start_soon(drain, process.stdout, out)
                group.start_soon(drain, process.stderr, err)
                group.start_soon(reap)
    finally:
        # Also on cancellation: never leave the group running or the pipes open.
        with anyio.CancelScope(shield=True):
            if not group_killed:
                _kill_group(process)
            await process.aclose()
    if deadline.cancelled_caught:
        so_far = out.text() or err.text() or "(none)"
        raise ToolTimeoutError(
            f"tool {tool!r} did not finish within {timeout_s:g} s and was stopped;"
            f" output so far: {so_far}"
        )
    return ProcessOutput(exit_code, out.text(), err.text())
