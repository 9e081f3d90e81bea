"""Terminal views (rich) of what the router does: step lines, a live status, results, listings.

Used by the `meta-tools` command and the demo; the library itself never prints.
Every text that comes from outside (names, arguments, results, summaries,
warnings) is printed through `terminal.shown`, so it cannot drive the terminal.
"""

from __future__ import annotations

import json
from types import TracebackType
from typing import Any

from rich.console import Console
from rich.panel import Panel
from rich.status import Status
from rich.table import Table

from ..agent import AgentStep, CategoryCalled, CategoryReturned
from ..category.events import (
    Evaluated,
    ModelCalled,
    RunEvent,
    RunFinished,
    RunStarted,
    ToolFinished,
    ToolsSelected,
)
from ..category.result import CategoryResult, truncate
from .terminal import shown

__all__ = [
    "AgentStepPrinter",
    "RunProgress",
    "StepPrinter",
    "counted",
    "print_listing",
    "print_result",
    "print_saving",
]

_STATUS_STYLE = {
    "success": "green",
    "insufficient_input": "yellow",
    "no_suitable_tool": "yellow",
    "max_iterations": "yellow",
    "failed": "red",
}


def _arguments(arguments: dict[str, Any] | str, limit: int = 120) -> str:
    """A tool call's arguments as one short line: `(a=2, b=3)`."""
    if isinstance(arguments, str):
        return f"({truncate(arguments, limit)})"
    inner = ", ".join(f"{k}={json.dumps(v, ensure_ascii=False)}" for k, v in arguments.items())
    return f"({truncate(inner, limit)})"


def counted(number: int, noun: str) -> str:
    """`1 round`, `2 rounds`."""
    return f"{number} {noun}{'' if number == 1 else 's'}"


def _tokens(prompt: int, completion: int) -> str:
    return f", {prompt}+{completion} tokens" if prompt or completion else ""


class StepPrinter:
    """Prints one line per step event of a category run, indented by `indent` spaces."""

    def __init__(self, console: Console, *, indent: int = 0) -> None:
        self.console = console
        self.pad = " " * indent

    def line(self, event: RunEvent) -> str:
        """The line for `event` (rich markup)."""
        match event:
            case RunStarted(objective=objective):
                return f"▶ [bold]{shown(event.category)}[/] [dim]run {shown(event.run_id)}[/] {shown(objective)}"
            case ToolsSelected(tools=tools, duration_s=took):
                chosen = ", ".join(tools) if tools else "no tool"
                cost = _tokens(event.prompt_tokens, event.completion_tokens)
                return f"  • selected {shown(chosen)} [dim]({took:.2f} s{cost})[/]"
            case ToolFinished(tool=tool, ok=True, duration_s=took):
                call = shown(tool + _arguments(event.arguments))
                return f"  [green]✓[/] {call} [dim]({took:.2f} s)[/]"
            case ToolFinished(tool=tool, duration_s=took, error=error):
                why = shown(truncate(error or "failed", 160))
                call = shown(tool + _arguments(event.arguments))
                return f"  [red]✗[/] {call} [dim]({took:.2f} s)[/] {why}"
            case Evaluated(decision=decision, duration_s=took):
                verdict = "more tools needed" if decision == "more_tools" else "done"
                cost = _tokens(event.prompt_tokens, event.completion_tokens)
                return f"  • evaluated round {event.round}: {verdict} [dim]({took:.2f} s{cost})[/]"
            case RunFinished(status=status, duration_s=took):
                style = _STATUS_STYLE.get(status, "white")
                cost = _tokens(event.prompt_tokens, event.completion_tokens)
                return (
                    f"■ [{style}]{shown(status)}[/] [dim]after {counted(event.round, 'round')},"
                    f" {counted(event.llm_calls, 'LLM call')}{cost}, {took:.2f} s[/]"
                )
        return f"  • {shown(event.kind)}"

    async def sink(self, event: RunEvent) -> None:
        """An `EventSink` that prints each event as it happens (prompts are for traces)."""
        if not isinstance(event, ModelCalled):
            self.console.print(self.pad + self.line(event), soft_wrap=True)


class AgentStepPrinter:
    """A `MainAgent` step sink: the agent's category calls, each step (tagged) and the returns."""

    def __init__(self, console: Console, *, agent: str = "Friday") -> None:
        self.console = console
        self.steps = StepPrinter(console, indent=4)
        self.agent = agent
        self.tool_calls = 0

    async def __call__(self, step: AgentStep) -> None:
        match step:
            case CategoryCalled(call=call):
                arguments = call.arguments if isinstance(call.arguments, dict) else {}
                self.console.print(
                    f"  [bold cyan]{shown(self.agent)} →[/] [bold]{shown(call.name)}[/]"
                    f"(objective={shown(repr(arguments.get('objective')))},"
                    f" exact_input={shown(repr(arguments.get('exact_input')))})",
                    soft_wrap=True,
                )
            case CategoryReturned(call=call, result=result, error=error):
                text = f"{result.status}: {result.summary}" if result else f"error: {error}"
                self.console.print(
                    f"  [bold cyan]{shown(self.agent)} ←[/] {shown(call.name)}: {shown(truncate(text, 300))}",
                    soft_wrap=True,
                )
            case ModelCalled():
                return
            case RunEvent():
                if step.kind == "tool_finished":
                    self.tool_calls += 1
                line = self.steps.line(step)
                tag = f"[dim]\\[{shown(step.category)}][/] " if step.kind != "run_started" else ""
                self.console.print(self.steps.pad + tag + line.lstrip(), soft_wrap=True)


