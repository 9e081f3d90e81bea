"""The `meta-tools` command: init, serve, run, prompt, list, validate, trace, schema, demo.

What the commands share (the app, options, error reporting, loading) is in
`common`; `chat` and `group` register themselves from their own modules. Global options (`--debug`,
`--log-level`) may also come after the command, as with uv and ruff.
"""

from __future__ import annotations

import json
import logging
import sys
from dataclasses import dataclass
from pathlib import Path
from typing import Annotated, Any, Literal

import anyio
import typer
from anyio.abc import TaskStatus
from rich.console import Console

from ..config import SECTIONS, read_json
from ..exceptions import ConfigError
from ..router.from_config import missing_model, profile_choice, serving_fallback
from ..router.manager import MetaManager
from ..router.reload import ConfigReloader
from ..tracing import Tracer
from . import version_line
from .argv import hoist_global_options
from .checks import NoModel, check_category, check_config, editor_schema, grouping_findings, measure
from .common import (
    DEFAULT_CONFIG,
    LOG_LEVELS,
    CategoryArgument,
    ConfigArgument,
    ConfigOption,
    GlobalOptions,
    InputOption,
    ObjectiveOption,
    ToolsOption,
    TraceOption,
    app,
    describe_guards,
    describe_model,
    fail,
    level_of,
    load_config,
    load_tools,
    log_to_stderr,
    one_config,
    plain_commands,
    report_errors,
    require_config,
    require_model,
    stderr_console,
)
from .console import RunProgress, print_grouping, print_listing, print_result
from .init import PROMPTS_DIR, write_starter
from .terminal import printable, printable_json, shown

__all__ = ["app", "main"]

# -- commands --------------------------------------------------------------------------------


def _print_version(value: bool) -> None:
    if value:
        typer.echo(version_line())
        raise typer.Exit()


@app.callback()
def _root(
    ctx: typer.Context,
    debug: Annotated[
        bool,
        typer.Option("--debug", help="Show tracebacks and debug logs (also after the command)."),
    ] = False,
    log_level: Annotated[
        str | None,
        typer.Option(
            "--log-level",
            help="Log level on stderr: debug, info, warning or error (default: error; info"
            " for serve).",
            metavar="LEVEL",
            show_default=False,
        ),
    ] = None,
    version: Annotated[
        bool,
        typer.Option(
            "--version",
            "-V",
            help="Print the version and exit.",
            callback=_print_version,
            is_eager=True,
        ),
    ] = False,
) -> None:
    if log_level is not None and log_level.lower() not in LOG_LEVELS:
        fail(f"--log-level must be one of {', '.join(LOG_LEVELS)}, not {log_level!r}")
    ctx.obj = GlobalOptions(debug=debug, log_level=log_level)
    # Commands report problems themselves; `serve` lowers this to INFO (reloads, servers).
    log_to_stderr(level_of(ctx.obj, logging.ERROR))


@app.command()
def serve(
    ctx: typer.Context,
    file: ConfigArgument = None,
    config: ConfigOption = DEFAULT_CONFIG,
    transport: Annotated[
        str,
        typer.Option(
            "--transport",
            help="stdio (for MCP hosts) or http (streamable HTTP).",
            metavar="[stdio|http]",
        ),
    ] = "stdio",
    host: Annotated[str, typer.Option(help="HTTP host to bind.", metavar="HOST")] = "127.0.0.1",
    port: Annotated[
        int, typer.Option(help="HTTP port (0 picks a free one).", metavar="PORT")
    ] = 8000,
    path: Annotated[
        str, typer.Option(help="HTTP path of the MCP endpoint.", metavar="PATH")
    ] = "/mcp",
    replica: Annotated[
        str | None,
        typer.Option(
            envvar="META_TOOLS_REPLICA",
            help="HTTP: this replica's name, put in its session ids for load-balancer affinity.",
            show_default=False,
            metavar="NAME",
        ),
    ] = None,
    token: Annotated[
        str | None,
        typer.Option(
            envvar="META_TOOLS_TOKEN",
            help="HTTP: require 'Authorization: Bearer TOKEN'.",
            show_default=False,
            metavar="TOKEN",
        ),
    ] = None,
    trace: TraceOption = None,
    reload: Annotated[
        bool, typer.Option("--reload/--no-reload", help="Apply config edits without a restart.")
    ] = True,
    tools: ToolsOption = None,
) -> None:
    """Serve the category tools over MCP (stdio or HTTP).

    All logs go to stderr, so stdout stays for the protocol.
    """
    config = one_config(file, config)
    with report_errors(ctx):
        if transport not in ("stdio", "http"):
            fail(f"--transport must be 'stdio' or 'http', not {transport!r}")
        chosen: Literal["stdio", "http"] = "stdio" if transport == "stdio" else "http"
        loaded = load_config(config)
        fallback = serving_fallback(loaded)
        if fallback is None:
            require_model(loaded, config, serving=True)
        from ..serve.server import serve_router

        meta = serve_router(loaded, tools=load_tools(tools))
        if fallback is not None:  # once the config is known to work: no note before an error
            stderr_console().print(
                f"note: {fallback}; the categories use the MCP host's own model (sampling)."
                " A host that cannot sample gets an error naming the ways out.",
                soft_wrap=True,
                markup=False,
            )
        log_to_stderr(level_of(ctx.obj, logging.INFO))
        if not path.startswith("/"):
            fail(f"--path must start with '/', not {path!r}")
        from ..serve.proxy import REPLICA_NAME

        if replica is not None and not REPLICA_NAME.fullmatch(replica):
            fail(f"--replica must match {REPLICA_NAME.pattern}, not {replica!r}")
        settings = _ServeSettings(chosen, host, port, path, replica, token, trace, reload)
        anyio.run(lambda: _serve(meta, config, settings))


