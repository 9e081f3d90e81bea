"""Level 3: `MetaManager`, the few category tools the main agent sees, routed to their managers."""

from __future__ import annotations

import difflib
import fnmatch
import logging
import os
from collections.abc import Awaitable, Callable, Iterable, Mapping
from contextlib import AsyncExitStack
from types import TracebackType
from typing import Any

import anyio
from mcp.types import Tool as McpTool

from .cache import CachedTool, ResultCache, cache_from_config
from .category import CategoryManager, slugify
from .config import CacheConfig, MetaToolsConfig, json_path
from .events import EventSink
from .exceptions import (
    CategoryNotFoundError,
    ClosedError,
    ConfigError,
    ToolArgumentsError,
    ToolUnavailableError,
)
from .llm.base import ChatModel
from .prompts import PromptSet
from .redaction import Redactor
from .result import CategoryResult
from .tools.base import BaseTool
from .tools.builtins import builtin_tools
from .tools.mcp import McpToolSource
from .tools.mcp_tools import McpServerTool, PendingTool
from .tools.pack import ToolPack, as_tool
from .tools.schema import TOOL_NAME
from .tracing import Tracer, fan_out

__all__ = ["CATEGORY_SENTENCE", "MetaManager", "category_parameters", "resolve_tools"]

CATEGORY_SENTENCE = "It picks and runs the right tools itself."

logger = logging.getLogger("meta_tools.meta")


def category_parameters() -> dict[str, Any]:
    """The schema of every category tool: two required strings."""
    return {
        "type": "object",
        "properties": {
            "objective": {"type": "string", "description": "The goal, stated clearly."},
            "exact_input": {
                "type": "string",
                "description": "The complete, exact input to work on.",
            },
        },
        "required": ["objective", "exact_input"],
    }


def resolve_tools(
    config: MetaToolsConfig,
    available: Mapping[str, BaseTool],
    *,
    placeholder: Callable[[str], BaseTool | None] | None = None,
    strict: bool = True,
) -> tuple[dict[str, list[BaseTool]], list[str]]:
    """Map each category's tool names and globs to tools.

    Returns the tools per category and warnings (tools listed in no category).
    `placeholder(name)` may stand in for a listed name that is not available
    yet (an MCP server not listed so far); while it is given, a glob that
    matches nothing is not a problem. With `strict=False` problems become
    warnings and the names are left out.

    Raises:
        ConfigError: (strict) a listed name or glob that no source provides, with close names.
    """
    problems: list[str] = []
    standing_in: dict[str, BaseTool] = {}
    chosen: dict[str, list[BaseTool]] = {}
    used: set[str] = set()
    for category, spec in config.categories.items():
        names: list[str] = []
        for index, pattern in enumerate(spec.tools):
            where = f'$."{category}".tools[{index}]'
            if any(ch in pattern for ch in "*?["):
                matched = [n for n in available if fnmatch.fnmatchcase(n, pattern)]
                if not matched and placeholder is None:
                    problems.append(f"{where}: pattern {pattern!r} matches no tool")
                names.extend(n for n in matched if n not in names)
            elif pattern in available or pattern in standing_in:
                if pattern not in names:
                    names.append(pattern)
            elif placeholder is not None and (stand_in := placeholder(pattern)) is not None:
                standing_in[pattern] = stand_in
                names.append(pattern)
            else:
                close = difflib.get_close_matches(pattern, list(available), n=3, cutoff=0.6)
                hint = f"; did you mean {', '.join(map(repr, close))}?" if close else ""
                problems.append(
                    f"{where}: tool {pattern!r} is listed but no source provides it{hint}"
                )
        for index, pinned in enumerate(spec.pinned):
            if pinned not in names:
                problems.append(
                    f'$."{category}".pinned[{index}]: {pinned!r} is not one of this category\'s tools'
                )
        chosen[category] = [available[n] if n in available else standing_in[n] for n in names]
        used.update(names)
    if problems and strict:
        raise ConfigError(config.source, problems)
    warnings = [
        f"tool {name!r} is provided but listed in no category"
        for name in available
        if name not in used
    ]
    return chosen, problems + warnings


