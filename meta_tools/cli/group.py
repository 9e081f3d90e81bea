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

from ..config import SECTIONS, CategoryConfig, MetaToolsConfig, categories_as_written, read_json
from ..exceptions import ConfigError, ModelError
from ..grouping.check import CategoryView, check_grouping
from ..grouping.model_names import name_with_model
from ..grouping.name import Draft
from ..grouping.plan import closer_to_kept, config_with, draft_categories, named_apart
from ..llm.base import ChatModel
from ..router.catalog import ToolSources
from ..router.from_config import model_from_config
from ..router.resolve import resolve_tools
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
    only_ungrouped: Annotated[
        bool,
        typer.Option(
            "--only-ungrouped",
            help="Keep the config's categories as written and group only the tools in none"
            " of them.",
        ),
    ] = False,
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
        sections, kept, nested, loaded = _read(config, keep=only_ungrouped)
        # Small matrices: BLAS threads only contend with each other on a busy machine.
        os.environ.setdefault("OPENBLAS_NUM_THREADS", "1")
        found, sources = anyio.run(lambda: _collect(loaded, load_tools(tools)))
        placed = _placed(err, loaded, found) if kept else {}
        rest = _in_none(found, sources, placed)
        if only_ungrouped and not rest:
            _emit(_laid_out(sections, kept, nested=nested), write, force=force)
            err.print(
                f"every tool is in one of your {_count(len(kept), 'category')}, so nothing was"
                f" grouped; the config is {_where(write)} unchanged.",
                soft_wrap=True,
            )
            return
        mode: Literal["topic", "server"] = "topic" if by == "topic" else "server"
        drafts = draft_categories(
            [t for t, _ in rest],
            [s for _, s in rest],
            by=mode,
            k=categories,
            max_size=max_size,
            taken=kept,
        )
        model, notes = _model(loaded, sections, use_model)
        if model is not None and mode == "topic":
            by_name = {t.name: t for t in found}
            drafts, more = anyio.run(lambda: name_with_model(model, drafts, by_name))
            drafts = named_apart(drafts, taken=kept)  # the model knows nothing of yours
            notes += more
        proposal = {**kept, **config_with(drafts, {})}
        _emit(_laid_out(sections, proposal, nested=nested), write, force=force)
        notes += [_reads_like(t, c) for t, c in closer_to_kept(drafts, placed, found)]
        for note in notes:
            err.print(f"[yellow]note:[/] {shown(note)}", soft_wrap=True)
        views = (_kept_views(loaded, placed) if kept else []) + _draft_views(drafts, found, loaded)
        for finding in check_grouping(views):
            err.print(f"[yellow]warning:[/] {shown(finding)}", soft_wrap=True)
        err.print(
            _summary(
                drafts,
                len(rest),
                len(kept) if only_ungrouped else None,
                write,
                named_by_model=model is not None,
            ),
            soft_wrap=True,
        )


def _read(
    path: Path, *, keep: bool
) -> tuple[dict[str, Any], dict[str, Any], bool, MetaToolsConfig]:
    """The file's sections and, with `keep`, its categories, both as written (`${VAR}` kept),
    whether it holds them under `"categories"`, and the config.

    Without `keep` the file's own categories are replaced by the proposal, so they are
    neither returned nor checked (the config has one catch-all category instead).
    """
    raw = read_json(path, sections=SECTIONS)
    if not isinstance(raw, dict):
        raise ConfigError(
            str(path), [f"$: the top level must be a JSON object, got {type(raw).__name__}"]
        )
    written, nested = categories_as_written(raw)
    inside = {"categories"} if nested else set(written)
    sections = {k: v for k, v in raw.items() if k not in inside}
    kept = written if keep else {}
    data = (
        raw
        if kept
        else {**sections, "categories": {_ALL: {"description": "every tool", "tools": ["*"]}}}
    )
    loaded = MetaToolsConfig.from_data(data, source=str(path), base_dir=str(path.parent))
    return sections, kept, keep and nested, loaded


