"""The note on a call to a tool that is not offered names the tool the model may mean."""

from __future__ import annotations

import pytest

from meta_tools import tool
from meta_tools.demo.dates import describe_date
from meta_tools.demo.text import compare_texts, search_text, text_statistics
from meta_tools.exceptions import ToolNotFoundError
from meta_tools.support.suggest import did_you_mean_tool, tool_text
from meta_tools.tools.function import FunctionTool
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


DNA = {
    "dna2protein__DNA2AminoAcid": "Transform a DNA sequence into amino acids. dna",
    "dna2protein__mRNA2DNA": "Transform an mRNA sequence into DNA. mRNA",
    "dna2protein__DNA2mRNA": "Transform a DNA sequence into mRNA. dna",
    "Numerology-API__health": "Health of the numerology service.",
}


@pytest.mark.parametrize("name", ["dna2protein", "DNA2Protein", "dna2_protein"])
def test_a_service_s_name_is_told_all_of_its_tools_in_the_offered_order(name: str) -> None:
    """Seen with the 1.5B over 2,009 tools: it called the service `dna2protein` for an
    amino acid sequence, was told only the closest name (`dna2protein__mRNA2DNA`), and
    declined."""
    assert did_you_mean_tool(name, DNA, n=1) == (
        "did you mean one of the service's tools 'dna2protein__DNA2AminoAcid',"
        " 'dna2protein__mRNA2DNA', 'dna2protein__DNA2mRNA'?"
    )
    pack = ToolPack(
        [FunctionTool("stats__words", text_statistics), FunctionTool("stats__find", search_text)]
    )
    with pytest.raises(ToolNotFoundError) as caught:
        pack.get_tool("stats")
    assert "Did you mean one of the service's tools 'stats__words', 'stats__find'?" in str(
        caught.value
    )


def test_a_service_with_one_tool_or_a_tool_s_own_name_is_told_that_tool() -> None:
    one = {"Numerology-API__health": "Health.", "calc__add": "Add two numbers. a b"}
    assert did_you_mean_tool("numerology_api", one, n=1) == "did you mean 'Numerology-API__health'?"
    assert did_you_mean_tool("DNA2AminoAcid", DNA, n=1) == (
        "did you mean 'dna2protein__DNA2AminoAcid'?"
    )