@dataclass(frozen=True)
class _ServeSettings:
    transport: Literal["stdio", "http"]
    host: str
    port: int
    path: str
    replica: str | None
    token: str | None
    trace: Path | None
    reload: bool


async def _serve(meta: MetaManager, config: Path, settings: _ServeSettings) -> None:
    """Run the MCP server and, beside it, the config watcher; stop both when the server stops."""
    from ..serve.server import serve as serve_mcp

    err = stderr_console()
    tracer = meta.tracer = Tracer(jsonl=settings.trace) if settings.trace else None
    try:
        async with anyio.create_task_group() as group:

            async def run_server(*, task_status: TaskStatus[str]) -> None:
                await serve_mcp(
                    meta,
                    transport=settings.transport,
                    host=settings.host,
                    port=settings.port,
                    path=settings.path,
                    replica=settings.replica,
                    token=settings.token,
                    task_status=task_status,
                )
                group.cancel_scope.cancel()  # stdin closed: stop watching too

            where = await group.start(run_server)
            names = ", ".join(m.slug for m in meta.categories)
            err.print(
                f"serving {len(meta.categories)} category tools ({shown(names)}) on {shown(where)}",
                soft_wrap=True,
            )
            err.print(f"the categories use {shown(describe_model(meta))}", soft_wrap=True)
            err.print(shown(describe_guards(meta)), soft_wrap=True)
            for warning in meta.warnings:
                err.print(f"[yellow]warning:[/] {shown(warning)}", soft_wrap=True)
            if settings.reload:
                # Reloads are reported through logging (see `log_to_stderr`).
                await group.start(ConfigReloader(meta, config).run)
    finally:
        if tracer is not None:
            await tracer.aclose()


@app.command()
def run(
    ctx: typer.Context,
    category: CategoryArgument,
    objective: ObjectiveOption,
    exact_input: InputOption,
    config: ConfigOption = DEFAULT_CONFIG,
    as_json: Annotated[
        bool,
        typer.Option(
            "--json",
            help="Print only the whole result as JSON, as an MCP host gets it from `serve`"
            " (with rounds, timings and usage).",
        ),
    ] = False,
    for_agent: Annotated[
        bool,
        typer.Option(
            "--for-agent",
            help="Print only what a main agent's LLM reads of the result, as JSON (what"
            " `chat` and MainAgent send it: no rounds, timings or usage).",
        ),
    ] = False,
    trace: TraceOption = None,
    tools: ToolsOption = None,
) -> None:
    """Run one category call, showing each step live, then its result."""

    console = Console(highlight=False)
    with report_errors(ctx):
        if as_json and for_agent:
            fail("--json and --for-agent print different views of the result; pass one")
        loaded = load_config(config)
        check_category(loaded, category)
        if (why := missing_model(loaded, serving=False)) is not None:
            # The model is the last thing to add: report what else is wrong first.
            report = anyio.run(lambda: check_config(config, load_tools(tools)))
            if report.problems:
                count = len(report.problems)
                fail(
                    f"{config}: {count} problem{'s' if count != 1 else ''}, and no model",
                    "fix the file (`meta-tools validate` checks it again); then add a model:"
                    " `meta-tools run` names the ways",
                    problems=[*report.problems, f"cannot run a category: {why}"],
                )
        require_model(loaded, config, serving=False)
        meta = MetaManager.from_config(loaded, tools=load_tools(tools))

        async def go() -> Any:
            async with meta:
                tracer = meta.tracer = Tracer(jsonl=trace) if trace else None
                try:
                    arguments = {"objective": objective, "exact_input": exact_input}
                    if as_json or for_agent:
                        return await meta.call_tool(category, arguments)
                    with RunProgress(console) as progress:
                        return await meta.call_tool(category, arguments, on_event=progress.sink)
                finally:
                    if tracer is not None:
                        await tracer.aclose()

        result = anyio.run(go)
        if as_json or for_agent:  # indented to read; the same data as sent
            sent = result.for_agent() if for_agent else result.to_json()
            shaped = json.dumps(json.loads(sent), indent=2, ensure_ascii=False)
            typer.echo(printable_json(shaped))
        else:
            print_result(console, result)
        if result.status == "failed":
            raise typer.Exit(1)


