"""How the demo server's tools are grouped into categories: written here only.

`meta-tools demo`, `meta-tools init` and `example.py` use this grouping; the
repository's `Meta_tool_config.json`, a file for people to read and edit, holds
the same categories (a test keeps them equal).
"""

from __future__ import annotations

from typing import Any

__all__ = ["CATEGORIES"]

CATEGORIES: dict[str, dict[str, Any]] = {
    "Math & Units": {
        "description": "Arithmetic, unit conversion and summary statistics of numbers.",
        "tool_usage_notes": (
            "Use calculate for arithmetic expressions, convert_units for any unit change "
            "(including temperatures), describe_numbers for mean, median and spread of a "
            "list."
        ),
        "tools": ["calculate", "convert_units", "describe_numbers"],
    },
    "Dates & Time Zones": {
        "description": "Date arithmetic, time-zone conversion, weekdays and calendars.",
        "tool_usage_notes": (
            "Dates are ISO 'YYYY-MM-DD'. Time zones are IANA names such as 'Europe/Paris' (a "
            "unique city name also works). There is no 'now': ask for the date if it is "
            "missing."
        ),
        "tools": [
            "convert_time_zone",
            "date_difference",
            "shift_date",
            "describe_date",
            "month_calendar",
        ],
    },
    "Text Analysis": {
        "description": "Statistics of a text, finding words or patterns in it, and comparing two texts.",
        "tool_usage_notes": (
            "Pass the whole text in the tool arguments. search_text takes a regular "
            "expression only when regex is true."
        ),
        "tools": ["text_statistics", "search_text", "compare_texts"],
    },
    "Files": {
        "description": "List, read, search and describe the files of the project folder.",
        "tool_usage_notes": (
            "Paths are relative to the project folder; list_files first when a name is "
            "unknown. read_file returns up to max_lines lines from start_line."
        ),
        "tools": ["list_files", "read_file", "search_files", "file_info"],
    },
}
"""Category name -> its config entry (description, tool usage notes, tools)."""
