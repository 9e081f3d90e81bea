"""`meta-tools group`: propose categories for the config's tools, printed as a config to edit."""

from __future__ import annotations

import json
import os
from contextlib import AsyncExitStack
from pathlib import Path
from typing import Annotated, Any, Literal

import anyio
import typer
from rich.console import Console

from ..config import SECTIONS, CategoryConfig, MetaToolsConfig, read_json
from ..exceptions import ConfigError, ModelError
from ..grouping.check import CategoryView, check_grouping
from ..grouping.model_names import name_with_model
from ..grouping.name import Draft
from ..grouping.plan import config_with, draft_categories
from ..llm.base import ChatModel
from ..router.catalog import ToolSources
from ..router.from_config import model_from_config
from ..tools.base import BaseTool
from ..tools.mcp.tool import McpServerTool
from ..tools.wrapper import unwrap
from .common import (
    DEFAULT_CONFIG,
    ConfigArgument,
    ConfigOption,
    ToolsOption,
    app,
    fail,
    load_tools,
    one_config,
    report_errors,
    stderr_console,
)
from .files import taken, write_file
from .terminal import printable_json, shown

__all__ = ["group"]

_ALL = "(every tool)"


@app.command()
def group(
    ctx: typer.Context,
    file: ConfigArgument = None,
    config: ConfigOption = DEFAULT_CONFIG,
    by: Annotated[
        str,
        typer.Option(
            "--by",
            help="topic (what the tools do) or server (one per source).",
            metavar="[topic|server]",
        ),
    ] = "topic",
    categories: Annotated[
        int | None,
        typer.Option(
            "--categories",
            "-k",
            min=1,
            help="How many categories (default: about √tools).",
            metavar="N",
        ),
    ] = None,
    max_size: Annotated[
        int | None,
        typer.Option(
            "--max-size",
            min=1,
            help="No category above this many tools (default: 1.5 × mean).",
            metavar="N",
        ),
    ] = None,
    write: Annotated[
        Path | None,
        typer.Option(
            "--write", "-w", help="Write the config here instead of printing it.", metavar="FILE"
        ),
    ] = None,
    force: Annotated[
        bool,
        typer.Option(
            "--force",
            help="Overwrite the --write file (a symbolic link is replaced, not followed).",
        ),
    ] = False,
    use_model: Annotated[
        bool | None,
        typer.Option(
            "--model/--no-model",
            help="Names by the config's model (default: when the file has a `model` section"
            " and its key is set) or from the tools' own words.",
            show_default=False,
        ),
    ] = None,
    tools: ToolsOption = None,
) -> None:
    """Propose categories for the config's tools (MCP servers, Python tools, built-ins)."""
    config = one_config(file, config)
    err = stderr_console()
    with report_errors(ctx):
        if by not in ("topic", "server"):
            fail(f"--by must be 'topic' or 'server', not {by!r}")
        there = taken(write) if write is not None else None
        if there is not None and not (force and there.replaceable):  # before any work
            hint = f"{there.hint}, or choose another file" if there.replaceable else there.hint
            fail(there.describe(quoted=False), hint)
        sections, loaded = _read(config)
        # Small matrices: BLAS threads only contend with each other on a busy machine.
        os.environ.setdefault("OPENBLAS_NUM_THREADS", "1")
        found, sources = anyio.run(lambda: _collect(loaded, load_tools(tools)))
        mode: Literal["topic", "server"] = "topic" if by == "topic" else "server"
        drafts = draft_categories(found, sources, by=mode, k=categories, max_size=max_size)
        model, notes = _model(loaded, sections, use_model)
        if model is not None and mode == "topic":
            by_name = {t.name: t for t in found}
            drafts, more = anyio.run(lambda: name_with_model(model, drafts, by_name))
            notes += more
        proposal = config_with(drafts, sections)
        text = json.dumps(proposal, indent=2, ensure_ascii=False) + "\n"
        if write is None:
            typer.echo(printable_json(text), nl=False)
        else:
            write_file(write, text, force=force)
        for note in notes:
            err.print(f"[yellow]note:[/] {shown(note)}", soft_wrap=True)
        _summarise(err, drafts, found, loaded, write, named_by_model=model is not None)


