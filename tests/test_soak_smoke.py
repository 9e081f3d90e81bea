"""The soak benchmark (`python -m benchmarks soak`) at smoke scale, so CI covers its code path:
the router served over streamable HTTP in its own process, real `mcp.Client`s, every result
checked against its own request, and the memory verdict.
"""

from __future__ import annotations

import copy
from pathlib import Path
from typing import Any

import pytest
from mcp import Client

from benchmarks.soak import served_router, soak, verdict, write_config
from benchmarks.soak_tasks import check, request
from tests.leaks import Snapshot

pytestmark = pytest.mark.anyio

CATEGORIES = ["math_units", "dates_time_zones", "text_analysis", "files"]


async def test_twenty_concurrent_calls_through_a_served_router_each_get_their_own_result(
    tmp_path: Path,
) -> None:
    before = Snapshot.take()
    async with served_router(write_config(tmp_path), tmp_path / "server.log") as router:
        modern = await soak(router, calls=40, clients=2, per_client=10, mode="auto")
        legacy = await soak(router, calls=40, clients=2, per_client=10, mode="legacy")
        name, arguments, token = request(2, 12345)
        async with Client(router.url) as client:
            await client.list_tools()
            result = await client.call_tool(name, arguments)
    await before.assert_no_leaks()

    for figures, protocol in ((modern, "2026-07-28"), (legacy, "2025-11-25")):
        assert figures["transport"] == f"streamable HTTP, protocol {protocol}"
        assert figures["categories"] == CATEGORIES
        assert (figures["concurrency"], figures["calls"]) == (20, 40)
        assert (figures["ok"], figures["errors"], figures["error_samples"]) == (40, 0, [])
        assert [p["calls"] for p in figures["phases"]] == [20, 20]
        readings = figures["at_rest"]
        assert set(readings) == {"start", "after_20", "after_40"}
        for reading in readings.values():  # read at rest: no client connection left
            assert set(reading) == {"rss_mb", "connections", "allocated_blocks", "objects"}
            assert reading["connections"] == 0
            assert reading["rss_mb"] > 10 and reading["allocated_blocks"] > 10_000
    # On failure, the server's own stderr says what it was (a rare shutdown error in CI).
    assert router.log_problems() == [], router.log.read_text(errors="replace")[-4000:]
    assert router.process.returncode == 0  # stopped gracefully by SIGINT
    assert check(result, 2, token) is None
    crossed = check(result, 2, token + 1)  # the answer to another request
    assert crossed is not None
    assert crossed.startswith(f"call 2 (dates_time_zones, token {token + 1}): expected")


def _figures(first: tuple[float, int], last: tuple[float, int]) -> dict[str, Any]:
    """Soak figures with (RSS MB, live heap blocks) read at rest after 1,000 and 10,000 calls."""
    return {
        "calls": 10_000,
        "concurrency": 1_000,
        "ok": 10_000,
        "errors": 0,
        "log_problems": [],
        "at_rest": {
            f"after_{calls}": {"rss_mb": rss, "allocated_blocks": blocks}
            for calls, (rss, blocks) in ((1_000, first), (10_000, last))
        },
    }


def test_the_soak_verdict_passes_a_flat_server_and_fails_a_leaking_or_erring_one() -> None:
    flat = _figures((116.4, 345_888), (148.7, 345_983))  # measured on the served router
    leaking = _figures((123.5, 437_708), (241.4, 1_265_903))  # measured keeping model requests
    erring = copy.deepcopy(flat)
    erring["ok"], erring["errors"] = 9_999, 1

    assert verdict(flat) == {
        "rule": "RSS after 10,000 <= RSS after 1,000 x 1.5 + 32 MB",
        "limit_mb": 206.6,
        "heap_rule": "live heap blocks after 10,000 <= after 1,000 + 30,000",
        "heap_growth_blocks": 95,
        "heap_limit_blocks": 30_000,
        "memory": "PASS",
        "heap": "PASS",
        "results": "PASS",
        "verdict": "PASS",
    }
    judged = verdict(leaking)
    assert (judged["memory"], judged["heap"], judged["results"]) == ("FAIL", "FAIL", "PASS")
    assert judged["verdict"] == "FAIL"
    assert (verdict(erring)["results"], verdict(erring)["verdict"]) == ("FAIL", "FAIL")
