"""`meta-tools trace FILE`: reading a `--trace` file into main-agent turns and category runs.

A trace holds two kinds of lines (see `meta_tools.tracing`): the steps of category
runs, and the steps of main-agent turns (`turn_started` … `turn_finished`), whose
category runs carry the turn's id as `turn_id`. `trace_view` prints them.

A trace file is read as untrusted: each line is checked on its own, a line that
is no trace event (not UTF-8, not JSON, nested too deep, fields of the wrong
type) is skipped with a warning naming its number, and the rest is shown. Every
text is printed through `terminal.shown`, so a recorded tool result cannot drive
the terminal.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from pydantic import BaseModel, ConfigDict, Field, ValidationError

from ..exceptions import MetaToolsError
from ..turn_trace import TURN_EVENTS

__all__ = [
    "TraceEvent",
    "TraceFile",
    "TraceFileError",
    "TraceRun",
    "TraceTurn",
    "UnknownRunError",
    "read_trace",
]

_MAX_WARNINGS = 10


class TraceFileError(MetaToolsError):
    """The trace file cannot be read or holds no run."""


class UnknownRunError(TraceFileError):
    """No run has the id asked for; `runs` are the known ones, a line each, newest first."""

    def __init__(self, message: str, runs: list[str]) -> None:
        super().__init__(message)
        self.runs = runs


class _Message(BaseModel):
    role: str = "?"
    content: str = ""
    name: str = ""


class _Call(BaseModel):
    name: str = ""
    arguments: Any = Field(default_factory=dict)


class _Reply(BaseModel):
    content: str = ""
    tool_calls: list[_Call] = Field(default_factory=list)


class TraceEvent(BaseModel):
    """One line of a trace: a step of a category run or of a main-agent turn (see `tracing`);
    fields not shown are ignored."""

    model_config = ConfigDict(extra="ignore")

    event: str
    run_id: str
    ts: float | None = None
    category: str = ""
    main_call_id: str | None = None
    turn_id: str | None = None  # a category run's, when a main-agent turn started it
    round: int | None = None
    objective: str = ""  # run_started, category_asked
    phase: str = ""  # model_called
    messages: list[_Message] = Field(default_factory=list)
    tools: list[str] = Field(default_factory=list)  # also agent_replied: the categories offered
    reply: _Reply = Field(default_factory=_Reply)
    tool: str = ""  # tool_finished
    ok: bool = False
    arguments: Any = Field(default_factory=dict)
    result: str | None = None
    error: str | None = None  # tool_finished, model_called (no reply), run_finished (failed)
    duration_s: float = 0.0
    status: str = ""  # run_finished, category_answered
    llm_calls: int = 0
    prompt_tokens: int = 0
    completion_tokens: int = 0
    agent: str = ""  # turn_started
    session: str = ""
    request: str = ""
    calls: list[str] = Field(default_factory=list)  # agent_replied
    text: str | None = None
    call_id: str = ""  # category_asked, category_answered
    by: str = ""
    exact_input: str = ""
    called: str = ""  # category_answered
    declined: list[str] = Field(default_factory=list)
    tool_calls: int = 0
    summary: str = ""
    remainder: str | None = None
    question: str | None = None
    outcome: str = ""  # turn_finished
    answer: str = ""
    categories: list[str] = Field(default_factory=list)


@dataclass
class TraceRun:
    """The lines of one category run, in order."""

    run_id: str
    category: str = ""
    main_call_id: str = ""
    turn_id: str = ""
    events: list[TraceEvent] = field(default_factory=list)
    line: int = 0  # of its first line in the file


@dataclass
class TraceTurn:
    """The lines of one main-agent turn, in order, and the category runs it started."""

    run_id: str
    events: list[TraceEvent] = field(default_factory=list)
    runs: list[TraceRun] = field(default_factory=list)
    line: int = 0  # of its first line in the file


@dataclass
class TraceFile:
    """The runs of a trace file, in the order they started, and the lines skipped.

    `runs` holds every category run, `turns` every main-agent turn (with its
    category runs). `skipped` says where and why for the first `_MAX_WARNINGS`
    of the lines skipped; `skipped_lines` counts all.
    """

    runs: list[TraceRun]
    skipped: list[str]
    skipped_lines: int
    turns: list[TraceTurn] = field(default_factory=list)

    def entries(self) -> list[TraceTurn | TraceRun]:
        """The turns and the category runs of no turn in the file, in the order they started."""
        turns = {turn.run_id for turn in self.turns}
        alone = [run for run in self.runs if run.turn_id not in turns]
        return sorted([*self.turns, *alone], key=lambda entry: entry.line)


def read_trace(path: Path) -> TraceFile:
    """Read a trace file line by line; a line that is no trace event is skipped and noted.

    Raises:
        TraceFileError: the file cannot be read.
    """
    runs: dict[str, TraceRun] = {}
    turns: dict[str, TraceTurn] = {}
    skipped: list[str] = []
    count = 0
    try:
        with path.open("rb") as file:
            for number, line in enumerate(file, 1):
                if not line.strip():
                    continue
                try:
                    record = _event(line)
                except ValueError as exc:
                    count += 1
                    if len(skipped) < _MAX_WARNINGS:
                        skipped.append(f"line {number} skipped: {exc}")
                    continue
                if record.event in TURN_EVENTS:
                    turn = turns.setdefault(record.run_id, TraceTurn(record.run_id, line=number))
                    turn.events.append(record)
                    continue
                run = runs.setdefault(record.run_id, TraceRun(record.run_id, line=number))
                run.category = run.category or record.category
                run.main_call_id = run.main_call_id or record.main_call_id or ""
                run.turn_id = run.turn_id or record.turn_id or ""
                run.events.append(record)
    except OSError as exc:
        raise TraceFileError(f"cannot read {str(path)!r}: {exc.strerror}") from None
    for run in runs.values():
        if run.turn_id in turns:
            turns[run.turn_id].runs.append(run)
    return TraceFile(list(runs.values()), skipped, count, list(turns.values()))


def _event(line: bytes) -> TraceEvent:
    """The event on one line.

    Raises:
        ValueError: it is none; the message says why (and where in the line).
    """
    try:
        line.decode("utf-8")
    except UnicodeDecodeError as exc:
        raise ValueError(
            f"not UTF-8 text (byte 0x{line[exc.start]:02x} at column {exc.start + 1})"
        ) from None
    try:
        return TraceEvent.model_validate_json(line)
    except ValidationError as exc:
        errors = exc.errors(include_url=False, include_input=False, include_context=False)
        if errors[0]["type"] == "json_invalid":
            why = errors[0]["msg"].removeprefix("Invalid JSON: ")
            raise ValueError(
                f"not JSON: {why.replace(' at line 1 column ', ' at column ')}"
            ) from None
        if errors[0]["type"] == "model_type":
            raise ValueError("not a JSON object") from None
        fields = "; ".join(f"{'.'.join(map(str, e['loc']))}: {e['msg']}" for e in errors[:3])
        raise ValueError(f"not a trace event ({fields})") from None
