"""`meta-tools trace FILE`: a `--trace` file as one tree per category run.

Each run shows what its LLM saw and did, in order: every LLM call with the
new messages of its prompt (the rendered templates, the task, the tool
results) and its reply, and every tool call with its arguments and result.
So the effect of an edited template can be read off directly.

A trace file is read as untrusted: each line is checked on its own, a line that
is no trace event (not UTF-8, not JSON, nested too deep, fields of the wrong
type) is skipped with a warning naming its number, and the rest is shown. Every
text is printed through `terminal.shown`, so a recorded tool result cannot drive
the terminal.
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from pydantic import BaseModel, ConfigDict, Field, ValidationError
from rich.console import Console
from rich.tree import Tree

from ..exceptions import MetaToolsError
from .console import counted
from .terminal import shown

__all__ = ["TraceEvent", "TraceFile", "TraceFileError", "TraceRun", "print_trace", "read_trace"]

_CUT_LINES = 12
_CUT_CHARS = 400
_MAX_WARNINGS = 10
_PROMPT_ROLES = ("system", "user")


class TraceFileError(MetaToolsError):
    """The trace file cannot be read or holds no run."""


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
    """One line of a trace: a step of a category run (see `tracing`); fields not shown are ignored."""

    model_config = ConfigDict(extra="ignore")

    event: str
    run_id: str
    category: str = ""
    main_call_id: str | None = None
    round: int | None = None
    objective: str = ""  # run_started
    phase: str = ""  # model_called
    messages: list[_Message] = Field(default_factory=list)
    tools: list[str] = Field(default_factory=list)
    reply: _Reply = Field(default_factory=_Reply)
    tool: str = ""  # tool_finished
    ok: bool = False
    arguments: Any = Field(default_factory=dict)
    result: str | None = None
    error: str | None = None  # tool_finished, model_called (no reply), run_finished (failed)
    duration_s: float = 0.0
    status: str = ""  # run_finished
    llm_calls: int = 0
    prompt_tokens: int = 0
    completion_tokens: int = 0


@dataclass
class TraceRun:
    run_id: str
    category: str = ""
    main_call_id: str = ""
    events: list[TraceEvent] = field(default_factory=list)


@dataclass
class TraceFile:
    """The runs of a trace file, in the order they started, and the lines skipped.

    `skipped` says where and why for the first `_MAX_WARNINGS` of them; `skipped_lines` counts all.
    """

    runs: list[TraceRun]
    skipped: list[str]
    skipped_lines: int


def read_trace(path: Path) -> TraceFile:
    """Read a trace file line by line; a line that is no trace event is skipped and noted.

    Raises:
        TraceFileError: the file cannot be read.
    """
    runs: dict[str, TraceRun] = {}
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
                run = runs.setdefault(record.run_id, TraceRun(record.run_id))
                run.category = run.category or record.category
                run.main_call_id = run.main_call_id or record.main_call_id or ""
                run.events.append(record)
    except OSError as exc:
        raise TraceFileError(f"cannot read {str(path)!r}: {exc.strerror}") from None
    return TraceFile(list(runs.values()), skipped, count)


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


def print_trace(
    console: Console,
    path: Path,
    *,
    run_id: str | None = None,
    full: bool = False,
    err: Console | None = None,
) -> None:
    """Print every run of the trace at `path` (or those whose id starts with `run_id`).

    Lines skipped are warned about on `err` (default: `console`), the first few by number.

    Raises:
        TraceFileError: the file cannot be read, or no run matches.
    """
    trace = read_trace(path)
    runs = trace.runs
    if run_id is not None:
        runs = [r for r in runs if r.run_id.startswith(run_id)]
    for run in runs:
        console.print(_tree(run, full=full))
        console.print()
    _warn(err or console, trace)
    if not trace.runs and trace.skipped_lines:
        count = trace.skipped_lines
        raise TraceFileError(
            f"{str(path)!r} holds no category run that could be read"
            f" ({count} line{'s' if count != 1 else ''} skipped)"
        )
    if not trace.runs:
        raise TraceFileError(f"{str(path)!r} holds no category run; write one with --trace")
    if not runs:
        raise TraceFileError(f"no run {run_id!r} in {str(path)!r}")


def _warn(err: Console, trace: TraceFile) -> None:
    for note in trace.skipped:
        err.print(f"[yellow]warning:[/] {shown(note)}", soft_wrap=True)
    if trace.skipped_lines > len(trace.skipped):
        more = trace.skipped_lines - len(trace.skipped)
        err.print(f"[yellow]warning:[/] {more} more line{'s' if more != 1 else ''} skipped")


def _tree(run: TraceRun, *, full: bool) -> Tree:
    started = next((e for e in run.events if e.event == "run_started"), None)
    label = f"[bold]{shown(run.category)}[/] [dim]run {shown(run.run_id)}"
    if run.main_call_id:
        label += f" · main call {shown(run.main_call_id)}"
    label += "[/]"
    if started is not None and started.objective:
        label += f"\n[italic]{shown(started.objective)}[/]"
    tree = Tree(label)
    calls = 0
    for event in run.events:
        if event.event == "model_called":
            calls += 1
            _model_call(tree, event, calls, full=full)
        elif event.event == "tool_finished":
            _tool_call(tree, event, full=full)
        elif event.event == "run_finished":
            node = tree.add(
                f"■ [bold]{shown(event.status)}[/] after {counted(event.round or 0, 'round')},"
                f" {counted(event.llm_calls, 'LLM call')}, {event.prompt_tokens}+"
                f"{event.completion_tokens} tokens, {event.duration_s:.2f} s"
            )
            if event.error:
                node.add(f"[red]{shown(event.error)}[/]")
    return tree


def _model_call(tree: Tree, event: TraceEvent, number: int, *, full: bool) -> None:
    offered = f" · offered: {', '.join(event.tools)}" if event.tools else " · no tools offered"
    branch = tree.add(
        f"[cyan]LLM call {number}[/] ({shown(event.phase)}, round {event.round}){shown(offered)}"
    )
    for message in event.messages:
        role = message.role
        if role == "assistant":
            continue  # its reply was shown under the previous call
        if role == "tool":
            role = f"tool result {message.name}".rstrip()
        # The system and user messages are the rendered templates and the task: the
        # text a user edits, shown whole; tool results can be long and are cut.
        content = message.content if role in _PROMPT_ROLES else _cut(message.content, full)
        branch.add(f"[magenta]{shown(role)}[/]\n{shown(content)}")
    if event.error is not None:
        branch.add(f"[red]no reply: {shown(event.error)}[/]")
        return
    reply = event.reply
    parts = [_cut(reply.content, full)] if reply.content else []
    parts += [
        f"→ {call.name}({json.dumps(call.arguments, ensure_ascii=False)})"
        for call in reply.tool_calls
    ]
    branch.add(f"[green]reply[/]\n{shown(chr(10).join(parts) or '(empty)')}")


def _tool_call(tree: Tree, event: TraceEvent, *, full: bool) -> None:
    arguments = json.dumps(event.arguments, ensure_ascii=False)
    mark = "[green]✓[/]" if event.ok else "[red]✗[/]"
    body = event.result if event.ok else event.error
    node = tree.add(
        f"{mark} tool [bold]{shown(event.tool)}[/]{shown('(' + arguments + ')')}"
        f" [dim]{event.duration_s:.2f} s[/]"
    )
    if body:
        node.add(shown(_cut(body, full)))


def _cut(text: str, full: bool) -> str:
    """A long text cut to its first lines, with a marker saying how much is hidden."""
    if full:
        return text
    lines = text.splitlines()
    kept = "\n".join(lines[:_CUT_LINES])
    if len(kept) > _CUT_CHARS:
        kept = kept[:_CUT_CHARS]
    hidden = len(text) - len(kept)
    return kept + (f"\n… ({hidden} more characters; --full shows all)" if hidden > 0 else "")
