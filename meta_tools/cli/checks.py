"""What `meta-tools validate`, `list` and `schema` compute: config checks and context sizes."""

from __future__ import annotations

import fnmatch
import inspect
import json
import os
import re
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from ..category.prompts import PHASES, PromptSet
from ..config import MetaToolsConfig
from ..exceptions import ConfigError, MetaToolsError, ModelError
from ..grouping.check import CategoryView, Finding, check_grouping
from ..guards import GUARDS
from ..llm.types import AssistantTurn, ChatRequest
from ..router.from_config import builtin_tools, missing_model
from ..router.manager import MetaManager, category_not_found
from ..router.ways_out import has_model_section
from ..support.suggest import did_you_mean
from ..support.text import slugify
from ..tools.base import BaseTool
from ..tools.function import FunctionTool
from ..tools.mcp.connection import McpToolSource
from ..tools.mcp.tool import PendingTool
from ..tools.python_modules import collect_tools, import_tools
from ..tools.wrapper import unwrap
from .salvage import salvage
from .tokens import TokenCounter, load_counter

__all__ = [
    "ConfigReport",
    "NoModel",
    "PatternMiss",
    "check_category",
    "check_config",
    "editor_schema",
    "grouping_findings",
    "is_pattern",
    "measure",
    "pattern_misses",
    "tool_warnings",
]


class NoModel:
    """The model of commands that never run a category loop: no API key needed."""

    async def complete(self, request: ChatRequest) -> AssistantTurn:
        raise ModelError("this router was built to inspect the config; it runs no category loop")


@dataclass
class ConfigReport:
    """Every problem (the config is unusable) and warning (it works, but look) of a config."""

    problems: list[str] = field(default_factory=list)
    warnings: list[str] = field(default_factory=list)
    summary: str = ""


async def check_config(
    path: str | os.PathLike[str], tools: Sequence[BaseTool] = (), *, offline: bool = False
) -> ConfigReport:
    """Check the file, its templates, its model's key and (unless `offline`) its tool names.

    Tool names are checked against the Python `tools` and the tools the config's
    MCP servers list, which means starting those servers.
    """
    report = ConfigReport()
    try:
        config = MetaToolsConfig.load(path)
    except ConfigError as exc:
        report.problems.extend(exc.problems)
        salvaged = salvage(path)  # check the rest too: every problem in one pass
        if salvaged is None:
            return report
        config = salvaged
    try:
        PromptSet.load(config.prompts_path())
    except ConfigError as exc:
        report.problems.extend(exc.problems)
    report.warnings.extend(_model_warnings(config))
    report.warnings.extend(unknown_templates(config.prompts_path()))
    if offline and config.mcp_servers:
        await _check_offline(config, tools, report)
        return report
    # Connect every server now (not on first use), so that every tool name is checked.
    servers = {n: s.model_copy(update={"connect": "start"}) for n, s in config.mcp_servers.items()}
    config = config.model_copy(update={"mcp_servers": servers})
    try:
        meta = MetaManager.from_config(config, tools=tools, model=NoModel())
        async with meta:
            report.problems.extend(_unreachable(meta))
            report.problems.extend(_down_servers(meta, report.problems))
            report.problems.extend(map(str, pattern_misses(meta)))
            # A server that is down is a problem above, not a warning too.
            down = {f"MCP server {s.name!r} {s.last_error}" for s in meta.sources}
            report.warnings.extend(w for w in meta.warnings if w not in down)
            report.warnings.extend(tool_warnings(meta))
            if not report.problems:  # the grouping is worth a look once the config works
                report.warnings.extend(map(str, grouping_findings(meta)))
            names = {t.name for m in meta.categories for t in m.tools.list_tools()}
            report.summary = (
                f"{_count(len(meta.categories), 'category', 'categories')},"
                f" {_count(len(names), 'tool', 'tools')}, all found"
            )
    except ConfigError as exc:
        report.problems.extend(exc.problems)
    except MetaToolsError as exc:
        report.problems.append(str(exc))
    report.problems = list(dict.fromkeys(report.problems))  # templates: twice
    return report


async def _check_offline(
    config: MetaToolsConfig, tools: Sequence[BaseTool], report: ConfigReport
) -> None:
    """Check the names no server is needed for: Python tools and built-ins.

    A name an MCP server could provide (its prefix, or any name for a server
    without one) is left to the servers, which are not started.
    """
    try:
        # Built, not entered: the Python tools are imported, no server is started.
        meta = MetaManager.from_config(config, tools=tools, model=NoModel())
    except ConfigError as exc:
        report.problems.extend(exc.problems)
        return
    except MetaToolsError as exc:
        report.problems.append(str(exc))
        return
    await meta.aclose()  # it opened nothing; closing says so
    report.warnings.extend(_close_to_python_tools(meta, config, tools))
    servers = ", ".join(repr(name) for name in config.mcp_servers)
    report.warnings.append(
        f"the tool names of MCP server{'s' if len(config.mcp_servers) != 1 else ''} {servers}"
        " were not checked: --offline does not start them"
    )
    count = _count(len(config.categories), "category", "categories")
    report.summary = f"{count}, Python tool names checked (MCP servers' not)"


