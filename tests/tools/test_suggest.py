"""The note on a call to a tool that is not offered names the tool the model may mean."""

from __future__ import annotations

import pytest

from meta_tools import tool
from meta_tools._suggest import did_you_mean_tool, tool_text
from meta_tools.demo.dates import describe_date
from meta_tools.demo.text import compare_texts, search_text, text_statistics
from meta_tools.exceptions import ToolNotFoundError
from meta_tools.tools.pack import ToolPack

TEXT_TOOLS = ToolPack(
    [tool(f) for f in (text_statistics, search_text, compare_texts, describe_date)]
)
DOCUMENTS = {t.name: tool_text(t.description, t.parameters_schema) for t in TEXT_TOOLS.list_tools()}


@pytest.mark.parametrize(
    ("name", "meant"),
    [
        # Seen with the 1.5B: the main agent's objective was a tool name of its own.
        ("count_words", "text_statistics"),  # "words" thrice, against search_text's once
        ("find_text", "search_text"),
        ("weekday_of", "describe_date"),
        ("text_statistic", "text_statistics"),  # alike by name comes first
        ("send_email", None),  # nothing here sends anything
        ("count_sentences", "text_statistics"),  # what it counts, not the counting
        ('x" status="ok"><b', None),  # one-letter words say nothing
    ],
)
def test_an_unknown_name_suggests_the_tool_that_does_what_it_says(
    name: str, meant: str | None
) -> None:
    expected = f"did you mean {meant!r}?" if meant else ""
    assert did_you_mean_tool(name, DOCUMENTS, n=1) == expected


def test_a_native_call_to_an_unknown_tool_is_told_the_tool_that_does_it() -> None:
    with pytest.raises(ToolNotFoundError) as caught:
        TEXT_TOOLS.get_tool("count_words")
    assert "Did you mean 'text_statistics'?" in str(caught.value)


def test_a_tool_that_only_shares_the_verb_is_no_guess() -> None:
    """Seen with the 1.5B: `count_sentences`, retried in the files category, was told
    `did you mean 'file_info'?` because its description says "line count"."""
    files = {
        "file_info": "Describe a file or folder: kind, size, line count and SHA-256 of a file. path",
        "read_file": "Read a text file from the sandbox, a range of lines at a time. path",
    }
    assert did_you_mean_tool("count_sentences", files, n=1) == ""