def _laid_out(
    sections: dict[str, Any], categories: dict[str, Any], *, nested: bool
) -> dict[str, Any]:
    """The config file: its sections, then the categories where the file had them."""
    return {**sections, "categories": categories} if nested else {**sections, **categories}


def _placed(
    err: Console, config: MetaToolsConfig, found: list[BaseTool]
) -> dict[str, list[BaseTool]]:
    """The tools each of the config's categories holds, resolved as the router resolves them.

    A name or pattern that matches no tool is a warning, not an error: the category is
    kept as written all the same.
    """
    available = {t.name: t for t in found}
    placed, warnings = resolve_tools(config, available, strict=False)
    for problem in warnings:
        if problem.startswith("$."):  # not the lines on tools in no category: those are grouped
            err.print(
                f"[yellow]warning:[/] {shown(problem)} (the category is kept as written)",
                soft_wrap=True,
            )
    return placed


def _in_none(
    found: list[BaseTool], sources: list[str], placed: dict[str, list[BaseTool]]
) -> list[tuple[BaseTool, str]]:
    """The tools no category holds, each with its MCP server ("" if none), in their order."""
    grouped = {t.name for members in placed.values() for t in members}
    return [(t, s) for t, s in zip(found, sources, strict=True) if t.name not in grouped]


def _emit(config: dict[str, Any], write: Path | None, *, force: bool) -> None:
    """Print the config as JSON, or write it to `write`."""
    text = json.dumps(config, indent=2, ensure_ascii=False) + "\n"
    if write is None:
        typer.echo(printable_json(text), nl=False)
    else:
        write_file(write, text, force=force)


def _reads_like(tool: str, category: str) -> str:
    return (
        f"{tool!r} reads like your category {category!r}; to put it there, add"
        f' {json.dumps(tool, ensure_ascii=False)} to its "tools"'
    )


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


def _kept_views(config: MetaToolsConfig, placed: dict[str, list[BaseTool]]) -> list[CategoryView]:
    """The config's own categories as the grouping check sees them."""
    limit = config.defaults.max_tools_per_prompt
    return [
        CategoryView(
            name, spec.description, placed.get(name, []), spec.max_tools_per_prompt or limit
        )
        for name, spec in config.categories.items()
    ]


def _draft_views(
    drafts: list[Draft], tools: list[BaseTool], config: MetaToolsConfig
) -> list[CategoryView]:
    limit = config.defaults.max_tools_per_prompt
    by_name = {t.name: t for t in tools}
    return [
        CategoryView(d.name, d.description, [by_name[n] for n in d.tools], limit) for d in drafts
    ]


def _summary(
    drafts: list[Draft],
    tools: int,
    kept: int | None,
    write: Path | None,
    *,
    named_by_model: bool,
) -> str:
    """The last line: how many categories over how many tools, and where the config went.

    `kept`: how many of the file's categories were kept (None: they were not).
    """
    sizes = sorted((len(d.tools) for d in drafts), reverse=True)
    spread = f"(largest {sizes[0] if sizes else 0}, smallest {sizes[-1] if sizes else 0})"
    names = "by the model" if named_by_model else "from the tools' own words"
    if kept is None:
        head = f"{len(drafts)} categories over {tools} tools {spread}, named {names}"
    else:
        new = _count(len(drafts), "new category")
        yours = (
            f"your {_count(kept, 'category')} kept as written"
            if kept
            else "no category of yours to keep"
        )
        head = f"{new} over {_count(tools, 'tool')} in no category {spread}, named {names}; {yours}"
    return f"{head}; {_where(write)}. Edit names and descriptions, then `meta-tools validate`."


def _where(write: Path | None) -> str:
    return f"written to {write}" if write else "printed above"


def _count(n: int, noun: str) -> str:
    """`1 category`, `2 categories`, `3 tools`."""
    if n == 1:
        return f"1 {noun}"
    return f"{n} {noun[:-1]}ies" if noun.endswith("y") else f"{n} {noun}s"
