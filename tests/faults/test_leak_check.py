"""The leak check itself: it must catch a stray task, child process and descriptor."""

from __future__ import annotations

import asyncio
import os
import sys

import anyio
import pytest

from tests.leaks import Snapshot

pytestmark = pytest.mark.anyio


async def test_the_leak_check_reports_a_task_a_child_process_and_a_descriptor() -> None:
    before = Snapshot.take()
    release = asyncio.Event()
    task = asyncio.get_running_loop().create_task(release.wait())
    fd = os.open(os.devnull, os.O_RDONLY)
    process = await anyio.open_process([sys.executable, "-c", "import time; time.sleep(60)"])
    try:
        with pytest.raises(AssertionError) as caught:
            await before.assert_no_leaks(grace=0.2)
        report = str(caught.value)
        assert "Event.wait" in report
        assert f"'child processes': [{process.pid}]" in report
        assert f"{fd}: '/dev/null'" in report
    finally:
        release.set()
        await task
        os.close(fd)
        process.kill()
        await process.aclose()
    await before.assert_no_leaks()