def _close_to_python_tools(
    meta: MetaManager, config: MetaToolsConfig, tools: Sequence[BaseTool]
) -> list[str]:
    """Names left to a server without a prefix (it may provide any name) that look like typos
    of a Python tool's name: `convert_mas` for `convert_units`."""
    found = list(tools) + builtin_tools(config)
    for module in config.python_tools:
        found += import_tools(module, base_dir=config.base_dir)  # imported once already
    python = [t.name for t in collect_tools(found)]
    warnings = []
    for category, spec in config.categories.items():
        pending = {
            t.name
            for t in meta.get_category(category).tools.list_tools()
            if isinstance(unwrap(t), PendingTool)
        }
        for index, name in enumerate(spec.tools):
            if name in pending and (hint := did_you_mean(name, python)):
                warnings.append(
                    f'$."{category}".tools[{index}]: tool {name!r} is no Python tool; {hint}'
                    " (an MCP server without a prefix, not started under --offline, may"
                    " provide it)"
                )
    return warnings


def check_category(config: MetaToolsConfig, name: str) -> None:
    """Fail early on a category the config does not have, with close names.

    Raises:
        CategoryNotFoundError: `name` is neither a category's name nor its tool name.
    """
    known = {slugify(n): n for n in config.categories}
    if name in config.categories or slugify(name) in known:
        return
    raise category_not_found(name, known)


def unknown_templates(folder: Path | None) -> list[str]:
    """The `.j2` files of a prompts folder that no phase or guard reads: a misspelled
    name leaves the default template in force, silently (`tool_selction.j2`)."""
    known = {f"{phase}.j2" for phase in PHASES}
    guard_texts = {f"guards/{g.name}.j2" for g in GUARDS if g.text}
    try:
        if folder is None or not folder.is_dir():
            return []
        found = sorted(
            str(path.relative_to(folder).as_posix())
            for path in [*folder.glob("*.j2"), *folder.glob("guards/*.j2")]
        )
    except OSError:  # the folder cannot be read: loading the templates reported why
        return []
    return [
        f"{folder / name}: no template is named so, so the default is used"
        f"{'; ' + hint if (hint := did_you_mean(name, sorted(known | guard_texts))) else ''}"
        for name in found
        if name not in known | guard_texts
    ]


def _model_warnings(config: MetaToolsConfig) -> list[str]:
    """What `run` and `serve` will lack for a model (`list` and `validate` need none)."""
    why = missing_model(config, serving=False)
    if why is None:
        return []
    if config.model.provider == "sampling":
        return [f"$.model: {why}; `run` cannot use it"]
    if not has_model_section(config):
        return [
            f"{why}: `serve` will use the MCP host's model (sampling); `run` needs a key,"
            ' a local server ("base_url") or a ScriptedModel from Python'
        ]
    return [f"$.model: {why}; `run` and `serve` need it (`list` and `validate` do not)"]


def tool_warnings(meta: MetaManager) -> list[str]:
    """Tools described too poorly to be chosen well: one line per kind, naming the tools.

    A function without a docstring is described by its name alone ("Nodoc"); one that
    takes `**kwargs` offers the model no parameter for what it accepts.
    """
    tools = {t.name: unwrap(t) for m in meta.categories for t in m.tools.list_tools()}
    bare = [
        name
        for name, found in tools.items()
        if not isinstance(found, PendingTool) and _words(found.description) <= _words(name)
    ]
    loose = [
        name
        for name, found in tools.items()
        if isinstance(found, FunctionTool) and _takes_any(found.func)
    ]
    warnings = []
    if bare:
        warnings.append(
            f"{_count(len(bare), 'tool is', 'tools are')} described by {_it(bare)} name alone,"
            f" which hurts routing and tool choice: {_listed(bare)}; write a docstring (a"
            " Python tool) or a description"
        )
    if loose:
        warnings.append(
            f"{_count(len(loose), 'tool takes', 'tools take')} **kwargs or *args, which"
            f" {_it(loose)} schema cannot describe, so the model is offered no parameter for"
            f" them: {_listed(loose)}; name the parameters"
        )
    return warnings


def _words(text: str) -> set[str]:
    return set(re.findall(r"[a-z0-9]+", re.sub(r"([a-z])([A-Z])", r"\1 \2", text).lower()))


def _takes_any(func: Callable[..., Any]) -> bool:
    try:
        parameters = inspect.signature(func).parameters.values()
    except (TypeError, ValueError):
        return False
    return any(p.kind in (p.VAR_KEYWORD, p.VAR_POSITIONAL) for p in parameters)


def _it(names: list[str]) -> str:
    return "its" if len(names) == 1 else "their"


def _listed(names: list[str], limit: int = 10) -> str:
    shown = ", ".join(map(repr, names[:limit]))
    return shown + (f" and {len(names) - limit} more" if len(names) > limit else "")


