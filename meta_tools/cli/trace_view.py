"""`meta-tools trace FILE`: a `--trace` file as one tree per run, or one line per run.

A main-agent turn shows what its model was offered and called, each category call
(the model's, or the router's own for the rest a category left undone) with the
category runs behind it (a category that declined, then the next one the router
tried), what came back, and the answer. A category run shows what its LLM saw and
did, in order: every LLM call with the new messages of its prompt (the rendered
templates, the task, the tool results) and its reply, and every tool call with its
arguments and result. So the effect of an edited template can be read off directly.

`--summary` prints one line per run instead, newest first: its id, when it started,
the request, the categories that ran, the tool calls, the outcome and the time.
"""

from __future__ import annotations

import json
import time
from pathlib import Path

from rich.console import Console
from rich.tree import Tree

from ..support.suggest import did_you_mean
from ..support.text import clipped
from .console import counted
from .terminal import shown
from .trace import (
    TraceEvent,
    TraceFile,
    TraceFileError,
    TraceRun,
    TraceTurn,
    UnknownRunError,
    read_trace,
)

__all__ = ["print_trace", "summary_lines"]

_CUT_LINES = 12
_CUT_CHARS = 400
_PROMPT_ROLES = ("system", "user")
#: How much of a request a summary line shows.
_REQUEST_CHARS = 60
#: How many runs an unknown `--run` lists (the newest).
_RUNS_LISTED = 10


def print_trace(
    console: Console,
    path: Path,
    *,
    run_id: str | None = None,
    full: bool = False,
    summary: bool = False,
    err: Console | None = None,
) -> None:
    """Print every run of the trace at `path` (or those whose id starts with `run_id`):
    as trees, or with `summary` as one line each, newest first.

    Lines skipped are warned about on `err` (default: `console`), the first few by number.

    Raises:
        TraceFileError: the file cannot be read, or holds no run.
        UnknownRunError: no run's id starts with `run_id`.
    """
    trace = read_trace(path)
    entries = _matching(trace, run_id)
    if summary:
        for line in summary_lines(entries[::-1]):
            console.print(shown(line), soft_wrap=True)
    else:
        for entry in entries:
            console.print(
                _turn_tree(entry, full) if isinstance(entry, TraceTurn) else _tree(entry, full=full)
            )
            console.print()
    _warn(err or console, trace)
    if not trace.runs and not trace.turns and trace.skipped_lines:
        count = trace.skipped_lines
        raise TraceFileError(
            f"{str(path)!r} holds no category run that could be read"
            f" ({counted(count, 'line')} skipped)"
        )
    if not trace.runs and not trace.turns:
        raise TraceFileError(f"{str(path)!r} holds no category run; write one with --trace")
    if not entries:
        raise _unknown_run(trace, path, run_id or "")


def _matching(trace: TraceFile, run_id: str | None) -> list[TraceTurn | TraceRun]:
    """The runs to show, in the order they started: every turn and every category run of
    no turn; with `run_id`, those whose id starts with it, a turn's category runs too."""
    entries = trace.entries()
    if run_id is None:
        return entries
    shown_ids = {entry.run_id for entry in entries}
    inner = [run for run in trace.runs if run.run_id not in shown_ids]
    found = [e for e in (*entries, *inner) if e.run_id.startswith(run_id)]
    return sorted(found, key=lambda entry: entry.line)


def _unknown_run(trace: TraceFile, path: Path, run_id: str) -> UnknownRunError:
    """The error for a `--run` that matches nothing: close ids, and the newest runs."""
    newest = trace.entries()[::-1]
    # An id is given by its start: it is compared with the same length of each.
    ids = [entry.run_id for entry in newest] + [run.run_id for run in trace.runs]
    hint = did_you_mean(run_id, (known[: max(len(run_id), 8)] for known in ids))
    lines = summary_lines(newest[:_RUNS_LISTED])
    if len(newest) > _RUNS_LISTED:
        more = len(newest) - _RUNS_LISTED
        lines.append(f"… {counted(more, 'older run')}: `meta-tools trace FILE --summary` lists all")
    message = f"no run {run_id!r} in {str(path)!r}; " + (f"{hint} Its" if hint else "its")
    return UnknownRunError(f"{message} runs, newest first:", lines)