def _secrets(config: MetaToolsConfig) -> set[str]:
    """What must never be shown: `${VAR}` values and the model's API key."""
    names = {config.model.api_key_env, "OPENAI_API_KEY", "DASHSCOPE_API_KEY"}
    keys = {os.environ[name] for name in names if name and os.environ.get(name)}
    return set(config.secrets) | keys


class MetaManager:
    """Routes category-tool calls to their CategoryManagers; owns tool sources' lifecycles.

    Use `MetaManager([...managers])`, or `MetaManager.from_config(path, tools=..., model=...)`
    as an async context manager (it opens MCP sessions on entry and closes them on exit).
    """

    def __init__(
        self, managers: Iterable[CategoryManager], *, config: MetaToolsConfig | None = None
    ) -> None:
        self.config = config
        self.warnings: list[str] = []
        self._change_listeners: list[Callable[[], Awaitable[None]]] = []
        self._managers: dict[str, CategoryManager] = {}
        self._stack = AsyncExitStack()
        self._closed = False
        self.tracer: Tracer | None = None
        self._model: ChatModel | None = None
        self._model_given = False
        self._tools: list[BaseTool] = []
        self._caches: dict[tuple[str, CacheConfig], ResultCache] = {}
        self.redactor = Redactor()
        self._sources: list[McpToolSource] = []
        self._started = False
        self._install(managers)

    def _install(self, managers: Iterable[CategoryManager]) -> None:
        table: dict[str, CategoryManager] = {}
        for manager in managers:
            if manager.slug in table:
                raise ConfigError(
                    "categories",
                    [
                        f"categories {table[manager.slug].name!r} and {manager.name!r} have the same name {manager.slug!r}"
                    ],
                )
            table[manager.slug] = manager
        self._managers = table

    @classmethod
    def from_config(
        cls,
        config: MetaToolsConfig | str | os.PathLike[str],
        *,
        tools: Iterable[BaseTool | Callable[..., Any]] = (),
        model: ChatModel | None = None,
        sources: Iterable[McpToolSource] = (),
    ) -> MetaManager:
        """Build the router from a config file (or a loaded config).

        With `mcp_servers` in the config (or `sources=`, MCP sources built in code),
        enter the router with `async with` (or `await start()`): that opens the
        sessions, lists the servers' tools and checks the tool lists against them.

        Raises:
            ConfigError: every problem of the file, its templates and its tool lists.
        """
        loaded = config if isinstance(config, MetaToolsConfig) else MetaToolsConfig.load(config)
        prompts = PromptSet.load(loaded.prompts_path())
        model_given = model is not None
        meta = cls([], config=loaded)
        meta._sources = [
            McpToolSource.from_config(name, spec, base_dir=loaded.base_dir)
            for name, spec in loaded.mcp_servers.items()
        ] + list(sources)
        names = [source.name for source in meta._sources]
        twice = sorted({name for name in names if names.count(name) > 1})
        if twice:
            raise ConfigError(loaded.source, [f"two MCP sources are named {n!r}" for n in twice])
        if model is None:
            from .llm.factory import model_from_config

            model = model_from_config(loaded.model)
            closer = getattr(model, "aclose", None)
            if closer is not None:
                meta._stack.push_async_callback(closer)  # we built it, so we close it
        python_tools = [as_tool(t) for t in tools] + builtin_tools(loaded)
        meta._model_given = model_given
        meta._build(loaded, python_tools, model, prompts)
        return meta

    def _build(
        self, config: MetaToolsConfig, tools: list[BaseTool], model: ChatModel, prompts: PromptSet
    ) -> None:
        available: dict[str, BaseTool] = {}
        for found in tools:
            if found.name in available:
                raise ConfigError(
                    config.source, [f"two tools are named {found.name!r}; rename one"]
                )
            available[found.name] = self._with_server_cache(config, found)
        clashes = self._add_source_tools(config, available)
        if clashes:
            raise ConfigError(config.source, clashes)
        chosen, warnings = resolve_tools(config, available, placeholder=self._placeholder())
        defaults = config.defaults
        redactor = Redactor(_secrets(config))
        self._install(
            CategoryManager(
                name,
                spec.description,
                ToolPack(chosen[name], name=name),
                model,
                tool_usage_notes=spec.tool_usage_notes,
                max_iterations=spec.max_iterations or defaults.max_iterations,
                tool_timeout_s=spec.tool_timeout_s or defaults.tool_timeout_s,
                max_result_chars=defaults.max_result_chars,
                memory_size=defaults.category_memory,
                prompts=prompts,
                secrets=redactor.secrets,
                max_tools_per_prompt=spec.max_tools_per_prompt or defaults.max_tools_per_prompt,
                max_tool_chars_per_prompt=(
                    spec.max_tool_chars_per_prompt or defaults.max_tool_chars_per_prompt
                ),
                pinned=spec.pinned,
                abstain_below=(
                    spec.abstain_below if spec.abstain_below is not None else defaults.abstain_below
                ),
                cache=None if spec.cache is None else self._cache(spec.cache, f"category:{name}"),
            )
            for name, spec in config.categories.items()
        )
        self.redactor.detach()
        self.redactor = redactor
        redactor.attach()
        self.warnings = warnings
        self._tools, self._model = tools, model

    def _add_source_tools(
        self, config: MetaToolsConfig, available: dict[str, BaseTool]
    ) -> list[str]:
        """Add every MCP source's current tools; a name already taken is a problem (use `prefix`)."""
        problems: list[str] = []
        owners = {name: "a Python tool" for name in available}
        for source in self._sources:
            for found in source.tools():
                if found.name in available:
                    prefix = slugify(source.name)[:32]
                    problems.append(
                        f"{json_path(('mcp_servers', source.name))}: tool {found.name!r} is also"
                        f' provided by {owners[found.name]}; set "prefix" on one of the servers'
                        f' (e.g. "prefix": "{prefix}" names its tools {prefix}_<tool>)'
                    )
                    continue
                available[found.name] = self._with_server_cache(config, found)
                owners[found.name] = f"MCP server {source.name!r}"
        return problems

    def _placeholder(self) -> Callable[[str], BaseTool | None] | None:
        """Stand-ins for names that MCP sources not listed yet may provide (down, or first use)."""
        pending = [source for source in self._sources if not source.listed]
        if not pending:
            return None

        def stand_in(name: str) -> BaseTool | None:
            candidates = [s for s in pending if s.may_provide(name)]
            if not candidates or not TOOL_NAME.match(name):
                return None
            failed = any(s.status == "failed" for s in candidates)
            reason = "it failed to start" if failed else "it connects on first use"
            return PendingTool(name, candidates, reason)

        return stand_in

    def _retool(self, *, strict: bool) -> None:
        """Give every category the tools its config names, from the sources as they are now.

        Raises:
            ConfigError: (strict) a name clash, or a listed tool that no source provides.
        """
        config = self.config
        if config is None:
            return
        available = {t.name: self._with_server_cache(config, t) for t in self._tools}
        clashes = self._add_source_tools(config, available)
        if clashes and strict:
            raise ConfigError(config.source, clashes)
        chosen, warnings = resolve_tools(
            config, available, placeholder=self._placeholder(), strict=strict
        )
        for manager in self._managers.values():
            if manager.name in chosen:
                try:
                    manager.set_tools(ToolPack(chosen[manager.name], name=manager.name))
                except ConfigError:
                    if strict:
                        raise
                    logger.warning("category %r keeps its tools", manager.name, exc_info=True)
        failed = [
            f"MCP server {s.name!r} {s.last_error}" for s in self._sources if s.status == "failed"
        ]
        for problem in clashes if not strict else []:
            logger.warning("%s", problem)
        # A server's error may quote its stderr, which may quote a secret it was given.
        self.warnings = [self.redactor.text(w) for w in clashes + warnings + failed]

    def _on_source_change(self, source: McpToolSource) -> None:
        if not self._closed:
            logger.info("MCP server %r lists %d tools", source.name, len(source.tools()))
            self._retool(strict=False)

    async def _connect_quietly(self, source: McpToolSource) -> None:
        """Connect; a failure is logged (the source's calls will say why, and retry)."""
        try:
            await source.connect()
        except ToolUnavailableError as exc:
            logger.warning("%s", exc)

    def _cache(self, config: CacheConfig, scope: str) -> ResultCache:
        """One cache per (scope, settings), kept across reloads and closed with the manager."""
        key = (scope, config)
        found = self._caches.get(key)
        if found is None:
            found = self._caches[key] = cache_from_config(config, scope=scope)
            self._stack.push_async_callback(found.aclose)
        return found

    def _with_server_cache(self, config: MetaToolsConfig, tool: BaseTool) -> BaseTool:
        """Wrap a tool of an MCP server whose config has `cache` (category caches wrap the rest)."""
        if not isinstance(tool, McpServerTool):
            return tool
        server = config.mcp_servers.get(tool.source.name)
        if server is None or server.cache is None:
            return tool
        return CachedTool(tool, self._cache(server.cache, f"server:{tool.source.name}"))

    def on_categories_changed(self, listener: Callable[[], Awaitable[None]]) -> Callable[[], None]:
        """Await `listener()` after every reload that swapped the categories; returns an unsubscribe."""
        self._change_listeners.append(listener)
        return lambda: (
            self._change_listeners.remove(listener) if listener in self._change_listeners else None
        )

    async def reload(self, config: MetaToolsConfig) -> list[str]:
        """Swap in the categories of `config` without a restart; returns its warnings.

        The swap is one assignment: calls already running finish with the old
        CategoryManagers, new calls get the new ones. A category that keeps its
        name keeps its session memory. Tools come from the sources already open.

        Raises:
            ConfigError: every problem of `config`; the running categories stay as they were.
            ModelError: the new `model` section names a key that is not set.
        """
        if self._closed:
            raise ClosedError("this MetaManager is closed")
        current = self.config
        if current is not None:
            changed = [
                f"$.{section}: changed; restart the service to apply it"
                for section in ("mcp_servers", "builtins")
                if getattr(config, section) != getattr(current, section)
            ]
            if changed:
                raise ConfigError(config.source, changed)
        prompts = PromptSet.load(config.prompts_path())
        model = self._model
        if model is None or (
            not self._model_given and (current is None or config.model != current.model)
        ):
            from .llm.factory import model_from_config

            model = model_from_config(config.model)
            closer = getattr(model, "aclose", None)
            if closer is not None:
                # The old model may still serve calls in flight: both close with the router.
                self._stack.push_async_callback(closer)
        previous = {m.name: m for m in self._managers.values()}
        self._build(config, self._tools, model, prompts)
        for manager in self._managers.values():
            old = previous.get(manager.name)
            if old is not None:
                manager.adopt_memory(old)
        self.config = config
        for listener in list(self._change_listeners):
            await listener()
        return self.warnings

    # -- lifecycle -----------------------------------------------------------------------
    async def start(self) -> None:
        """Open tool sources (MCP sessions) and give the categories their tools; idempotent.

        Servers with `connect: "start"` are connected concurrently; one that fails is
        logged and retried when a category needs it, the others work meanwhile.
        Call `aclose()` from the same task (as `async with` does).

        Raises:
            ConfigError: two servers provide the same tool name (set `prefix`), or a
                category lists a tool that no server provides (everything is closed again).
        """
        if self._closed:
            raise ClosedError("this MetaManager is closed; build a new one")
        if self._started:
            return
        self._started = True
        if not self._sources:
            return
        try:
            for source in self._sources:
                await self._stack.enter_async_context(source)
            async with anyio.create_task_group() as group:
                for source in self._sources:
                    if source.connect_mode == "start":
                        group.start_soon(self._connect_quietly, source)
            self._retool(strict=True)
            for source in self._sources:
                source.subscribe(self._on_source_change)
        except BaseException:
            await self.aclose()
            raise

    async def aclose(self) -> None:
        """Close every tool source (ending MCP subprocesses); closing twice is harmless."""
        if not self._closed:
            self._closed = True
            self.redactor.detach()
            for source in self._sources:
                source.begin_close()  # all wind down at once; each is then left in order
            await self._stack.aclose()

    @property
    def sources(self) -> list[McpToolSource]:
        """The MCP servers this router uses (their status, tools and last error)."""
        return list(self._sources)

    async def __aenter__(self) -> MetaManager:
        await self.start()
        return self

    async def __aexit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        await self.aclose()

    # -- the main agent's view -----------------------------------------------------------
    @property
    def categories(self) -> list[CategoryManager]:
        return list(self._managers.values())

    def get_category(self, name: str) -> CategoryManager:
        """Find a category by its function name (slug) or its display name."""
        found = self._managers.get(name)
        if found is None:
            for manager in self._managers.values():
                if manager.name == name or manager.slug == name.strip().lower():
                    found = manager
                    break
        if found is None:
            listed = ", ".join(f"{m.slug!r} ({m.name})" for m in self._managers.values()) or "none"
            raise CategoryNotFoundError(f"unknown category {name!r}; the categories are: {listed}")
        return found

    def tool_description(self, manager: CategoryManager) -> str:
        return f"{manager.description.rstrip()} {CATEGORY_SENTENCE}"

    def openai_tools(self) -> list[dict[str, Any]]:
        """One OpenAI function per category."""
        return [
            {
                "type": "function",
                "function": {
                    "name": m.slug,
                    "description": self.tool_description(m),
                    "parameters": category_parameters(),
                },
            }
            for m in self._managers.values()
        ]

    def list_tools(self) -> list[McpTool]:
        """The category tools in MCP shape."""
        return [
            McpTool(
                name=m.slug,
                description=self.tool_description(m),
                input_schema=category_parameters(),
            )
            for m in self._managers.values()
        ]

    def check_call(self, name: str, arguments: Mapping[str, Any]) -> CategoryManager:
        """The category a call goes to, once its arguments are checked.

        Raises:
            CategoryNotFoundError: `name` is no category (the message lists them).
            ToolArgumentsError: `objective` or `exact_input` is missing or not a string.
        """
        manager = self.get_category(name)
        problems = [
            f"{key!r} is required and must be a string"
            for key in ("objective", "exact_input")
            if not isinstance(arguments.get(key), str)
        ]
        extra = sorted(set(arguments) - {"objective", "exact_input"})
        problems += [
            f"{key!r} is not a parameter (allowed: objective, exact_input)" for key in extra
        ]
        if problems:
            raise ToolArgumentsError(manager.slug, problems)
        return manager

    async def call_tool(
        self,
        name: str,
        arguments: Mapping[str, Any],
        *,
        session: str | None = None,
        on_event: EventSink | None = None,
        call_id: str | None = None,
    ) -> CategoryResult:
        """Run one category call (`call_id`: the main agent's id for it, shown in traces).

        Raises:
            CategoryNotFoundError: `name` is no category (the message lists them).
            ToolArgumentsError: `objective` or `exact_input` is missing or not a string.
        """
        if self._closed:
            raise ClosedError("this MetaManager is closed")
        manager = self.check_call(name, arguments)
        objective, exact_input = arguments["objective"], arguments["exact_input"]
        if self._sources:
            unavailable = await self._prepare(manager)
            if unavailable is not None:
                return unavailable
        if self.tracer is None:
            return await manager.run(objective, exact_input, session=session, on_event=on_event)
        async with self.tracer.main_call(manager.slug, call_id=call_id) as traced:
            return await manager.run(
                objective, exact_input, session=session, on_event=fan_out(traced, on_event)
            )

    async def _prepare(self, manager: CategoryManager) -> CategoryResult | None:
        """Connect the MCP servers this category waits for; a failed result if none can run.

        A server waits when it connects on first use, or failed and its backoff is over.
        """
        if not self._started:
            raise ClosedError(
                "this MetaManager uses MCP servers: enter it first"
                " (`async with MetaManager.from_config(...) as meta:` or `await meta.start()`)"
            )
        pending: dict[str, McpToolSource] = {}
        for found in manager.tools.list_tools():
            inner = getattr(found, "inner", found)
            if isinstance(inner, PendingTool):
                pending.update((s.name, s) for s in inner.sources if isinstance(s, McpToolSource))
        if not pending:
            return None
        async with anyio.create_task_group() as group:
            for source in pending.values():
                group.start_soon(self._connect_quietly, source)
        tools = [getattr(t, "inner", t) for t in manager.tools.list_tools()]
        if not tools or not all(isinstance(t, PendingTool) for t in tools):
            return None
        reasons = [
            f"MCP server {s.name!r} is unavailable: {s.last_error or 'not connected'}"
            for s in pending.values()
        ]
        return CategoryResult(
            category=manager.name,
            status="failed",
            summary=self.redactor.text(
                f"No tool of this category can run now. {' '.join(reasons)}"
            ),
        )
