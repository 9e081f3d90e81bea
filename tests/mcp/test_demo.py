"""The demo MCP server: every tool through a real client, its errors, its sandbox, its transports."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from mcp import Client

from meta_tools.config import MetaToolsConfig
from meta_tools.demo import TOOL_GROUPS, build_server
from meta_tools.demo.categories import CATEGORIES
from meta_tools.llm import AssistantTurn, ChatRequest, ScriptedModel, ToolCall
from meta_tools.router.manager import MetaManager
from tests.mcp.conftest import ROOT, http_server

pytestmark = pytest.mark.anyio

CASES: list[tuple[str, dict[str, Any], dict[str, Any]]] = [
    (
        "convert_units",
        {"value": 98.6, "from_unit": "°F", "to_unit": "celsius"},
        {
            "value": 98.6,
            "from_unit": "°F",
            "to_unit": "celsius",
            "dimension": "temperature",
            "result": 37.0,
        },
    ),
    (
        "convert_units",
        {"value": 1, "from_unit": "GiB", "to_unit": "MB"},
        {
            "value": 1.0,
            "from_unit": "GiB",
            "to_unit": "MB",
            "dimension": "data",
            "result": 1073.741824,
        },
    ),
    (
        "calculate",
        {"expression": "(17 + 25) * 3 / sqrt(4)"},
        {"expression": "(17 + 25) * 3 / sqrt(4)", "result": 63},
    ),
    ("calculate", {"expression": "2^10 - 0.5"}, {"expression": "2^10 - 0.5", "result": 1023.5}),
    ("calculate", {"expression": "12% of 250"}, {"expression": "12% of 250", "result": 30}),
    ("calculate", {"expression": "250 * 12.5%"}, {"expression": "250 * 12.5%", "result": 31.25}),
    ("calculate", {"expression": "10 % 3 + 1"}, {"expression": "10 % 3 + 1", "result": 2}),
    ("calculate", {"expression": "10 % (-3)"}, {"expression": "10 % (-3)", "result": -2}),
    ("calculate", {"expression": "(12%) + 5"}, {"expression": "(12%) + 5", "result": 5.12}),
    (
        "describe_numbers",
        {"numbers": [3, 1, 4, 1, 5, 9, 2, 6]},
        {
            "count": 8,
            "sum": 31.0,
            "mean": 3.875,
            "median": 3.5,
            "min": 1.0,
            "max": 9.0,
            "range": 8.0,
            "stdev": 2.74837614394,
            "variance": 7.55357142857,
        },
    ),
    (
        "convert_time_zone",
        {"time": "2025-03-30 02:30", "from_zone": "Europe/Paris", "to_zone": "Tokyo"},
        {
            "input": "2025-03-30 02:30",
            "from": {
                "zone": "Europe/Paris",
                "datetime": "2025-03-30 02:30:00+01:00",
                "utc_offset": "+01:00",
                "abbreviation": "CET",
            },
            "to": {
                "zone": "Asia/Tokyo",
                "datetime": "2025-03-30 10:30:00+09:00",
                "utc_offset": "+09:00",
                "abbreviation": "JST",
                "weekday": "Sunday",
            },
            "utc": "2025-03-30 01:30:00+00:00",
            "notes": [
                "the local time does not exist (clocks go forward); it was read as 2025-03-30 03:30:00"
            ],
        },
    ),
    (
        "date_difference",
        {"start": "2024-01-31", "end": "2025-03-01"},
        {
            "start": "2024-01-31",
            "end": "2025-03-01",
            "days": 395,
            "total_hours": 9480.0,
            "weeks": {"weeks": 56, "days": 3},
            "calendar": {"years": 1, "months": 1, "days": 1},
            "business_days": 283,
        },
    ),
    (
        "shift_date",
        {"date": "2024-01-31", "months": 1, "business_days": 3},
        {
            "start": "2024-01-31",
            "result": "2024-03-05",
            "weekday": "Tuesday",
            "notes": ["day 31 does not exist in that month; the month's last day was used"],
        },
    ),
    (
        "describe_date",
        {"date": "2024-02-29"},
        {
            "date": "2024-02-29",
            "weekday": "Thursday",
            "iso_year": 2024,
            "iso_week": 9,
            "day_of_year": 60,
            "days_left_in_year": 306,
            "quarter": 1,
            "is_leap_year": True,
            "days_in_month": 29,
        },
    ),
    (
        "month_calendar",
        {"year": 2025, "month": 2},
        {
            "year": 2025,
            "month": "February",
            "text": "   February 2025\nMo Tu We Th Fr Sa Su\n                1  2\n 3  4  5  6  7  8  9\n10 11 12 13 14 15 16\n17 18 19 20 21 22 23\n24 25 26 27 28",
            "weekday_names": [
                "Monday",
                "Tuesday",
                "Wednesday",
                "Thursday",
                "Friday",
                "Saturday",
                "Sunday",
            ],
            "weeks": [
                [None, None, None, None, None, 1, 2],
                [3, 4, 5, 6, 7, 8, 9],
                [10, 11, 12, 13, 14, 15, 16],
                [17, 18, 19, 20, 21, 22, 23],
                [24, 25, 26, 27, 28, None, None],
            ],
        },
    ),
    (
        "text_statistics",
        {"text": "The cat sat. The cat ran!\n\nDogs bark?", "top": 2},
        {
            "characters": 37,
            "characters_without_spaces": 29,
            "words": 8,
            "unique_words": 6,
            "sentences": 3,
            "lines": 3,
            "paragraphs": 2,
            "average_word_length": 3.25,
            "reading_time_minutes": 0.03,
            "top_words": [{"word": "cat", "count": 2}, {"word": "bark", "count": 1}],
        },
    ),
    (
        "search_text",
        {"text": "alpha beta\nBeta gamma", "query": "beta"},
        {
            "query": "beta",
            "total_matches": 2,
            "truncated": False,
            "matches": [
                {"line": 1, "column": 7, "match": "beta", "context": "alpha beta"},
                {"line": 2, "column": 1, "match": "Beta", "context": "Beta gamma"},
            ],
        },
    ),
    (
        "compare_texts",
        {"original": "a\nb\nc", "revised": "a\nB\nc\nd"},
        {
            "identical": False,
            "similarity": 0.6667,
            "lines_added": 2,
            "lines_removed": 1,
            "diff": "--- original\n+++ revised\n@@ -1,3 +1,4 @@\n a\n-b\n+B\n c\n+d",
        },
    ),
    (
        "list_files",
        {"path": ".", "recursive": True},
        {
            "folder": ".",
            "total": 3,
            "truncated": False,
            "entries": [
                {"path": "notes", "type": "folder", "size": None},
                {"path": "notes/todo.md", "type": "file", "size": 21},
                {"path": "readme.txt", "type": "file", "size": 29},
            ],
        },
    ),
    (
        "read_file",
        {"path": "notes/todo.md", "start_line": 2},
        {
            "path": "notes/todo.md",
            "start_line": 2,
            "end_line": 2,
            "total_lines": 2,
            "content": "- write tests",
            "truncated": False,
        },
    ),
    (
        "search_files",
        {"query": "TESTS"},
        {
            "query": "TESTS",
            "files_searched": 2,
            "matches": [{"path": "notes/todo.md", "line": 2, "text": "- write tests"}],
        },
    ),
    (
        "file_info",
        {"path": "readme.txt"},
        {
            "path": "readme.txt",
            "type": "file",
            "size": 29,
            "binary": False,
            "lines": 2,
            "sha256": "3d511a36797ad96c1bc8811145ff4c6b3af618babf8bb794b87d2feeff624ab8",
        },
    ),
]

ERRORS: list[tuple[str, dict[str, Any], str]] = [
    (
        "convert_units",
        {"value": 1, "from_unit": "kg", "to_unit": "km"},
        "cannot convert mass ('kg') to length ('km'); both units must measure the same thing",
    ),
    ("calculate", {"expression": "__import__('os')"}, "\"__import__('os')\" is not allowed"),
    ("calculate", {"expression": "1 / (2 - 2)"}, "division by zero"),
    # Modulo with a signed operand, or a percentage added to? Not guessed either way.
    ("calculate", {"expression": "10 % -3"}, "'%' before a sign can be a percentage or a modulo"),
    ("calculate", {"expression": "12% + 5"}, "'%' before a sign can be a percentage or a modulo"),
    (
        "calculate",
        {"expression": "24 * (2025-02-01 - 2025-01-01)"},
        "'2025-02-01' is a date, not a number: this tool takes numbers only",
    ),
    (
        "convert_time_zone",
        {"time": "2025-01-01 10:00", "from_zone": "Pariss", "to_zone": "UTC"},
        "Did you mean 'Europe/Paris'?",
    ),
    ("read_file", {"path": "../secret.txt"}, "'../secret.txt' is outside the sandbox folder"),
    ("read_file", {"path": "/etc/passwd"}, "'/etc/passwd' is an absolute path"),
    ("read_file", {"path": "escape"}, "'escape' is outside the sandbox folder"),
    ("read_file", {"path": "missing.txt"}, "'missing.txt' does not exist; use list_files"),
]


@pytest.fixture
def sandbox(tmp_path: Path) -> Path:
    root = tmp_path / "sandbox"
    (root / "notes").mkdir(parents=True)
    (root / "readme.txt").write_text("Demo folder.\nNothing secret.\n")
    (root / "notes" / "todo.md").write_text("# Todo\n- write tests\n")
    (tmp_path / "secret.txt").write_text("top secret")
    (root / "escape").symlink_to(tmp_path / "secret.txt")
    return root


async def test_the_demo_server_has_fifteen_tools_in_four_groups(sandbox: Path) -> None:
    async with Client(build_server(sandbox)) as client:
        names = [t.name for t in (await client.list_tools()).tools]
    assert names == [name for group in TOOL_GROUPS.values() for name in group]
    assert (len(names), list(TOOL_GROUPS)) == (15, ["numbers", "dates", "text", "files"])


async def test_the_demo_categories_hold_every_demo_tool_once() -> None:
    grouped = [name for category in CATEGORIES.values() for name in category["tools"]]
    assert sorted(grouped) == sorted(name for group in TOOL_GROUPS.values() for name in group)


async def test_every_demo_tool_answers_deterministically(sandbox: Path) -> None:
    (sandbox / "escape").unlink()  # the symlink is only for the error cases
    async with Client(build_server(sandbox)) as client:
        for name, arguments, expected in CASES:
            result = await client.call_tool(name, arguments)
            assert (name, result.is_error, result.structured_content) == (name, False, expected)


async def test_demo_tools_explain_what_is_wrong(sandbox: Path) -> None:
    async with Client(build_server(sandbox), mode="legacy") as client:
        for name, arguments, fragment in ERRORS:
            result = await client.call_tool(name, arguments)
            text = result.content[0].text  # type: ignore[union-attr]
            assert result.is_error and fragment in text, (name, text)


async def test_the_demo_server_runs_over_streamable_http(sandbox: Path) -> None:
    async with (
        http_server("-m", "meta_tools.demo", "--http", "--port", "0", "--root", str(sandbox)) as (
            _,
            url,
        ),
        Client(url) as client,
    ):
        result = await client.call_tool("calculate", {"expression": "6 * 7"})
    assert result.structured_content == {"expression": "6 * 7", "result": 42}


async def test_the_example_config_runs_the_demo_server_over_stdio() -> None:
    config = MetaToolsConfig.load(ROOT / "Meta_tool_config.json")

    def answer(request: ChatRequest) -> AssistantTurn:
        if len(request.messages) == 2:
            return AssistantTurn(
                tool_calls=[
                    ToolCall(name="read_file", arguments={"path": "pyproject.toml", "max_lines": 2})
                ]
            )
        return AssistantTurn(text="read it")

    async with MetaManager.from_config(config, model=ScriptedModel.from_function(answer)) as meta:
        assert [c.name for c in meta.categories] == [
            "Math & Units",
            "Dates & Time Zones",
            "Text Analysis",
            "Files",
        ]
        assert {t.name for c in meta.categories for t in c.tools.list_tools()} == {
            n for group in TOOL_GROUPS.values() for n in group
        }
        assert meta.warnings == []
        result = await meta.call_tool(
            "files", {"objective": "Read", "exact_input": "pyproject.toml"}
        )
    (execution,) = result.executions
    assert execution.ok, execution.error
    read = json.loads(execution.result or "{}")
    assert (read["path"], read["start_line"], read["end_line"]) == ("pyproject.toml", 1, 2)
    assert read["content"] == "\n".join((ROOT / "pyproject.toml").read_text().splitlines()[:2])
