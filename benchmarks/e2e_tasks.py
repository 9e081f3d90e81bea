"""The demo set of the end-to-end benchmark: tasks over the demo tools, with checkable answers.

Each task is what a user would type, plus what a right run looks like: the
strings its answer must contain (each a list of accepted spellings), the tools
that do it, and the category calls that a main agent should make (used as is
by the "category call" side). Missing-input tasks are right when the user is
asked; no-tool tasks when no tool runs. Expected values were worked out by hand.
"""

from __future__ import annotations

import itertools
import re
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import Literal, TypeVar

from meta_tools.llm.recovery import looks_like_call

__all__ = ["FILES", "TASKS", "DemoTask", "Route", "interleaved"]

Kind = Literal["answer", "ask", "decline"]
T = TypeVar("T")

#: The files of the sandbox folder the demo server's file tools see during the benchmark.
FILES = {
    "notes.txt": "alpha\nbeta\ngamma\n",
    "config.ini": "[server]\nport = 8080\nhost = localhost\n",
    "data/report.md": "# Report\nSales rose 12 percent.\nCosts fell.\n",
    "data/todo.md": "- buy milk\n- call Ana\n",
}


@dataclass(frozen=True)
class Route:
    """One category call of the right plan: category slug, objective, exact input."""

    category: str
    objective: str
    exact_input: str


@dataclass(frozen=True)
class DemoTask:
    id: str
    group: str
    prompt: str
    kind: Kind
    routes: tuple[Route, ...]
    expect: tuple[tuple[str, ...], ...] = ()
    tools: tuple[frozenset[str], ...] = field(default_factory=tuple)

    def answered(self, text: str) -> bool:
        """Every expected value appears in `text` (case, spaces and thousands separators aside).

        A number counts only as a whole number (`9` is not found in `19` or `0.9`); a
        reply that is itself a tool call (written as text, not run) answers nothing.
        """
        if looks_like_call(text):
            return False
        seen = _normal(text)
        return all(any(_found(_normal(o), seen) for o in options) for options in self.expect)


def _normal(text: str) -> str:
    text = re.sub(r"(?<=\d),(?=\d{3}\b)", "", text.lower())
    return re.sub(r"\s+", " ", text)


def _found(value: str, text: str) -> bool:
    if not re.fullmatch(r"[\d.]+", value):
        return value in text
    # Decimals may go on (16.09 in 16.0934); integers may not (9 is not in 19, 90 or 9.5),
    # but may end in zeros (77.0 is 77).
    tail = "" if "." in value else r"(?:\.0+)?(?![\d]|\.\d)"
    return re.search(rf"(?<![\w.]){re.escape(value)}{tail}", text) is not None


def _task(
    id: str,
    group: str,
    prompt: str,
    routes: list[tuple[str, str, str]],
    expect: list[str | tuple[str, ...]] | None = None,
    tools: list[str | tuple[str, ...]] | None = None,
    kind: Kind = "answer",
) -> DemoTask:
    return DemoTask(
        id=id,
        group=group,
        prompt=prompt,
        kind=kind,
        routes=tuple(Route(*r) for r in routes),
        expect=tuple((e,) if isinstance(e, str) else tuple(e) for e in expect or []),
        tools=tuple(frozenset([t] if isinstance(t, str) else t) for t in tools or []),
    )


M, D, T, F = "math_units", "dates_time_zones", "text_analysis", "files"

