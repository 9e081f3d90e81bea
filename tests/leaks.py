"""Leak checks: asyncio tasks, child processes and file descriptors that outlive a test.

`Snapshot.take()` before, `await snapshot.assert_no_leaks()` after. Tasks are
awaited and processes and descriptors re-checked for a bounded grace period:
a server thread closes its end of a socket a moment after the client, and a
killed process needs a moment to die. Anything still there after it is a leak.
"""

from __future__ import annotations

import asyncio
import os
import time
from collections.abc import Iterable
from dataclasses import dataclass
from pathlib import Path

import anyio
import psutil

__all__ = ["Snapshot", "is_running", "wait_until_stopped"]

_FD_DIR = Path("/proc/self/fd")
_POLL_S = 0.02


def is_running(pid: int) -> bool:
    """True while `pid` lives; a zombie another process must reap counts as stopped."""
    try:
        process = psutil.Process(pid)
        if process.status() != psutil.STATUS_ZOMBIE:
            return True
        return process.ppid() == os.getpid()  # our zombie: we never reaped it
    except psutil.NoSuchProcess:
        return False


async def wait_until_stopped(pids: Iterable[int], *, timeout: float = 5.0) -> list[int]:
    """Wait (bounded) for `pids` to stop; returns those still running."""
    pending = list(pids)
    deadline = time.monotonic() + timeout
    while True:
        pending = [pid for pid in pending if is_running(pid)]
        if not pending or time.monotonic() > deadline:
            return pending
        await anyio.sleep(_POLL_S)


def _is_foreign(task: asyncio.Task[object]) -> bool:
    """Tasks that are not the test's: anyio's pytest runner hosts fixtures in its own, and
    sse-starlette starts one shutdown watcher per event loop that outlives any one server."""
    coro = task.get_coro()
    name = getattr(coro, "__qualname__", "")
    module = getattr(getattr(coro, "cr_code", None), "co_filename", "")
    watcher = name == "_shutdown_watcher" and module.endswith("sse_starlette/sse.py")
    return name.startswith("TestRunner.") or watcher


def _open_fds() -> dict[int, str]:
    if not _FD_DIR.is_dir():  # pragma: no cover - not Linux
        return {fd: "?" for fd in range(psutil.Process().num_fds())}
    found: dict[int, str] = {}
    for name in os.listdir(_FD_DIR):
        try:
            found[int(name)] = os.readlink(_FD_DIR / name)
        except OSError:  # the listing's own descriptor, closed by now
            continue
    return found


@dataclass(frozen=True)
class Snapshot:
    """What was running and open when the test started."""

    tasks: frozenset[asyncio.Task[object]]
    children: frozenset[int]
    fds: dict[int, str]

    @classmethod
    def take(cls) -> Snapshot:
        try:
            tasks = frozenset(asyncio.all_tasks())
        except RuntimeError:  # no running loop
            tasks = frozenset()
        children = frozenset(p.pid for p in psutil.Process().children(recursive=True))
        return cls(tasks, children, _open_fds())

    def _new_fds(self) -> dict[int, str]:
        return {fd: target for fd, target in _open_fds().items() if self.fds.get(fd) != target}

    async def assert_no_leaks(self, *, grace: float = 5.0) -> None:
        """Fail with the list of tasks, processes and descriptors the test left behind."""
        current = asyncio.current_task()
        tasks = [
            t
            for t in asyncio.all_tasks()
            if t not in self.tasks and t is not current and not _is_foreign(t)
        ]
        if tasks:
            await asyncio.wait(tasks, timeout=grace)
        leaked_tasks = sorted(repr(t.get_coro()) for t in tasks if not t.done())
        mine = psutil.Process().children(recursive=True)
        leaked_children = await wait_until_stopped(
            [p.pid for p in mine if p.pid not in self.children], timeout=grace
        )
        deadline = time.monotonic() + grace
        leaked_fds = self._new_fds()
        while leaked_fds and time.monotonic() < deadline:
            await anyio.sleep(_POLL_S)
            leaked_fds = self._new_fds()
        problems = {
            "tasks": leaked_tasks,
            "child processes": leaked_children,
            "file descriptors": leaked_fds,
        }
        assert not any(problems.values()), f"the test leaked: {problems}"
