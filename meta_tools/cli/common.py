"""What every `meta-tools` command shares: the app, its options, error reporting,
loading the config and tools, and the log on stderr.

Errors are one clear line plus a hint (every problem, for a bad config), never a
traceback unless `--debug` is given.
"""

from __future__ import annotations

import errno
import logging
import sys
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Annotated, Any, NoReturn, TypeVar

import typer
from rich.console import Console
from typer.core import TyperArgument, TyperCommand

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
from ..llm.profile import model_name
from ..llm.sampling import SamplingChatModel
from ..router.from_config import missing_model, timeout_reason, with_environment
from ..router.manager import MetaManager
from ..router.ways_out import ways_out
from ..tools.base import BaseTool
from ..tools.python_modules import collect_tools, import_tools
from .terminal import printable, shown

__all__ = [
    "DEFAULT_CONFIG",
    "LOG_LEVELS",
    "CategoryArgument",
    "ConfigArgument",
    "ConfigOption",
    "GlobalOptions",
    "InputOption",
    "ObjectiveOption",
    "PlainCommand",
    "ToolsOption",
    "TraceOption",
    "app",
    "fail",
    "level_of",
    "load_config",
    "load_tools",
    "log_to_stderr",
    "one_config",
    "plain_commands",
    "report_errors",
    "require_config",
    "require_model",
    "stderr_console",
]

DEFAULT_CONFIG = Path("Meta_tool_config.json")


class PlainCommand(TyperCommand):
    """A command whose arguments read as its options do: `CATEGORY`, `[FILE]`.

    Typer writes a required argument `{CATEGORY}` in the usage line and adds its
    type (`CATEGORY <str>`, `FILE <path>`) in the help; our options show one
    upper-case word (`-c FILE`), so the arguments do too. The context and formatter are
    typed `Any`: their classes are those of the click that typer bundles privately.
    """

    def collect_usage_pieces(self, ctx: Any) -> list[str]:
        pieces = [self.options_metavar] if self.options_metavar else []
        for param in self.get_params(ctx):
            if not isinstance(param, TyperArgument):
                pieces.extend(param.get_usage_pieces(ctx))
                continue
            name = _placeholder(param)
            name = name if param.required else f"[{name}]"
            pieces.append(name + ("..." if param.nargs != 1 else ""))
        return pieces

    def format_options(self, ctx: Any, formatter: Any) -> None:
        arguments, options = [], []
        for param in self.get_params(ctx):
            record = param.get_help_record(ctx)
            if record is None:
                continue
            if isinstance(param, TyperArgument):
                arguments.append((_placeholder(param), record[1]))
            else:
                options.append(record)
        for title, rows in (("Arguments", arguments), ("Options", options)):
            if rows:
                with formatter.section(title):
                    formatter.write_dl(rows)


def _placeholder(argument: TyperArgument) -> str:
    return argument.metavar or (argument.name or "").upper()


def plain_commands(typer_app: typer.Typer) -> None:
    """Make every command of `typer_app` registered so far a `PlainCommand`."""
    for info in typer_app.registered_commands:
        if info.cls in (None, TyperCommand):
            info.cls = PlainCommand


app = typer.Typer(
    name="meta-tools",
    help="A hierarchical tool router for LLM agents: a few category tools in front of many tools.",
    no_args_is_help=True,
    add_completion=False,
    pretty_exceptions_enable=False,
    rich_markup_mode=None,  # plain help, as uv and ruff print it
)

ConfigOption = Annotated[
    Path,
    typer.Option("--config", "-c", help="The config file.", show_default=True, metavar="FILE"),
]
ConfigArgument = Annotated[
    Path | None,
    typer.Argument(help="The config file (the same as -c).", show_default=False, metavar="FILE"),
]
"""The config file given positionally (`meta-tools list mine.json`), as every command takes it."""


_Config = TypeVar("_Config", Path, Path | None)


def one_config(file: Path | None, config: _Config) -> _Config | Path:
    """The config file of a command given it positionally (`file`) or with `-c` (`config`).

    Both, naming different files, is refused: taking either would be a guess.
    """
    if file is None:
        return config
    if config not in (None, DEFAULT_CONFIG, file):
        fail(
            f"two config files given: {str(file)!r} and -c {str(config)!r}",
            "give the config once, as FILE or with -c",
        )
    return file