class RunProgress(StepPrinter):
    """Step lines plus a live status line saying what the run is doing now (terminals only)."""

    def __init__(self, console: Console) -> None:
        super().__init__(console)
        self._status: Status | None = None

    def __enter__(self) -> RunProgress:
        self._status = self.console.status("starting…")
        self._status.start()
        return self

    def __exit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        if self._status is not None:
            self._status.stop()
            self._status = None

    async def sink(self, event: RunEvent) -> None:
        await super().sink(event)
        if self._status is None or isinstance(event, ModelCalled):
            return
        match event:
            case RunStarted():
                self._status.update("selecting tools…")
            case ToolsSelected(tools=tools) if tools:
                self._status.update(f"running {shown(', '.join(tools))}…")
            case ToolFinished() | Evaluated(decision="more_tools"):
                self._status.update("evaluating the results…")
            case _:
                self._status.update("summarising…")


def print_result(console: Console, result: CategoryResult) -> None:
    """The result of one category call: status and summary, and each tool call."""
    style = _STATUS_STYLE.get(result.status, "white")
    body = shown(result.summary)
    if result.question:
        body += f"\n\n[bold]Question:[/] {shown(result.question)}"
    if result.missing:
        body += f"\n[bold]Missing:[/] {shown(', '.join(result.missing))}"
    if result.suggestion:
        body += f"\n\n[bold]Suggestion:[/] {shown(result.suggestion)}"
    title = f"[{style}]{shown(result.status)}[/] · {shown(result.category)}"
    console.print(Panel(body, title=title, title_align="left", border_style=style))
    if result.executions:
        table = Table("round", "tool", "ok", "time", "result or error", show_edge=False)
        for execution in result.executions:
            text = execution.result if execution.ok else execution.error
            table.add_row(
                str(execution.round),
                shown(execution.tool),
                "[green]✓[/]" if execution.ok else "[red]✗[/]",
                f"{execution.duration_s:.2f} s",
                shown(truncate((text or "").replace("\n", " "), 100)),
            )
        console.print(table)
    # The totals are the run's last step line, printed as it finished.


def print_saving(
    console: Console, listing: dict[str, Any], *, agent: str = "The main agent"
) -> None:
    """What the main agent sees versus all tools flat (see `checks.measure`)."""
    main, flat = listing["main_agent"], listing["flat"]

    def size(part: dict[str, Any]) -> str:
        return f"{part['chars']:,} characters, {part['tokens']:,} tokens"

    tools = "tool" if flat["tools"] == 1 else "tools"
    sees = "sees" if agent == "The main agent" else "saw"
    console.print(
        f"\n{agent} {sees} {main['tools']} category {'tool' if main['tools'] == 1 else 'tools'}:"
        f" {size(main)}.\nAll {flat['tools']} {tools} flat would be: {size(flat)}."
    )
    console.print(f"[dim]Tokens counted with {shown(listing['tokenizer'])}.[/]")
    if flat["chars"]:
        saved = 100 * (1 - main["chars"] / flat["chars"])
        console.print(
            f"That is [bold]{abs(saved):.0f}%[/] {'smaller' if saved >= 0 else 'larger'}."
        )


def print_listing(console: Console, listing: dict[str, Any]) -> None:
    """The output of `meta-tools list` (see `checks.measure`)."""
    table = Table("tool name", "category", "tools", show_lines=False, show_edge=False)
    for category in listing["categories"]:
        missing = [
            f"{m['pattern']!r} matches no tool" + (f": {m['why']}" if m["why"] else "")
            for m in category.get("unmatched", [])
        ]
        table.add_row(
            f"[bold]{shown(category['name'])}[/]",
            shown(category["display_name"]),
            shown(", ".join(category["tools"]) or "—")
            + "".join(f"\n[yellow]{shown(m)}[/]" for m in missing),
        )
    console.print(table)
    print_saving(console, listing)
    if "guards" in listing:
        guards = listing["guards"]
        console.print(
            f"Guard profile {shown(guards['profile'])!r}: {shown(guards['reason'])}", soft_wrap=True
        )
    for warning in listing.get("warnings", []):
        console.print(f"[yellow]warning:[/] {shown(warning)}", soft_wrap=True)


def print_grouping(console: Console, findings: list[dict[str, Any]]) -> None:
    """The grouping check of `meta-tools list --check` (see `meta_tools.grouping.check`)."""
    if not findings:
        console.print("[green]✓[/] grouping check: nothing to report")
        return
    console.print(f"\nGrouping check: {len(findings)} finding{'s' if len(findings) != 1 else ''}")
    for finding in findings:
        console.print(
            f"[yellow]{shown(finding['kind'])}:[/] {shown(finding['message'])}", soft_wrap=True
        )
