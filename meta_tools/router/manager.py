"""Level 3: `MetaManager`, the few category tools the main agent sees, routed to their managers."""

from __future__ import annotations

import logging
import os
from collections.abc import Awaitable, Callable, Iterable, Mapping, Sequence
from contextlib import AsyncExitStack
from typing import Any

from mcp.types import Tool as McpTool
from typing_extensions import Self

from .._lifecycle import AsyncCloseable
from .._redaction import Redactor
from ..category.events import EventSink
from ..category.manager import CategoryManager
from ..category.prompts import PromptSet
from ..category.result import CategoryResult
from ..config import MetaToolsConfig
from ..exceptions import CategoryNotFoundError, ClosedError, ConfigError, ToolArgumentsError
from ..llm.base import ChatModel
from ..llm.factory import model_from_config
from ..llm.owned import OwnedModels, close_model
from ..tools.base import BaseTool
from ..tools.mcp.source import McpToolSource
from ..tools.pack import ToolPack
from ..tracing import Tracer, fan_out
from .assembly import ToolSources, category_from_config, config_secrets, resolve_tools

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


class MetaManager(AsyncCloseable):
    """Routes category-tool calls to their CategoryManagers; owns tool sources' lifecycles.

    Use `MetaManager([...managers])`, or `MetaManager.from_config(path, tools=..., model=...)`
    as an async context manager (it opens MCP sessions on entry and closes them on exit).
    """

    def __init__(
        self, managers: Iterable[CategoryManager], *, config: MetaToolsConfig | None = None
    ) -> None:
        self.config = config
        self.warnings: list[str] = []
        self.tracer: Tracer | None = None
        self.redactor = Redactor()
        self._change_listeners: list[Callable[[], Awaitable[None]]] = []
        self._managers: dict[str, CategoryManager] = {}
        self._stack = AsyncExitStack()
        self._tool_sources = ToolSources(stack=self._stack)
        self._model: ChatModel | None = None  # the model of the categories built from config
        self._owned = OwnedModels()  # `_model` when we built it, and those it replaced
        self._stack.push_async_callback(self._owned.aclose)  # first in: closed last
        self._closed = False
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
        A model built from the config's `model` section is closed with the router.

        Raises:
            ConfigError: every problem of the file, its templates and its tool lists.
        """
        loaded = config if isinstance(config, MetaToolsConfig) else MetaToolsConfig.load(config)
        prompts = PromptSet.load(loaded.prompts_path())
        meta = cls([], config=loaded)
        meta._tool_sources = ToolSources.from_config(
            loaded, tools=tools, servers=sources, stack=meta._stack
        )
        if model is None:
            model = meta._owned.current = model_from_config(loaded.model)
        meta._build(loaded, model, prompts)
        return meta

    def _build(self, config: MetaToolsConfig, model: ChatModel, prompts: PromptSet) -> None:
        """Build and install the categories of `config`; the old ones stay if it raises."""
        chosen, warnings = self._tool_sources.resolve(config)
        redactor = Redactor(config_secrets(config))
        self._install(
            category_from_config(
                name,
                config,
                chosen[name],
                model,
                prompts=prompts,
                redactor=redactor,
                cache=(
                    None
                    if spec.cache is None
                    else self._tool_sources.cache(spec.cache, f"category:{name}")
                ),
            )
            for name, spec in config.categories.items()
        )
        self.redactor.detach()
        self.redactor = redactor
        redactor.attach()
        self.warnings = warnings
        self._model = model

    def _retool(self, *, strict: bool) -> None:
        """Give every category the tools its config names, from the sources as they are now.

        Raises:
            ConfigError: (strict) a name clash, or a listed tool that no source provides.
        """
        config = self.config
        if config is None:
            return
        chosen, warnings = self._tool_sources.resolve(config, strict=strict)
        for manager in self._managers.values():
            # A category whose tools are the same objects keeps its pack and shortlist index.
            if manager.name in chosen and not _same_tools(
                manager.tools.list_tools(), chosen[manager.name]
            ):
                try:
                    manager.set_tools(ToolPack(chosen[manager.name], name=manager.name))
                except ConfigError:
                    if strict:
                        raise
                    logger.warning("category %r keeps its tools", manager.name, exc_info=True)
        # A server's error may quote its stderr, which may quote a secret it was given.
        failed = self._tool_sources.failures()
        self.warnings = [self.redactor.text(w) for w in warnings + failed]

    def _on_source_change(self, source: McpToolSource) -> None:
        if not self._closed:
            logger.info("MCP server %r lists %d tools", source.name, len(source.tools()))
            self._retool(strict=False)

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
        A model built from the old `model` section is closed once no call uses it.

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
        model, built = self._model, None
        # A model passed in code stays; one built from the config follows its `model` section.
        if model is None or (
            model is self._owned.current and (current is None or config.model != current.model)
        ):
            model = built = model_from_config(config.model)
        previous = {m.name: m for m in self._managers.values()}
        try:
            self._build(config, model, prompts)
        except BaseException:
            if built is not None:
                await close_model(built)
            raise
        if built is not None:
            await self._owned.replace(built)
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
        if not self._tool_sources.servers:
            return
        try:
            await self._tool_sources.open()
            self._retool(strict=True)
            for source in self._tool_sources.servers:
                source.subscribe(self._on_source_change)
        except BaseException:
            await self.aclose()
            raise

    async def aclose(self) -> None:
        """Close every tool source (ending MCP subprocesses); closing twice is harmless."""
        if not self._closed:
            self._closed = True
            self.redactor.detach()
            self._tool_sources.begin_close()  # all wind down at once; each is then left in order
            await self._stack.aclose()

    @property
    def sources(self) -> list[McpToolSource]:
        """The MCP servers this router uses (their status, tools and last error)."""
        return list(self._tool_sources.servers)

    async def __aenter__(self) -> Self:
        await self.start()
        return self

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
        # Counted before any await, so that a reload in between cannot close the model.
        async with self._owned.using(manager.model):
            if self._tool_sources.servers:
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
        reasons = await self._tool_sources.connect_waiting(manager)
        if reasons is None:
            return None
        return CategoryResult(
            category=manager.name,
            status="failed",
            summary=self.redactor.text(
                f"No tool of this category can run now. {' '.join(reasons)}"
            ),
        )


def _same_tools(current: Sequence[BaseTool], new: Sequence[BaseTool]) -> bool:
    """Whether `new` are the very tools of `current`, looking through the caches around them.

    A cache wrapper is made afresh on every resolution, the tool inside it is not;
    a server that listed again gives new tool objects, and so does a stand-in.
    """
    return len(current) == len(new) and all(
        getattr(a, "inner", a) is getattr(b, "inner", b) for a, b in zip(current, new, strict=True)
    )