CategoryArgument = Annotated[
    str, typer.Argument(help="The category (its tool name or display name).", metavar="CATEGORY")
]
ObjectiveOption = Annotated[
    str, typer.Option("--objective", "-o", help="The goal.", metavar="TEXT")
]
InputOption = Annotated[str, typer.Option("--input", "-i", help="The exact input.", metavar="TEXT")]
ToolsOption = Annotated[
    list[str] | None,
    typer.Option(
        "--tools",
        "-t",
        help="Python tools to add: a module or path/to/file.py (every @tool in it), either"
        " with :attribute (a tool, a ToolPack or a list); repeatable.",
        metavar="SPEC",
    ),
]
TraceOption = Annotated[
    Path | None,
    typer.Option(
        "--trace",
        help="Append one JSON line per step to this file, with the rendered prompts, tool"
        " arguments and results (secrets redacted); view it with `meta-tools trace FILE`.",
        metavar="FILE",
    ),
]

_HINTS: list[tuple[type[BaseException], str]] = [
    (ConfigError, "fix the file; `meta-tools validate` lists every problem"),
    (CategoryNotFoundError, "`meta-tools list` shows the categories"),
    (ToolArgumentsError, "pass both --objective and --input"),
    (ModelError, "check the model in the config; `meta-tools validate` says what it needs"),
    (ToolDefinitionError, "check the --tools spec or the config's `python_tools`"),
    (ToolError, "check that the tool's MCP server can start (see `mcp_servers` in the config)"),
    (ClosedError, "this is a bug in the caller; run with --debug for the traceback"),
]


@dataclass(frozen=True)
class GlobalOptions:
    """The options given before (or after) any command: `--debug`, `--log-level`."""

    debug: bool
    log_level: str | None = None


def stderr_console() -> Console:
    """A console on stderr, for errors and progress."""
    return Console(stderr=True, highlight=False)


def fail(message: str, hint: str | None = None, *, problems: list[str] | None = None) -> NoReturn:
    """Print the error (with every problem and a hint) on stderr and exit with status 1."""
    # The message and problems may quote a tool, a server or a file: untrusted.
    err = stderr_console()
    err.print(f"[bold red]error:[/] {shown(message)}", soft_wrap=True)
    for problem in problems or []:
        err.print(f"  - {printable(problem)}", markup=False, soft_wrap=True)
    if hint:
        err.print(f"[dim]hint: {shown(hint)}[/]", soft_wrap=True)
    raise typer.Exit(1)


@contextmanager
def report_errors(ctx: typer.Context) -> Iterator[None]:
    """Turn expected failures into one line plus a hint (full traceback with --debug)."""
    debug = isinstance(ctx.obj, GlobalOptions) and ctx.obj.debug
    try:
        yield
    except (typer.Exit, typer.Abort):
        raise
    except KeyboardInterrupt:
        stderr_console().print("interrupted")
        raise typer.Exit(130) from None
    except Exception as exc:
        if debug:
            raise
        _describe(exc)


def _describe(exc: BaseException) -> NoReturn:
    if isinstance(exc, ConfigError):
        problems = exc.problems
        count = len(problems)
        fail(
            f"{exc.source}: {count} problem{'s' if count != 1 else ''}",
            _HINTS[0][1],
            problems=problems,
        )
    nested = getattr(exc, "exceptions", None)  # an exception group from a task group
    if isinstance(nested, tuple) and len(nested) == 1 and isinstance(nested[0], BaseException):
        _describe(nested[0])
    hint = next((h for kind, h in _HINTS if isinstance(exc, kind)), None)
    if isinstance(exc, MetaToolsError):
        fail(str(exc).splitlines()[0] if str(exc) else type(exc).__name__, hint)
    if isinstance(exc, OSError) and exc.errno == errno.EADDRINUSE:
        fail(
            exc.strerror or str(exc),
            "another process uses that port: pass another --port, or 0 for a free one",
        )
    if isinstance(exc, OSError):
        fail(str(exc), "check the path and its permissions")
    fail(f"unexpected {type(exc).__name__}: {exc}", "run with --debug for the traceback")


