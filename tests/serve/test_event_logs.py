"""The event logs behind resumable streams keep what a resumption needs, per session, bounded."""

from __future__ import annotations

from collections.abc import AsyncIterator, Callable

import mcp_types
import pytest

from meta_tools.config import ResumeConfig
from meta_tools.serve.events import EventLog, MemoryEventLog, RedisEventLog
from meta_tools.support.redis_client import connect

pytestmark = pytest.mark.anyio

Logs = Callable[[ResumeConfig], EventLog]


def note(n: int) -> mcp_types.JSONRPCNotification:
    return mcp_types.JSONRPCNotification(
        jsonrpc="2.0", method="notifications/progress", params={"progressToken": 1, "progress": n}
    )


@pytest.fixture(params=["memory", "redis"])
async def logs(request: pytest.FixtureRequest) -> AsyncIterator[Logs]:
    """A factory of event logs of one kind: `make(settings)`; Redis ones share one flushed db."""
    if request.param == "memory":
        yield MemoryEventLog
        return
    url = request.getfixturevalue("redis_url")
    client = connect(url)
    await client.flushdb()
    try:

        def make(settings: ResumeConfig) -> EventLog:
            return RedisEventLog(client, settings)

        yield make
    finally:
        await client.aclose()


async def test_a_stream_replays_its_messages_after_an_event_and_skips_its_priming_event(
    logs: Logs,
) -> None:
    log = logs(ResumeConfig())
    priming = await log.append("s1", "7", None)
    first = await log.append("s1", "7", note(1))
    second = await log.append("s1", "7", note(2))
    found = await log.after("s1", priming)
    assert found is not None and found.stream == "7"
    assert [(e.event_id, e.message) for e in found.events] == [(first, note(1)), (second, note(2))]
    last = await log.after("s1", second)
    assert last is not None and last.events == []


async def test_the_same_request_id_in_two_sessions_is_two_streams_and_ids_do_not_cross(
    logs: Logs,
) -> None:
    log = logs(ResumeConfig())
    mine = await log.append("s1", "1", None)
    theirs = await log.append("s2", "1", None)
    await log.append("s1", "1", note(1))
    await log.append("s2", "1", note(2))
    found = await log.after("s1", mine)
    assert found is not None and [e.message for e in found.events] == [note(1)]
    assert await log.after("s2", mine) is None
    other = await log.after("s2", theirs)
    assert other is not None and [e.message for e in other.events] == [note(2)]


async def test_a_stream_keeps_only_its_last_events_and_an_older_id_resumes_nothing(
    logs: Logs,
) -> None:
    log = logs(ResumeConfig(max_events=3))
    ids = [await log.append("s1", "4", note(n)) for n in range(5)]
    assert await log.after("s1", ids[1]) is None  # dropped: a gap would be silent
    found = await log.after("s1", ids[2])
    assert found is not None and [e.message for e in found.events] == [note(3), note(4)]


async def test_beyond_max_streams_the_least_recently_used_stream_is_dropped_first(
    logs: Logs,
) -> None:
    log = logs(ResumeConfig(max_streams=2))
    old = await log.append("s1", "1", None)
    used = await log.append("s1", "2", None)
    await log.append("s1", "1", note(1))  # stream 1 used again: stream 2 is now the oldest
    await log.append("s1", "3", None)
    assert await log.after("s1", used) is None
    assert await log.after("s1", old) is not None


@pytest.mark.parametrize("event_id", ["", "1", "x.y", "1.", "0" * 32 + ".1-0-0", "9" * 400])
async def test_an_id_the_log_never_gave_resumes_nothing(logs: Logs, event_id: str) -> None:
    log = logs(ResumeConfig())
    await log.append("s1", "1", None)
    assert await log.after("s1", event_id) is None