def grouping_findings(meta: MetaManager) -> list[Finding]:
    """The grouping check on the router's categories (tools of servers not listed are skipped)."""
    views = []
    for manager in meta.categories:
        tools = [t for t in manager.tools.list_tools() if not isinstance(unwrap(t), PendingTool)]
        views.append(
            CategoryView(manager.name, manager.description, tools, manager.max_tools_per_prompt)
        )
    return check_grouping(views)


def _count(number: int, one: str, many: str) -> str:
    return f"{number} {one if number == 1 else many}"


def _unreachable(meta: MetaManager) -> list[str]:
    """One problem per MCP server that could not be started: its listed tools went unchecked."""
    unchecked: dict[str, tuple[str, list[str]]] = {}
    for manager in meta.categories:
        for found in manager.tools.list_tools():
            if isinstance(found, PendingTool):
                for source in found.sources:
                    why = getattr(source, "last_error", None) or found.reason or "is not connected"
                    unchecked.setdefault(source.name, (why, []))[1].append(found.name)
    return [
        f"$.mcp_servers.{name}: MCP server {name!r} {why}; tools not checked: {', '.join(names)}"
        for name, (why, names) in unchecked.items()
    ]


def _down_servers(meta: MetaManager, reported: list[str]) -> list[str]:
    """One problem per MCP server that could not be started and is not reported yet.

    A server that cannot start is always a problem, even when the categories name
    its tools only by patterns, which then match nothing and check nothing.
    """
    return [
        f"$.mcp_servers.{s.name}: MCP server {s.name!r} {s.last_error}"
        for s in meta.sources
        if s.status == "failed"
        and not any(p.startswith(f"$.mcp_servers.{s.name}: ") for p in reported)
    ]


@dataclass(frozen=True)
class PatternMiss:
    """A category's name pattern (`"fs_*"`) that matches none of its tools, and why."""

    category: str
    index: int
    pattern: str
    why: str

    def __str__(self) -> str:
        where = f'$."{self.category}".tools[{self.index}]'
        return f"{where}: pattern {self.pattern!r} matches no tool{self.why and ': ' + self.why}"


def pattern_misses(meta: MetaManager) -> list[PatternMiss]:
    """Every name pattern that matches none of its category's tools, with the servers to blame.

    A pattern that matches nothing adds nothing: its server is down (named), or the
    pattern is wrong (a router checks that once every server is listed).
    """
    config = meta.config
    if config is None:
        return []
    misses = []
    for category, spec in config.categories.items():
        names = [t.name for t in meta.get_category(category).tools.list_tools()]
        for index, pattern in enumerate(spec.tools):
            if not is_pattern(pattern) or any(fnmatch.fnmatchcase(n, pattern) for n in names):
                continue
            # The server's own line carries its error in full; this one says which server.
            why = " and ".join(
                f"MCP server {s.name!r} {(s.last_error or 'is not connected').split(':')[0]}"
                for s in meta.sources
                if _may_match(s, pattern)
            )
            misses.append(PatternMiss(category, index, pattern, why))
    return misses


def is_pattern(name: str) -> bool:
    """Whether a config's tool entry is a glob (`"fs_*"`) rather than a tool name."""
    return any(ch in name for ch in "*?[")


def _may_match(source: McpToolSource, pattern: str) -> bool:
    """Whether a server that is not listed now could provide tools matching `pattern`."""
    if source.listed and source.status != "failed":
        return False
    if source.prefix is None:
        return True
    fixed, own = re.split(r"[*?\[]", pattern, maxsplit=1)[0], f"{source.prefix}_"
    return own.startswith(fixed) or fixed.startswith(own)


def _size(schemas: list[dict[str, Any]], counter: TokenCounter) -> dict[str, Any]:
    text = json.dumps(schemas, ensure_ascii=False)
    return {"tools": len(schemas), "chars": len(text), "tokens": counter.count_tools(schemas)}


def measure(meta: MetaManager) -> dict[str, Any]:
    """Categories with their tools, and the size of the main agent's tool list versus all flat.

    Sizes are of the OpenAI function schemas as JSON: the category tools the
    main agent sees, and every level-1 tool of every category listed flat.
    Tokens are counted by the best offline tokenizer installed (`tokenizer` names it).
    """
    flat: dict[str, dict[str, Any]] = {}
    categories = []
    misses = pattern_misses(meta)
    for manager in meta.categories:
        tools = manager.tools.list_tools()
        categories.append(
            {
                "name": manager.slug,
                "display_name": manager.name,
                "description": manager.description,
                "tools": [t.name for t in tools],
                "unmatched": [
                    {"pattern": m.pattern, "why": m.why}
                    for m in misses
                    if m.category == manager.name
                ],
            }
        )
        for found in tools:
            flat.setdefault(found.name, found.openai_schema())
    counter = load_counter()
    return {
        "categories": categories,
        "main_agent": _size(meta.openai_tools(), counter),
        "flat": _size(list(flat.values()), counter),
        "tokenizer": counter.name,
        "warnings": [*meta.warnings, *tool_warnings(meta)],
    }


def editor_schema() -> dict[str, Any]:
    """The config file's JSON Schema, with the draft it follows."""
    schema = MetaToolsConfig.model_json_schema()
    return {"$schema": "https://json-schema.org/draft/2020-12/schema", **schema}