@app.command()
def prompt(
    ctx: typer.Context,
    category: CategoryArgument,
    objective: ObjectiveOption,
    exact_input: InputOption,
    config: ConfigOption = DEFAULT_CONFIG,
    as_json: Annotated[bool, typer.Option("--json", help="Print as JSON.")] = False,
    tools: ToolsOption = None,
) -> None:
    """Print what the category's LLM would be sent for this task, without a model.

    The rendered templates and the offered tools (after the shortlist); needs no
    key and runs no tool.
    """
    from .prompt import PromptCapture, preview_prompts, preview_text

    with report_errors(ctx):
        loaded = load_config(config)
        check_category(loaded, category)
        capture = PromptCapture()
        meta = MetaManager.from_config(loaded, tools=load_tools(tools), model=capture)

        async def go() -> Any:
            async with meta:
                return await preview_prompts(meta, capture, category, objective, exact_input)

        preview = anyio.run(go)
        if as_json:
            shaped = json.dumps(preview.as_dict(), indent=2, ensure_ascii=False)
            typer.echo(printable_json(shaped))
        else:
            typer.echo(printable(preview_text(preview)))


@app.command("list")
def list_(
    ctx: typer.Context,
    file: ConfigArgument = None,
    config: ConfigOption = DEFAULT_CONFIG,
    tools: ToolsOption = None,
    as_json: Annotated[bool, typer.Option("--json", help="Print as JSON.")] = False,
    check: Annotated[bool, typer.Option("--check", help="Also check the grouping.")] = False,
) -> None:
    """List the categories and their tools.

    Also what the main agent sees versus all tools flat.
    """
    config = one_config(file, config)
    with report_errors(ctx):
        loaded = load_config(config)
        meta = MetaManager.from_config(loaded, tools=load_tools(tools), model=NoModel())

        async def go() -> dict[str, Any]:
            async with meta:
                found = measure(meta)
                # The model is not asked here (`list` needs none): its name as configured.
                choice = profile_choice(loaded)
                found["guards"] = {"profile": choice.guards, "reason": choice.reason}
                if check:
                    found["grouping"] = [vars(f) for f in grouping_findings(meta)]
                return found

        listing = anyio.run(go)
        if as_json:
            typer.echo(printable_json(json.dumps(listing, indent=2, ensure_ascii=False)))
        else:
            print_listing(Console(highlight=False), listing)
        if check and not as_json:
            print_grouping(Console(highlight=False), listing["grouping"])


@app.command()
def validate(
    ctx: typer.Context,
    file: ConfigArgument = None,
    config: ConfigOption = DEFAULT_CONFIG,
    tools: ToolsOption = None,
    offline: Annotated[
        bool, typer.Option("--offline", help="Do not start MCP servers to check tool names.")
    ] = False,
) -> None:
    """Check a config: every problem listed (exit 1), then warnings."""
    config = one_config(file, config)
    with report_errors(ctx):
        require_config(config)
        report = anyio.run(lambda: check_config(config, load_tools(tools), offline=offline))
        console, err = Console(highlight=False), stderr_console()
        for warning in report.warnings:
            err.print(f"[yellow]warning:[/] {shown(warning)}", soft_wrap=True)
        if report.problems:
            count = len(report.problems)
            fail(
                f"{config}: {count} problem{'s' if count != 1 else ''}",
                f"fix {'them' if count != 1 else 'it'} and run `meta-tools validate` again",
                problems=report.problems,
            )
        console.print(f"[green]✓[/] {shown(config)}: {shown(report.summary)}", soft_wrap=True)


