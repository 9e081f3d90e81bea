"""`meta-tools chat`: talk to a main agent that sees only the config's category tools.

The model is the config's `model` section, with what it leaves out read from the
environment (``OPENAI_BASE_URL``, ``OPENAI_API_KEY``, ``OPENAI_MODEL``,
``META_TOOLS_TIMEOUT_S``), as `run` and `serve` read it; the main agent and the
categories use the same one.
"""

from __future__ import annotations

from functools import partial
from pathlib import Path
from typing import Annotated

import anyio
import anyio.from_thread
import typer
from anyio.from_thread import BlockingPortal
from rich.console import Console

from ..agent import MainAgent
from ..exceptions import ModelError
from ..router.manager import MetaManager
from ..tracing import Tracer
from .common import (
    DEFAULT_CONFIG,
    ConfigArgument,
    ConfigOption,
    ToolsOption,
    TraceOption,
    app,
    describe_guards,
    describe_model,
    load_config,
    load_tools,
    one_config,
    report_errors,
    require_model,
    stderr_console,
)
from .console import AgentStepPrinter
from .terminal import shown

__all__ = ["chat"]

_LEAVE = ("exit", "quit")


@app.command()
def chat(
    ctx: typer.Context,
    file: ConfigArgument = None,
    config: ConfigOption = DEFAULT_CONFIG,
    trace: TraceOption = None,
    tools: ToolsOption = None,
    name: Annotated[
        str, typer.Option("--name", help="What the main agent calls itself.", metavar="NAME")
    ] = "Friday",
) -> None:
    """Chat with a main agent that sees only the category tools; 'exit' or Ctrl-D leaves.

    Each of its category calls is shown step by step, as `run` shows one.
    """
    config = one_config(file, config)
    console = Console(highlight=False)
    with report_errors(ctx):
        loaded = load_config(config)
        require_model(loaded, config, serving=False)
        # The router builds (and owns) the model: once open, it knows the name the
        # server serves and the guard profile that name calls for.
        meta = MetaManager.from_config(loaded, tools=load_tools(tools))
        _converse(console, MainAgent(meta.model, meta, name=name), trace)


def _converse(console: Console, agent: MainAgent, trace: Path | None) -> None:
    """Read a line, answer it, until `exit`, Ctrl-D or Ctrl-C.

    The router lives in an event loop on a background thread (a blocking portal), so
    this thread can wait on the terminal without blocking the MCP sessions.
    """
    meta = agent.meta
    tracer = meta.tracer = Tracer(jsonl=trace) if trace else None
    printer = AgentStepPrinter(console, agent=agent.name)
    with anyio.from_thread.start_blocking_portal() as portal:
        try:
            with portal.wrap_async_context_manager(meta):
                _loop(console, agent, portal, printer)
        finally:
            # The router closed the model it built, in this event loop.
            if tracer is not None:
                portal.call(tracer.aclose)


def _loop(
    console: Console, agent: MainAgent, portal: BlockingPortal, printer: AgentStepPrinter
) -> None:
    """The conversation itself, with the router open in `portal`'s event loop."""
    console.print(
        f"[dim]{shown(agent.name)} and the categories use {shown(describe_model(agent.meta))}.\n"
        f"{shown(describe_guards(agent.meta))}[/]",
        soft_wrap=True,
    )
    for warning in agent.meta.warnings:
        stderr_console().print(f"[yellow]warning:[/] {shown(warning)}", soft_wrap=True)
    names = ", ".join(m.slug for m in agent.meta.categories)
    console.print(
        f"[dim]{shown(agent.name)}'s tools: {shown(names)}. Type 'exit' to leave.[/]",
        soft_wrap=True,
    )
    while True:
        try:
            text = console.input("[bold green]you>[/] ").strip()
        except (EOFError, KeyboardInterrupt):
            console.print()
            return
        if text.lower() in _LEAVE:
            return
        if not text:
            continue
        try:
            answer = portal.call(partial(agent.ask, text, on_step=printer))
        except ModelError as exc:
            # The conversation goes on: a timeout or a 5xx may pass.
            console.print(f"[red]The model failed:[/] {shown(str(exc))}", soft_wrap=True)
            continue
        console.print(f"[bold cyan]{shown(agent.name)}>[/] {shown(answer)}\n", soft_wrap=True)
