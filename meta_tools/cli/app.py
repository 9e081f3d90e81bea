"""The `meta-tools` command: serve, run, list, validate, schema, demo.

Errors are one clear line plus a hint (every problem, for a bad config),
never a traceback unless `--debug` is given.
"""

from __future__ import annotations

import importlib
import json
import logging
import sys
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Annotated, Any, Literal, NoReturn

import anyio
import typer
from anyio.abc import TaskStatus
from rich.console import Console

from ..config import MetaToolsConfig
from ..exceptions import (
    CategoryNotFoundError,
    ClosedError,
    ConfigError,
    MetaToolsError,
    ModelError,
    ToolArgumentsError,
    ToolDefinitionError,
    ToolError,
)
from ..router.manager import MetaManager
from ..router.reload import ConfigReloader
from ..tools.base import BaseTool
from ..tracing import Tracer
from .checks import NoModel, check_config, editor_schema, grouping_findings, measure
from .console import RunProgress, print_grouping, print_listing, print_result

__all__ = ["app", "main"]

DEFAULT_CONFIG = Path("Meta_tool_config.json")

app = typer.Typer(
    name="meta-tools",
    help="A hierarchical tool router for LLM agents: a few category tools in front of many tools.",
    no_args_is_help=True,
    add_completion=False,
    pretty_exceptions_enable=False,
    rich_markup_mode="rich",
)

ConfigOption = Annotated[
    Path,
    typer.Option("--config", "-c", help="The config file.", show_default=True),
]
ToolsOption = Annotated[
    list[str] | None,
    typer.Option(
        "--tools",
        "-t",
        help="Python tools to add: a module (every @tool in it) or module:attribute; repeatable.",
    ),
]
TraceOption = Annotated[
    Path | None, typer.Option("--trace", help="Append one JSON line per step event to this file.")
]

_HINTS: list[tuple[type[BaseException], str]] = [
    (ConfigError, "fix the file; `meta-tools validate` lists every problem"),
    (CategoryNotFoundError, "`meta-tools list` shows the categories"),
    (ToolArgumentsError, "pass both --objective and --input"),
    (ModelError, "check the `model` section and its API key environment variable"),
    (ToolDefinitionError, "decorate functions with @tool, or pass BaseTool objects"),
    (ToolError, "check that the tool's MCP server can start (see `mcp_servers` in the config)"),
    (ClosedError, "this is a bug in the caller; run with --debug for the traceback"),
]


@dataclass(frozen=True)
class _Options:
    debug: bool


def _stderr() -> Console:
    return Console(stderr=True, highlight=False)


def _fail(message: str, hint: str | None = None, *, problems: list[str] | None = None) -> NoReturn:
    err = _stderr()
    err.print(f"[bold red]error:[/] {message}", markup=True, soft_wrap=True)
    for problem in problems or []:
        err.print(f"  - {problem}", markup=False, soft_wrap=True)
    if hint:
        err.print(f"[dim]hint: {hint}[/]", soft_wrap=True)
    raise typer.Exit(1)


@contextmanager
def _errors(ctx: typer.Context) -> Iterator[None]:
    """Turn expected failures into one line plus a hint (full traceback with --debug)."""
    debug = isinstance(ctx.obj, _Options) and ctx.obj.debug
    try:
        yield
    except (typer.Exit, typer.Abort):
        raise
    except KeyboardInterrupt:
        _stderr().print("interrupted")
        raise typer.Exit(130) from None
    except Exception as exc:
        if debug:
            raise
        _describe(exc)


def _describe(exc: BaseException) -> NoReturn:
    if isinstance(exc, ConfigError):
        count = len(exc.problems)
        _fail(
            f"{exc.source}: {count} problem{'s' if count != 1 else ''}",
            _HINTS[0][1],
            problems=exc.problems,
        )
    nested = getattr(exc, "exceptions", None)  # an exception group from a task group
    if isinstance(nested, tuple) and len(nested) == 1 and isinstance(nested[0], BaseException):
        _describe(nested[0])
    hint = next((h for kind, h in _HINTS if isinstance(exc, kind)), None)
    if isinstance(exc, MetaToolsError):
        _fail(str(exc).splitlines()[0] if str(exc) else type(exc).__name__, hint)
    if isinstance(exc, OSError):
        _fail(str(exc), "check the path and its permissions")
    _fail(f"unexpected {type(exc).__name__}: {exc}", "run with --debug for the traceback")


