"""`meta-tools trace FILE`: a `--trace` file as one tree per category run.

Each run shows what its LLM saw and did, in order: every LLM call with the
new messages of its prompt (the rendered templates, the task, the tool
results) and its reply, and every tool call with its arguments and result.
So the effect of an edited template can be read off directly.
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from rich.console import Console
from rich.markup import escape
from rich.tree import Tree

from ..exceptions import MetaToolsError

__all__ = ["TraceFileError", "TraceRun", "print_trace", "read_runs"]

_CUT_LINES = 12
_CUT_CHARS = 400


class TraceFileError(MetaToolsError):
    """The trace file cannot be read or holds no run."""


@dataclass
class TraceRun:
    run_id: str
    category: str = ""
    main_call_id: str = ""
    events: list[dict[str, Any]] = field(default_factory=list)


def read_runs(path: Path) -> list[TraceRun]:
    """The runs of a trace file, in the order they started; lines that are not events are skipped.

    Raises:
        TraceFileError: the file cannot be read or holds no run.
    """
    runs: dict[str, TraceRun] = {}
    for record in _records(path):
        run_id = record.get("run_id")
        if not isinstance(run_id, str):
            continue
        run = runs.setdefault(run_id, TraceRun(run_id))
        run.category = run.category or str(record.get("category", ""))
        run.main_call_id = run.main_call_id or str(record.get("main_call_id", ""))
        run.events.append(record)
    if not runs:
        raise TraceFileError(f"{str(path)!r} holds no category run; write one with --trace")
    return list(runs.values())


def _records(path: Path) -> Iterator[dict[str, Any]]:
    try:
        lines = path.read_text(encoding="utf-8").splitlines()
    except OSError as exc:
        raise TraceFileError(f"cannot read {str(path)!r}: {exc.strerror}") from None
    for line in lines:
        try:
            record = json.loads(line)
        except ValueError:
            continue
        if isinstance(record, dict):
            yield record


def print_trace(
    console: Console, path: Path, *, run_id: str | None = None, full: bool = False
) -> None:
    """Print every run of the trace at `path` (or those whose id starts with `run_id`).

    Raises:
        TraceFileError: the file cannot be read, or no run matches.
    """
    runs = read_runs(path)
    if run_id is not None:
        runs = [r for r in runs if r.run_id.startswith(run_id)]
        if not runs:
            raise TraceFileError(f"no run {run_id!r} in {str(path)!r}")
    for run in runs:
        console.print(_tree(run, full=full))
        console.print()


def _tree(run: TraceRun, *, full: bool) -> Tree:
    started = next((e for e in run.events if e.get("event") == "run_started"), {})
    label = f"[bold]{escape(run.category)}[/] [dim]run {escape(run.run_id)}"
    if run.main_call_id:
        label += f" · main call {escape(run.main_call_id)}"
    label += "[/]"
    if started.get("objective"):
        label += f"\n[italic]{escape(str(started['objective']))}[/]"
    tree = Tree(label)
    calls = 0
    for event in run.events:
        kind = event.get("event")
        if kind == "model_called":
            calls += 1
            _model_call(tree, event, calls, full=full)
        elif kind == "tool_finished":
            _tool_call(tree, event, full=full)
        elif kind == "run_finished":
            tree.add(
                f"■ [bold]{escape(str(event.get('status')))}[/] after {event.get('round')} round(s),"
                f" {event.get('llm_calls')} LLM call(s), {event.get('prompt_tokens')}+"
                f"{event.get('completion_tokens')} tokens, {float(event.get('duration_s', 0)):.2f} s"
            )
    return tree


def _model_call(tree: Tree, event: dict[str, Any], number: int, *, full: bool) -> None:
    tools = event.get("tools") or []
    offered = f" · offered: {', '.join(tools)}" if tools else " · no tools offered"
    branch = tree.add(
        f"[cyan]LLM call {number}[/] ({escape(str(event.get('phase')))},"
        f" round {event.get('round')}){escape(offered)}"
    )
    for message in event.get("messages") or []:
        role = str(message.get("role", "?"))
        if role == "assistant":
            continue  # its reply was shown under the previous call
        if role == "tool":
            role = f"tool result {message.get('name', '')}".rstrip()
        branch.add(
            f"[magenta]{escape(role)}[/]\n{escape(_cut(str(message.get('content', '')), full))}"
        )
    reply = event.get("reply") or {}
    parts = [_cut(str(reply["content"]), full)] if reply.get("content") else []
    parts += [
        f"→ {call.get('name')}({json.dumps(call.get('arguments', {}), ensure_ascii=False)})"
        for call in reply.get("tool_calls") or []
    ]
    branch.add(f"[green]reply[/]\n{escape(chr(10).join(parts) or '(empty)')}")


def _tool_call(tree: Tree, event: dict[str, Any], *, full: bool) -> None:
    arguments = json.dumps(event.get("arguments", {}), ensure_ascii=False)
    mark = "[green]✓[/]" if event.get("ok") else "[red]✗[/]"
    took = float(event.get("duration_s", 0))
    body = event.get("result") if event.get("ok") else event.get("error")
    node = tree.add(
        f"{mark} tool [bold]{escape(str(event.get('tool')))}[/]{escape('(' + arguments + ')')}"
        f" [dim]{took:.2f} s[/]"
    )
    if body:
        node.add(escape(_cut(str(body), full)))


def _cut(text: str, full: bool) -> str:
    """A long text cut to its first lines, with a marker saying how much is hidden."""
    if full:
        return text
    lines = text.splitlines()
    shown = "\n".join(lines[:_CUT_LINES])
    if len(shown) > _CUT_CHARS:
        shown = shown[:_CUT_CHARS]
    hidden = len(text) - len(shown)
    return shown + (f"\n… ({hidden} more characters; --full shows all)" if hidden > 0 else "")
