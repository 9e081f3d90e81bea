"""Every fault test runs under a leak check: no task, child process or descriptor may outlive it."""

from __future__ import annotations

from collections.abc import AsyncIterator

import pytest

from tests.fakes.llm_server import llm_server, llm_server_session  # noqa: F401  (fixtures)
from tests.leaks import Snapshot


@pytest.fixture(autouse=True)
async def no_leaks(anyio_backend: str) -> AsyncIterator[None]:
    """Fail the test if it leaves an asyncio task, a child process or a file descriptor behind."""
    before = Snapshot.take()
    yield
    await before.assert_no_leaks()