def _load_tools(specs: list[str] | None) -> list[BaseTool]:
    """Import `module` (every tool in it) or `module:attribute` (a tool or a list of tools)."""
    found: list[BaseTool] = []
    if not specs:
        return found
    if "" not in sys.path:
        sys.path.insert(0, "")  # like `python -m`: modules in the working directory
    for spec in specs:
        module_name, _, attribute = spec.partition(":")
        try:
            module = importlib.import_module(module_name)
        except ImportError as exc:
            raise ToolDefinitionError(
                f"--tools {spec!r}: cannot import {module_name!r}: {exc}"
            ) from None
        if attribute:
            if not hasattr(module, attribute):
                raise ToolDefinitionError(f"--tools {spec!r}: {module_name!r} has no {attribute!r}")
            value = getattr(module, attribute)
            items = value if isinstance(value, list | tuple) else [value]
        else:
            items = list(vars(module).values())
        tools = [t for t in map(_as_tool, items) if t is not None]
        if attribute and len(tools) != len(items):
            raise ToolDefinitionError(f"--tools {spec!r}: not a tool or a list of tools")
        if not tools:
            raise ToolDefinitionError(f"--tools {spec!r}: the module defines no tool")
        found.extend(t for t in tools if all(t is not other for other in found))
    return found


def _as_tool(item: Any) -> BaseTool | None:
    if isinstance(item, BaseTool):
        return item
    wrapped = getattr(item, "_tool", None)
    return wrapped if isinstance(wrapped, BaseTool) else None


def _router(config: Path, tools: list[str] | None, *, needs_model: bool) -> MetaManager:
    loaded = MetaToolsConfig.load(config)
    return MetaManager.from_config(
        loaded, tools=_load_tools(tools), model=None if needs_model else NoModel()
    )


# -- commands --------------------------------------------------------------------------------


@app.callback()
def _root(
    ctx: typer.Context,
    debug: Annotated[bool, typer.Option("--debug", help="Show tracebacks.")] = False,
) -> None:
    ctx.obj = _Options(debug=debug)
    # Commands report problems themselves; `serve` lowers this to INFO (reloads, servers).
    _log_to_stderr(logging.DEBUG if debug else logging.ERROR)


@app.command()
def serve(
    ctx: typer.Context,
    config: ConfigOption = DEFAULT_CONFIG,
    transport: Annotated[
        str, typer.Option("--transport", help="stdio (for MCP hosts) or http (streamable HTTP).")
    ] = "stdio",
    host: Annotated[str, typer.Option(help="HTTP host to bind.")] = "127.0.0.1",
    port: Annotated[int, typer.Option(help="HTTP port (0 picks a free one).")] = 8000,
    token: Annotated[
        str | None,
        typer.Option(
            envvar="META_TOOLS_TOKEN",
            help="HTTP: require 'Authorization: Bearer <token>'.",
            show_default=False,
        ),
    ] = None,
    trace: TraceOption = None,
    reload: Annotated[
        bool, typer.Option("--reload/--no-reload", help="Apply config edits without a restart.")
    ] = True,
    tools: ToolsOption = None,
) -> None:
    """Serve the category tools over MCP (stdio or streamable HTTP); all logs go to stderr."""
    with _errors(ctx):
        if transport not in ("stdio", "http"):
            _fail(f"--transport must be 'stdio' or 'http', not {transport!r}")
        chosen: Literal["stdio", "http"] = "stdio" if transport == "stdio" else "http"
        meta = MetaManager.from_config(config, tools=_load_tools(tools))
        _log_to_stderr(logging.DEBUG if ctx.obj.debug else logging.INFO)
        settings = _ServeSettings(chosen, host, port, token, trace, reload)
        anyio.run(lambda: _serve(meta, config, settings))


@dataclass(frozen=True)
class _ServeSettings:
    transport: Literal["stdio", "http"]
    host: str
    port: int
    token: str | None
    trace: Path | None
    reload: bool


async def _serve(meta: MetaManager, config: Path, settings: _ServeSettings) -> None:
    """Run the MCP server and, beside it, the config watcher; stop both when the server stops."""
    from ..serve.server import serve as serve_mcp

    err = _stderr()
    tracer = meta.tracer = Tracer(jsonl=settings.trace) if settings.trace else None
    try:
        async with anyio.create_task_group() as group:

            async def run_server(*, task_status: TaskStatus[str]) -> None:
                await serve_mcp(
                    meta,
                    transport=settings.transport,
                    host=settings.host,
                    port=settings.port,
                    token=settings.token,
                    task_status=task_status,
                )
                group.cancel_scope.cancel()  # stdin closed: stop watching too

            where = await group.start(run_server)
            names = ", ".join(m.slug for m in meta.categories)
            err.print(
                f"serving {len(meta.categories)} category tools ({names}) on {where}",
                soft_wrap=True,
            )
            for warning in meta.warnings:
                err.print(f"[yellow]warning:[/] {warning}", soft_wrap=True)
            if settings.reload:
                # Reloads are reported through logging (see `_log_to_stderr`).
                await group.start(ConfigReloader(meta, config).run)
    finally:
        if tracer is not None:
            await tracer.aclose()