@app.command()
def init(
    ctx: typer.Context,
    file: ConfigArgument = None,
    config: ConfigOption = DEFAULT_CONFIG,
    prompts: Annotated[
        bool,
        typer.Option(
            "--prompts", help=f"Also copy the prompt templates to ./{PROMPTS_DIR} to edit."
        ),
    ] = False,
    force: Annotated[bool, typer.Option("--force", help="Overwrite existing files.")] = False,
) -> None:
    """Write a commented starter config.

    It groups the tools of the demo MCP server that ships with meta-tools, so it
    works at once, offline and without a key.
    """
    config = one_config(file, config)
    with report_errors(ctx):
        folder = config.parent
        written = write_starter(folder, name=config.name, prompts=prompts, force=force)
        for path in written:
            typer.echo(f"wrote {path}{'/' if path.is_dir() else ''}")
        if config not in written:  # --prompts beside a config of the user's: it is kept
            typer.echo(f"kept {config} as it is (--force would replace it with the starter)")
            if not _names_prompts_dir(config):
                typer.echo(f'to use the templates, add "prompts_dir": "{PROMPTS_DIR}" to {config}')
        flag = "" if config == DEFAULT_CONFIG else f" -c {config}"
        typer.echo(
            f"next: meta-tools list{flag}  (the categories), meta-tools validate{flag},"
            f" meta-tools serve{flag}  (for an MCP host)"
        )


def _names_prompts_dir(config: Path) -> bool:
    """Whether the config file already names a templates folder (unreadable: say it does not)."""
    try:
        data = read_json(config, sections=SECTIONS)
    except (ConfigError, OSError):
        return False
    return isinstance(data, dict) and "prompts_dir" in data


@app.command()
def trace(
    ctx: typer.Context,
    file: Annotated[Path, typer.Argument(help="A trace written with --trace.", metavar="FILE")],
    run_id: Annotated[
        str | None,
        typer.Option("--run", help="Show only this run (its id or a prefix).", metavar="ID"),
    ] = None,
    full: Annotated[
        bool, typer.Option("--full", help="Show tool results and replies whole, not cut.")
    ] = False,
    summary: Annotated[
        bool,
        typer.Option(
            "--summary",
            help="One line per run, newest first: id, when, request, categories, tool calls,"
            " outcome, time.",
        ),
    ] = False,
) -> None:
    """Show a --trace file as a tree per run, or one line per run (--summary).

    A main agent's turn: what its model was offered and called, each category call
    with the runs behind it (retries too), what came back, and the answer. A category
    run: each LLM call with the new messages of its prompt and its reply; each tool
    call with its arguments and result.
    """
    from .trace import UnknownRunError
    from .trace_view import print_trace

    console = Console(highlight=False)
    with report_errors(ctx):
        try:
            print_trace(
                console, file, run_id=run_id, full=full, summary=summary, err=stderr_console()
            )
        except UnknownRunError as exc:
            fail(
                str(exc),
                "pass a run's id, or its start, to --run",
                problems=exc.runs,
            )


@app.command()
def schema() -> None:
    """Print the config's JSON Schema (for editors)."""
    typer.echo(json.dumps(editor_schema(), indent=2))


@app.command()
def demo(
    ctx: typer.Context,
    file: ConfigArgument = None,
    config: Annotated[
        Path | None,
        typer.Option(
            "--config", "-c", help="A config grouping the demo server's tools.", metavar="FILE"
        ),
    ] = None,
    trace: TraceOption = None,
) -> None:
    """Run the offline demo.

    A scripted conversation through the real router and MCP server.
    """
    from .offline_demo import run_demo

    config = one_config(file, config)
    with report_errors(ctx):
        anyio.run(lambda: run_demo(Console(highlight=False), config=config, trace=trace))


def main() -> None:
    """The console script's entry point."""
    app(args=hoist_global_options(sys.argv[1:]), prog_name="meta-tools")


# Register `meta-tools chat`, `group` and `login` (listed last); they build on `common`, as
# the commands above do.
from . import chat as _chat  # noqa: E402, F401
from . import group as _group  # noqa: E402, F401
from . import login as _login  # noqa: E402, F401

plain_commands(app)  # every command, `chat` and `group` too: `run [OPTIONS] CATEGORY`