TASKS: list[DemoTask] = [
    # -- Math & Units ---------------------------------------------------------------
    _task("m1", "math", "What is 17 * 23?", [(M, "Multiply 17 by 23", "17 * 23")], ["391"], ["calculate"]),
    _task("m2", "math", "Compute (125 + 375) / 5.", [(M, "Evaluate the expression", "(125 + 375) / 5")], ["100"], ["calculate"]),
    _task("m3", "math", "What is 2 to the power of 10?", [(M, "Compute 2 to the power of 10", "2 ** 10")], ["1024"], ["calculate"]),
    _task("m4", "math", "Convert 10 miles to kilometers.", [(M, "Convert miles to kilometers", "10 mi to km")], ["16.09"], ["convert_units"]),
    _task("m5", "math", "Convert 100 degrees Fahrenheit to Celsius.", [(M, "Convert Fahrenheit to Celsius", "100 F to C")], [("37.7", "37.8")], ["convert_units"]),
    _task("m6", "math", "How many pounds are 5 kg?", [(M, "Convert kilograms to pounds", "5 kg to lb")], ["11.02"], ["convert_units"]),
    _task("m7", "math", "What is the mean of 4, 8, 15, 16, 23 and 42?", [(M, "Mean of the numbers", "4, 8, 15, 16, 23, 42")], ["18"], [("describe_numbers", "calculate")]),
    _task("m8", "math", "What is the median of 3, 9, 1, 7?", [(M, "Median of the numbers", "3, 9, 1, 7")], ["5"], ["describe_numbers"]),
    _task("m9", "math", "How many MiB are 2 GiB?", [(M, "Convert GiB to MiB", "2 GiB to MiB")], ["2048"], [("convert_units", "calculate")]),
    _task("m10", "math", "What is 12% of 250?", [(M, "Compute 12 percent of 250", "0.12 * 250")], ["30"], ["calculate"]),
    # -- Dates & Time Zones ---------------------------------------------------------
    _task("d1", "dates", "What weekday is 2025-12-25?", [(D, "Weekday of the date", "2025-12-25")], ["thursday"], ["describe_date"]),
    _task("d2", "dates", "How many days are there from 2025-01-01 to 2025-03-01?", [(D, "Days between two dates", "2025-01-01 and 2025-03-01")], ["59"], ["date_difference"]),
    _task("d3", "dates", "What date is 90 days after 2025-01-15?", [(D, "Add 90 days to the date", "2025-01-15, 90 days")], ["2025-04-15"], ["shift_date"]),
    _task("d4", "dates", "Which day of the year is 2025-03-01?", [(D, "Day of the year of the date", "2025-03-01")], ["60"], ["describe_date"]),
    _task("d5", "dates", "It is 2025-06-01 09:00 in Europe/Paris. What time is it in Asia/Tokyo?", [(D, "Convert the time between zones", "2025-06-01 09:00 from Europe/Paris to Asia/Tokyo")], ["16:00"], ["convert_time_zone"]),
    _task("d6", "dates", "Convert 2025-01-15 12:00 from America/New_York to Europe/London.", [(D, "Convert the time between zones", "2025-01-15 12:00 from America/New_York to Europe/London")], ["17:00"], ["convert_time_zone"]),
    _task("d7", "dates", "What date is 10 business days after 2025-03-03?", [(D, "Add 10 business days", "2025-03-03, 10 business days")], ["2025-03-17"], ["shift_date"]),
    _task("d8", "dates", "How many whole weeks are there from 2025-01-01 to 2025-12-31?", [(D, "Weeks between two dates", "2025-01-01 and 2025-12-31")], ["52"], ["date_difference"]),
    _task("d9", "dates", "How many days does February 2028 have?", [(D, "Length of the month", "February 2028")], ["29"], [("month_calendar", "describe_date")]),
    # -- Text Analysis ----------------------------------------------------------------
    _task("t1", "text", "How many words are in: 'The quick brown fox jumps over the lazy dog'?", [(T, "How many words are in the text?", "The quick brown fox jumps over the lazy dog")], ["9"], ["text_statistics"]),
    _task("t2", "text", "How many sentences are in: 'I came. I saw. I conquered.'?", [(T, "Count the sentences", "I came. I saw. I conquered.")], ["3"], ["text_statistics"]),
    _task("t3", "text", "On which line does 'error' appear in this log: 'ok\\nwarning\\nerror: disk full\\nok'?", [(T, "Find the line with 'error'", "text: 'ok\\nwarning\\nerror: disk full\\nok', query: error")], ["3"], ["search_text"]),
    _task("t4", "text", "How many times does 'cat' occur in 'cat dog cat bird cat'?", [(T, "Count occurrences of 'cat'", "text: 'cat dog cat bird cat', query: cat")], ["3"], [("search_text", "text_statistics")]),
    _task("t5", "text", "Compare 'a\\nb\\nc' with 'a\\nb\\nd': how many lines were added?", [(T, "Compare the two texts", "original: 'a\\nb\\nc', revised: 'a\\nb\\nd'")], ["1"], ["compare_texts"]),
    _task("t6", "text", "Which word is the most frequent in 'apple banana apple cherry apple banana'?", [(T, "Most frequent word", "apple banana apple cherry apple banana")], ["apple"], ["text_statistics"]),
    # -- Files ----------------------------------------------------------------------
    _task("f1", "files", "Which .md files are in the data folder?", [(F, "List the .md files of the data folder", "folder: data, pattern: *.md")], ["report.md", "todo.md"], [("list_files", "search_files")]),
    _task("f2", "files", "What port is set in config.ini?", [(F, "Find the port in config.ini", "config.ini")], ["8080"], [("read_file", "search_files")]),
    _task("f3", "files", "Which file mentions 'Sales'?", [(F, "Find the file that mentions Sales", "Sales")], ["report.md"], ["search_files"]),
    _task("f4", "files", "How many bytes is notes.txt?", [(F, "Size of the file", "notes.txt")], ["17"], [("file_info", "list_files")]),
    _task("f5", "files", "What is line 2 of notes.txt?", [(F, "Read line 2 of the file", "notes.txt, line 2")], ["beta"], ["read_file"]),
    # -- two categories ---------------------------------------------------------------
    _task("x1", "two", "What weekday is 2025-07-04, and what is 365 * 24?", [(D, "Weekday of the date", "2025-07-04"), (M, "Multiply", "365 * 24")], ["friday", "8760"], ["describe_date", "calculate"]),
    _task("x2", "two", "Convert 30 C to Fahrenheit, and tell me the weekday of 2026-01-01.", [(M, "Convert Celsius to Fahrenheit", "30 C to F"), (D, "Weekday of the date", "2026-01-01")], ["86", "thursday"], ["convert_units", "describe_date"]),
    _task("x3", "two", "What is 15% of 80, and how many words are in 'to be or not to be'?", [(M, "15 percent of 80", "0.15 * 80"), (T, "Count the words", "to be or not to be")], ["12", "6"], ["calculate", "text_statistics"]),
    _task("x4", "two", "What is line 1 of notes.txt, and what weekday is 2025-01-01?", [(F, "Read line 1 of the file", "notes.txt, line 1"), (D, "Weekday of the date", "2025-01-01")], ["alpha", "wednesday"], ["read_file", "describe_date"]),
    _task("x5", "two", "How many days are there from 2025-01-01 to 2025-02-01? Multiply that by 24.", [(D, "Days between two dates", "2025-01-01 and 2025-02-01"), (M, "Multiply", "31 * 24")], ["744"], ["date_difference", "calculate"]),
    _task("x6", "two", "Convert 4 miles to km, and count the sentences in 'Hi. Bye.'", [(M, "Convert miles to kilometers", "4 mi to km"), (T, "Count the sentences", "Hi. Bye.")], ["6.43", "2"], ["convert_units", "text_statistics"]),
    # -- missing input: the right outcome is a question back ----------------------------
    _task("q1", "ask", "Convert this temperature to Fahrenheit.", [(M, "Convert a temperature to Fahrenheit", "")], kind="ask"),
    _task("q2", "ask", "What weekday was my birthday?", [(D, "Weekday of the user's birthday", "")], kind="ask"),
    _task("q3", "ask", "How many days are left until my deadline?", [(D, "Days until the user's deadline", "")], kind="ask"),
    _task("q4", "ask", "Count the words in my essay.", [(T, "Count the words of the user's essay", "")], kind="ask"),
    _task("q5", "ask", "Convert my height to centimeters.", [(M, "Convert the user's height to centimeters", "")], kind="ask"),
    # -- no tool can do it: the right outcome is a decline --------------------------------
    _task("n1", "decline", "Book a flight from Paris to Rome for tomorrow.", [(D, "Book a flight", "Paris to Rome, tomorrow")], kind="decline"),
    _task("n2", "decline", "Send an email to Bob saying hello.", [(T, "Send an email", "to Bob: hello")], kind="decline"),
    _task("n3", "decline", "What is the weather in Tokyo right now?", [(D, "Current weather", "Tokyo")], kind="decline"),
    _task("n4", "decline", "Translate 'good morning' into Japanese.", [(T, "Translate the text into Japanese", "good morning")], kind="decline"),
]  # fmt: skip


def interleaved(items: Sequence[T], group: Callable[[T], str]) -> list[T]:
    """`items` with their groups taken in turn, so that `--limit N` covers every kind."""
    groups: dict[str, list[T]] = {}
    for item in items:
        groups.setdefault(group(item), []).append(item)
    rounds = itertools.zip_longest(*groups.values())
    return [item for round_ in rounds for item in round_ if item is not None]