def _read(path: Path) -> tuple[dict[str, Any], MetaToolsConfig]:
    """The file's sections as written (`${VAR}` kept), and the config with one catch-all category.

    The file's own categories, if any, are replaced by the proposal, so they are not checked.
    """
    raw = read_json(path, sections=SECTIONS)
    if not isinstance(raw, dict):
        raise ConfigError(
            str(path), [f"$: the top level must be a JSON object, got {type(raw).__name__}"]
        )
    sections = {k: v for k, v in raw.items() if k in SECTIONS or k == "$schema"}
    data = {**sections, "categories": {_ALL: {"description": "every tool", "tools": ["*"]}}}
    loaded = MetaToolsConfig.from_data(data, source=str(path), base_dir=str(path.parent))
    return sections, loaded


async def _collect(
    config: MetaToolsConfig, python: list[BaseTool]
) -> tuple[list[BaseTool], list[str]]:
    """Every tool the config's sources provide now, and each tool's MCP server ("" if none).

    Raises:
        ConfigError: a server that did not start, two tools with one name, or no tool at all.
    """
    servers = {n: s.model_copy(update={"connect": "start"}) for n, s in config.mcp_servers.items()}
    every = {_ALL: CategoryConfig(description="every tool", tools=["*"])}
    config = config.model_copy(update={"mcp_servers": servers, "categories": every})
    async with AsyncExitStack() as stack:
        sources = ToolSources.from_config(config, tools=python, servers=(), stack=stack)
        await sources.open()
        if failures := sources.failures():
            raise ConfigError(
                config.source, [f"{f}; its tools cannot be grouped" for f in failures]
            )
        try:
            chosen, _warnings = sources.resolve(config)
        except ConfigError as exc:
            problems = [p for p in exc.problems if "matches no tool" not in p]
            raise ConfigError(
                config.source,
                problems
                or [
                    "no source provides any tool to group: add MCP servers under"
                    ' "mcp_servers", enable "builtins" or pass --tools'
                ],
            ) from None
        tools = chosen[_ALL]
        names = [_server_of(t) for t in tools]
        sources.begin_close()
    return tools, names


def _server_of(tool: BaseTool) -> str:
    inner = unwrap(tool)  # a result cache may wrap the server's tool
    return inner.source.name if isinstance(inner, McpServerTool) else ""


def _model(
    config: MetaToolsConfig, sections: dict[str, Any], wanted: bool | None
) -> tuple[ChatModel | None, list[str]]:
    """The model that names the categories, if any, and a note when an automatic choice failed."""
    if wanted is False or (wanted is None and "model" not in sections):
        return None, []
    try:
        return model_from_config(config.model), []
    except (ModelError, ConfigError) as exc:
        if wanted:
            raise
        reason = exc.problems[0] if isinstance(exc, ConfigError) else str(exc)
        return None, [f"names come from the tools' words: no model ({reason})"]


def _summarise(
    err: Console,
    drafts: list[Draft],
    tools: list[BaseTool],
    config: MetaToolsConfig,
    write: Path | None,
    *,
    named_by_model: bool,
) -> None:
    sizes = sorted((len(d.tools) for d in drafts), reverse=True)
    limit = config.defaults.max_tools_per_prompt
    by_name = {t.name: t for t in tools}
    views = [
        CategoryView(d.name, d.description, [by_name[n] for n in d.tools], limit) for d in drafts
    ]
    for finding in check_grouping(views):
        err.print(f"[yellow]warning:[/] {shown(finding)}", soft_wrap=True)
    where = f"written to {write}" if write else "printed above"
    names = "by the model" if named_by_model else "from the tools' own words"
    err.print(
        f"{len(drafts)} categories over {len(tools)} tools (largest {sizes[0] if sizes else 0},"
        f" smallest {sizes[-1] if sizes else 0}), named {names}; {where}."
        " Edit names and descriptions, then `meta-tools validate`.",
        soft_wrap=True,
    )
