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

from benchmarks.soak import check, request, served_router, soak, verdict, write_config
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
        assert set(figures["rss_mb"]) == {"start", "after_20", "after_40"}
        assert all(value > 10 for value in figures["rss_mb"].values())
    assert router.log_problems() == []
    assert router.process.returncode == 0  # stopped gracefully by SIGINT
    assert check(result, 2, token) is None
    crossed = check(result, 2, token + 1)  # the answer to another request
    assert crossed is not None
    assert crossed.startswith(f"call 2 (dates_time_zones, token {token + 1}): expected")


def _figures(first: float, halfway: float, last: float) -> dict[str, Any]:
    return {
        "calls": 10_000,
        "concurrency": 1_000,
        "ok": 10_000,
        "errors": 0,
        "log_problems": [],
        "rss_mb": {"start": 73.0, "after_1000": first, "after_10000": last},
        "rss_trend": [
            {"calls": 1_000, "rss_mb": first},
            {"calls": 5_000, "rss_mb": halfway},
            {"calls": 10_000, "rss_mb": last},
        ],
    }


def test_the_soak_verdict_passes_a_flat_server_and_fails_a_growing_or_erring_one() -> None:
    flat = _figures(105.9, 149.5, 150.0)  # measured on the served router
    leaking = _figures(110.1, 194.7, 234.6)  # measured with every model request kept
    erring = copy.deepcopy(flat)
    erring["ok"], erring["errors"] = 9_999, 1

    assert verdict(flat) == {
        "rule": "RSS after 10,000 <= RSS after 1,000 x 1.5 + 32 MB",
        "limit_mb": 190.9,
        "late_rule": "RSS after 10,000 <= RSS at 5,000 calls + 5 MB",
        "late_growth_mb": 0.5,
        "memory": "PASS",
        "late_growth": "PASS",
        "results": "PASS",
        "verdict": "PASS",
    }
    judged = verdict(leaking)
    assert (judged["memory"], judged["late_growth"], judged["verdict"]) == ("FAIL", "FAIL", "FAIL")
    assert (verdict(erring)["results"], verdict(erring)["verdict"]) == ("FAIL", "FAIL")