class _StderrHandler(logging.Handler):
    """Writes to whatever `sys.stderr` is at the time (test runners swap it)."""

    def emit(self, record: logging.LogRecord) -> None:
        try:
            sys.stderr.write(self.format(record) + "\n")
        except (OSError, ValueError):
            self.handleError(record)


def _log_to_stderr(level: int) -> None:
    """The command's log: meta-tools messages (reloads, MCP servers) on stderr, from `level`."""
    package = logging.getLogger("meta_tools")
    if not any(isinstance(h, _StderrHandler) for h in package.handlers):
        handler = _StderrHandler()
        handler.setFormatter(logging.Formatter("%(asctime)s %(levelname)s %(message)s", "%H:%M:%S"))
        package.addHandler(handler)
        package.propagate = False
    package.setLevel(level)


@app.command()
def run(
    ctx: typer.Context,
    category: Annotated[str, typer.Argument(help="The category (its tool name or display name).")],
    objective: Annotated[str, typer.Option("--objective", "-o", help="The goal.")],
    exact_input: Annotated[str, typer.Option("--input", "-i", help="The exact input.")],
    config: ConfigOption = DEFAULT_CONFIG,
    as_json: Annotated[bool, typer.Option("--json", help="Print only the result as JSON.")] = False,
    trace: TraceOption = None,
    tools: ToolsOption = None,
) -> None:
    """Run one category call, showing each step live, then its result."""

    console = Console(highlight=False)
    with _errors(ctx):
        meta = _router(config, tools, needs_model=True)

        async def go() -> Any:
            async with meta:
                tracer = meta.tracer = Tracer(jsonl=trace) if trace else None
                try:
                    arguments = {"objective": objective, "exact_input": exact_input}
                    if as_json:
                        return await meta.call_tool(category, arguments)
                    with RunProgress(console) as progress:
                        return await meta.call_tool(category, arguments, on_event=progress.sink)
                finally:
                    if tracer is not None:
                        await tracer.aclose()

        result = anyio.run(go)
        if as_json:
            typer.echo(result.model_dump_json(indent=2))
        else:
            print_result(console, result)
        if result.status == "failed":
            raise typer.Exit(1)


@app.command("list")
def list_(
    ctx: typer.Context,
    config: ConfigOption = DEFAULT_CONFIG,
    tools: ToolsOption = None,
    as_json: Annotated[bool, typer.Option("--json", help="Print as JSON.")] = False,
    check: Annotated[bool, typer.Option("--check", help="Also check the grouping.")] = False,
) -> None:
    """List the categories, their tools, and what the main agent sees versus all tools flat."""
    with _errors(ctx):
        meta = _router(config, tools, needs_model=False)

        async def go() -> dict[str, Any]:
            async with meta:
                found = measure(meta)
                if check:
                    found["grouping"] = [vars(f) for f in grouping_findings(meta)]
                return found

        listing = anyio.run(go)
        if as_json:
            typer.echo(json.dumps(listing, indent=2, ensure_ascii=False))
        else:
            print_listing(Console(highlight=False), listing)
        if check and not as_json:
            print_grouping(Console(highlight=False), listing["grouping"])


@app.command()
def validate(
    ctx: typer.Context,
    config: Annotated[Path, typer.Argument(help="The config file.")] = DEFAULT_CONFIG,
    tools: ToolsOption = None,
    offline: Annotated[
        bool, typer.Option("--offline", help="Do not start MCP servers to check tool names.")
    ] = False,
) -> None:
    """Check a config: every problem listed (exit 1), then warnings."""
    with _errors(ctx):
        report = anyio.run(lambda: check_config(config, _load_tools(tools), offline=offline))
        console, err = Console(highlight=False), _stderr()
        for warning in report.warnings:
            err.print(f"[yellow]warning:[/] {warning}", soft_wrap=True)
        if report.problems:
            count = len(report.problems)
            _fail(
                f"{config}: {count} problem{'s' if count != 1 else ''}",
                "fix them and run `meta-tools validate` again",
                problems=report.problems,
            )
        console.print(f"[green]✓[/] {config}: {report.summary}", soft_wrap=True)


@app.command()
def schema() -> None:
    """Print the config's JSON Schema (for editors)."""
    typer.echo(json.dumps(editor_schema(), indent=2))


@app.command()
def demo(
    ctx: typer.Context,
    config: Annotated[
        Path | None,
        typer.Option("--config", "-c", help="A config grouping the demo server's tools."),
    ] = None,
    trace: TraceOption = None,
) -> None:
    """Run the offline demo: a scripted conversation through the real router and MCP server."""
    from .demo import run_demo

    with _errors(ctx):
        anyio.run(lambda: run_demo(Console(highlight=False), config=config, trace=trace))


def main() -> None:
    """The console script's entry point."""
    app()