# -- one line per run -------------------------------------------------------------------
def summary_lines(entries: list[TraceTurn | TraceRun]) -> list[str]:
    """One line per run, its columns aligned: id, when, the request, the categories that
    ran, the tool calls, the outcome and the time."""
    rows = [_turn_row(e) if isinstance(e, TraceTurn) else _run_row(e) for e in entries]
    widths = [max((len(row[i]) for row in rows), default=0) for i in range(7)]
    return [
        "  ".join(c.ljust(w) for c, w in zip(row, widths, strict=True)).rstrip() for row in rows
    ]


def _turn_row(turn: TraceTurn) -> list[str]:
    started = _first(turn.events, "turn_started")
    finished = _first(turn.events, "turn_finished")
    request = started.request if started is not None else ""
    agent = started.agent if started is not None and started.agent else "agent"
    ran = list(dict.fromkeys(run.category for run in turn.runs))
    if not ran and finished is not None:  # the category runs' lines are not in the file
        ran = finished.categories
    tools = sum(e.event == "tool_finished" for run in turn.runs for e in run.events)
    if not turn.runs and finished is not None:
        tools = finished.tool_calls
    return [
        turn.run_id,
        _when(turn.events),
        f"{agent}: {_quoted(request)}",
        ", ".join(ran) or "no category",
        counted(tools, "tool call"),
        finished.outcome if finished is not None else "unfinished",
        _took(finished, turn.events),
    ]


def _run_row(run: TraceRun) -> list[str]:
    started = _first(run.events, "run_started")
    finished = _first(run.events, "run_finished")
    return [
        run.run_id,
        _when(run.events),
        f"{run.category or 'category'}: {_quoted(started.objective if started else '')}",
        run.category,
        counted(sum(e.event == "tool_finished" for e in run.events), "tool call"),
        finished.status if finished is not None else "unfinished",
        _took(finished, run.events),
    ]


def _first(events: list[TraceEvent], kind: str) -> TraceEvent | None:
    return next((e for e in events if e.event == kind), None)


def _when(events: list[TraceEvent]) -> str:
    ts = next((e.ts for e in events if e.ts is not None), None)
    if ts is None:
        return "?"
    try:
        return time.strftime("%Y-%m-%d %H:%M:%S", time.localtime(ts))
    except (OverflowError, OSError, ValueError):  # a made-up time no clock reaches
        return "?"


def _took(finished: TraceEvent | None, events: list[TraceEvent]) -> str:
    if finished is not None:
        return f"{finished.duration_s:.2f} s"
    times = {e.ts for e in events if e.ts is not None}
    return f"{max(times) - min(times):.2f} s so far" if len(times) > 1 else "?"


def _quoted(text: str) -> str:
    """`text` on one line, cut, in quotes."""
    return json.dumps(clipped(" ".join(text.split()), _REQUEST_CHARS), ensure_ascii=False)


# -- trees ------------------------------------------------------------------------------
def _warn(err: Console, trace: TraceFile) -> None:
    for note in trace.skipped:
        err.print(f"[yellow]warning:[/] {shown(note)}", soft_wrap=True)
    if trace.skipped_lines > len(trace.skipped):
        more = trace.skipped_lines - len(trace.skipped)
        err.print(f"[yellow]warning:[/] {counted(more, 'more line')} skipped")


