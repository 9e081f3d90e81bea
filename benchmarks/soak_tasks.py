"""The soak benchmark's calls: what each one asks, and exactly what it must get back.

Call number `index` goes to one of three categories of `Meta_tool_config.json`
(`TASKS`, in turn) with the exact input `token N`, N unique in the run. The
scripted model of `soak_server.py` puts N into the demo tool's arguments and
writes its summary from the tool's output, so `check` can tell a result that
belongs to another call: its arguments, its tool output and its summary would
carry another token. The expected values are computed here, independently of
the server.
"""

from __future__ import annotations

import datetime as dt
import json
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import mcp_types

__all__ = ["TASKS", "Task", "check", "request"]

_START = dt.date(2000, 1, 1)


def _days(token: int) -> int:
    return token % 1_000_000  # unique per request within a run; stays before the year 4738


@dataclass(frozen=True)
class Task:
    """One kind of soak call: a category, an objective, the demo tool the model picks for it.

    `arguments(token)` is what the model sends the tool; `output(token)` what the
    demo tool must answer and `summary(token)` what the model must write then
    (both computed here independently of the server).
    """

    category: str
    category_slug: str
    objective: str
    tool: str
    arguments: Callable[[int], dict[str, Any]]
    output: Callable[[int], dict[str, Any]]
    summary: Callable[[int], str]


def _shifted(token: int) -> dt.date:
    return _START + dt.timedelta(days=_days(token))


TASKS: tuple[Task, ...] = (
    Task(
        category="Math & Units",
        category_slug="math_units",
        objective="Calculate three times the number, plus one.",
        tool="calculate",
        arguments=lambda t: {"expression": f"{t} * 3 + 1"},
        output=lambda t: {"expression": f"{t} * 3 + 1", "result": t * 3 + 1},
        summary=lambda t: f"{t} * 3 + 1 = {t * 3 + 1}",
    ),
    Task(
        category="Text Analysis",
        category_slug="text_analysis",
        objective="Find the number in the text.",
        tool="search_text",
        arguments=lambda t: {"text": f"alpha {t} omega", "query": str(t)},
        output=lambda t: {
            "query": str(t),
            "total_matches": 1,
            "matches": [{"line": 1, "column": 7, "match": str(t), "context": f"alpha {t} omega"}],
            "truncated": False,
        },
        summary=lambda t: f"found {t} at line 1, column 7",
    ),
    Task(
        category="Dates & Time Zones",
        category_slug="dates_time_zones",
        objective="Shift the date 2000-01-01 by the number of days.",
        tool="shift_date",
        arguments=lambda t: {"date": _START.isoformat(), "days": _days(t)},
        output=lambda t: {
            "start": _START.isoformat(),
            "result": _shifted(t).isoformat(),
            "weekday": _shifted(t).strftime("%A"),
            "notes": [],
        },
        summary=lambda t: f"{_START.isoformat()} + {_days(t)} days = {_shifted(t).isoformat()}",
    ),
)


def request(index: int, nonce: int) -> tuple[str, dict[str, str], int]:
    """Call number `index`: its category tool, its arguments and its token (unique per run)."""
    task = TASKS[index % len(TASKS)]
    token = nonce * 100_000 + index
    return task.category_slug, {"objective": task.objective, "exact_input": f"token {token}"}, token


def _parsed(text: str | None) -> Any:
    """A tool output as JSON, or the text itself when it is not JSON (then it cannot match)."""
    try:
        return json.loads(text or "null")
    except json.JSONDecodeError:
        return text


def check(result: mcp_types.CallToolResult, index: int, token: int) -> str | None:
    """None when `result` is exactly what call `index` with `token` must return, else why not.

    Timings (`duration_s`, `wall_s`) vary and are left out; the tool's output is compared
    as parsed JSON.
    """
    task = TASKS[index % len(TASKS)]
    where = f"call {index} ({task.category_slug}, token {token})"
    text = "".join(c.text for c in result.content if isinstance(c, mcp_types.TextContent))
    if result.is_error or result.structured_content is None:
        return f"{where}: error result {text[:300]!r}"
    got = _parsed(text)
    if not isinstance(got, dict) or got != result.structured_content:
        return f"{where}: the text and the structured content differ"
    got.get("usage", {}).pop("wall_s", None)
    for execution in got.get("executions", []):
        execution.pop("duration_s", None)
        execution["result"] = _parsed(execution.get("result"))
    expected = {
        "category": task.category,
        "status": "success",
        "summary": task.summary(token),
        "executions": [
            {
                "tool": task.tool,
                "arguments": task.arguments(token),
                "ok": True,
                "result": task.output(token),
                "round": 1,
                "cached": False,
            }
        ],
        "iterations": 1,
        "usage": {
            "llm_calls": 2,
            "prompt_tokens": 0,
            "completion_tokens": 0,
            "cache_hits": 0,
            "cache_misses": 0,
            "recovered_calls": 0,
        },
    }
    if got != expected:
        return f"{where}: expected {json.dumps(expected)[:400]}, got {json.dumps(got)[:400]}"
    return None