def load_tools(specs: list[str] | None) -> list[BaseTool]:
    """The tools of each `--tools` spec (see `import_tools`), found from the working directory."""
    return collect_tools([import_tools(spec, base_dir=Path.cwd()) for spec in specs or []])


def require_config(config: Path) -> None:
    """A missing config file is an error pointing at `init` and `-c`."""
    if not config.exists():
        where = f"in this folder ({Path.cwd()})" if config == DEFAULT_CONFIG else "found"
        fail(
            f"no config file {str(config)!r} {where}",
            "create a starter config with `meta-tools init`, or pass one with -c PATH",
        )


def load_config(config: Path) -> MetaToolsConfig:
    """The config at `config` (see `require_config`)."""
    require_config(config)
    return MetaToolsConfig.load(config)


def require_model(config: MetaToolsConfig, source: Path, *, serving: bool) -> None:
    """Fail with the ways out when `config` has no model that can run a category."""
    why = missing_model(config, serving=serving)
    if why is None:
        return
    hint = "add one of these to the config (or set the key), then run again"
    if config.model.provider == "sampling":
        hint = "`meta-tools serve` runs it; to run here, make the `model` section one of these"
    elif not serving:
        hint += "; `meta-tools serve` needs none of them when its host supports sampling"
    fail(f"{source}: cannot run a category: {why}", hint, problems=ways_out(config))


LOG_LEVELS = ("debug", "info", "warning", "error")
GUARD_LOGGER = "meta_tools.guards"


def level_of(options: GlobalOptions, default: int) -> int:
    """The log level chosen by `--log-level` / `--debug`, else `default`."""
    if options.log_level is not None:
        return int(getattr(logging, options.log_level.upper()))
    return logging.DEBUG if options.debug else default


class _StderrHandler(logging.Handler):
    """Writes to whatever `sys.stderr` is at the time (test runners swap it), printable only.

    Records quote what servers and tools said (an MCP server's stderr at debug level).
    """

    def emit(self, record: logging.LogRecord) -> None:
        try:
            sys.stderr.write(printable(self.format(record)) + "\n")
        except (OSError, ValueError):
            self.handleError(record)


def log_to_stderr(level: int) -> None:
    """The command's log: meta-tools messages (reloads, MCP servers) on stderr, from `level`."""
    package = logging.getLogger("meta_tools")
    if not any(isinstance(h, _StderrHandler) for h in package.handlers):
        handler = _StderrHandler()
        handler.setFormatter(logging.Formatter("%(asctime)s %(levelname)s %(message)s", "%H:%M:%S"))
        package.addHandler(handler)
        package.propagate = False
    package.setLevel(level)
    # A model that writes its calls as text under a profile that does not read them gets
    # its raw JSON as the answer: every command that talks to a model says so, once.
    logging.getLogger(GUARD_LOGGER).setLevel(min(level, logging.WARNING))


def describe_model(meta: MetaManager) -> str:
    """What an open router built from a config runs its categories on, for banners: `the
    OpenAI-compatible model 'x' (as its server reports) at URL (timeout 300 s, for a model
    on this machine)`."""
    model, config = meta.model, meta.config
    if isinstance(model, SamplingChatModel) or config is None:
        return "the MCP host's own model (sampling)"
    spec = with_environment(config.model)
    kind = "DashScope model" if spec.provider == "dashscope" else "OpenAI-compatible model"
    name = model_name(model) or spec.name
    reported = " (as its server reports)" if meta.served_model is not None else ""
    where = f" at {spec.base_url}" if spec.base_url else ""
    timeout = f"timeout {spec.timeout_s:g} s{timeout_reason(config.model)}"
    return f"the {kind} {name!r}{reported}{where} ({timeout})"


def describe_guards(meta: MetaManager) -> str:
    """`Guard profile 'small' (qwen2.5-coder-1.5b: 1.5B parameters).`: for banners."""
    line = meta.profile_choice.line()
    return f"{line[0].upper()}{line[1:]}."