def _turn_tree(turn: TraceTurn, full: bool) -> Tree:
    """A main-agent turn: its model's replies, its category calls with their runs, the answer."""
    started = _first(turn.events, "turn_started")
    agent = started.agent if started is not None and started.agent else "main agent"
    label = f"[bold]{shown(agent)}[/] [dim]turn {shown(turn.run_id)}"
    if started is not None and started.session:
        label += f" · session {shown(started.session)}"
    label += "[/]"
    if started is not None and started.request:
        label += f"\n[italic]{shown(started.request)}[/]"
    tree = Tree(label)
    runs: dict[str, list[TraceRun]] = {}
    for run in turn.runs:
        runs.setdefault(run.main_call_id, []).append(run)
    for event in turn.events:
        if event.event == "agent_replied":
            _agent_reply(tree, event, full)
        elif event.event == "category_asked":
            who = "router" if event.by == "router" else shown(agent)
            node = tree.add(
                f"[bold cyan]{who} →[/] [bold]{shown(event.category)}[/]"
                f"{shown(f'(objective={event.objective!r}, exact_input={event.exact_input!r})')}"
            )
            for run in runs.pop(event.call_id, []):
                _fill(node.add(_run_label(run)), run, full=full)
        elif event.event == "category_answered":
            _answered(tree, event, full)
        elif event.event == "turn_finished":
            counts = (
                f"{counted(event.llm_calls, 'LLM call')}, {counted(event.tool_calls, 'tool call')}"
            )
            node = _ending(tree, event, event.outcome, counts)
            if event.answer:
                node.add(shown(_cut(event.answer, full)))
    for left in runs.values():  # runs whose call is not in the file
        for run in left:
            _fill(tree.add(_run_label(run)), run, full=full)
    return tree


def _agent_reply(tree: Tree, event: TraceEvent, full: bool) -> None:
    offered = f"offered: {', '.join(event.tools)}" if event.tools else "no tools offered"
    branch = tree.add(f"[cyan]LLM call {event.round}[/] · {shown(offered)}")
    if event.error is not None:
        branch.add(f"[red]no reply: {shown(event.error)}[/]")
        return
    parts = [_cut(event.text, full)] if event.text else []
    if event.calls:
        parts.append("→ " + ", ".join(event.calls))
    branch.add(f"[green]reply[/]\n{shown(chr(10).join(parts) or '(empty)')}")


def _answered(tree: Tree, event: TraceEvent, full: bool) -> None:
    if event.error is not None:
        tree.add(f"[red]← {shown(event.called)}: not run: {shown(event.error)}[/]")
        return
    where = event.category
    if event.declined:
        where += f" (after {', '.join(event.declined)} declined)"
    node = tree.add(
        f"← {shown(event.called)}: [bold]{shown(event.status)}[/] from {shown(where)},"
        f" {counted(event.tool_calls, 'tool call')}"
    )
    if event.summary:
        node.add(shown(_cut(event.summary, full)))
    if event.question:
        node.add(f"asks: {shown(event.question)}")
    if event.remainder:
        node.add(f"left undone: {shown(event.remainder)}")


def _run_label(run: TraceRun) -> str:
    started = _first(run.events, "run_started")
    label = f"[bold]{shown(run.category)}[/] [dim]run {shown(run.run_id)}"
    if run.main_call_id:
        label += f" · main call {shown(run.main_call_id)}"
    label += "[/]"
    if started is not None and started.objective:
        label += f"\n[italic]{shown(started.objective)}[/]"
    return label


def _tree(run: TraceRun, *, full: bool) -> Tree:
    tree = Tree(_run_label(run))
    _fill(tree, run, full=full)
    return tree


def _ending(tree: Tree, event: TraceEvent, how: str, counts: str) -> Tree:
    """The last line of a turn or a run: how it ended, what it took, and its error."""
    node = tree.add(
        f"■ [bold]{shown(how)}[/] after {counts}, {event.prompt_tokens}+"
        f"{event.completion_tokens} tokens, {event.duration_s:.2f} s"
    )
    if event.error:
        node.add(f"[red]{shown(event.error)}[/]")
    return node


def _fill(tree: Tree, run: TraceRun, *, full: bool) -> None:
    calls = 0
    for event in run.events:
        if event.event == "model_called":
            calls += 1
            _model_call(tree, event, calls, full=full)
        elif event.event == "tool_finished":
            _tool_call(tree, event, full=full)
        elif event.event == "run_finished":
            counts = f"{counted(event.round or 0, 'round')}, {counted(event.llm_calls, 'LLM call')}"
            _ending(tree, event, event.status, counts)


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
