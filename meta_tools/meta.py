"""Level 3: `MetaManager`, the few category tools the main agent sees, routed to their managers."""

from __future__ import annotations

import difflib
import fnmatch
import os
from collections.abc import Callable, Iterable, Mapping
from contextlib import AsyncExitStack
from types import TracebackType
from typing import Any

from mcp.types import Tool as McpTool

from .category import CategoryManager
from .config import MetaToolsConfig
from .events import EventSink
from .exceptions import CategoryNotFoundError, ClosedError, ConfigError, ToolArgumentsError
from .llm.base import ChatModel
from .prompts import PromptSet
from .result import CategoryResult
from .tools.base import BaseTool
from .tools.pack import ToolPack, as_tool
from .tracing import Tracer, fan_out

__all__ = ["CATEGORY_SENTENCE", "MetaManager", "category_parameters", "resolve_tools"]

CATEGORY_SENTENCE = "It picks and runs the right tools itself."


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
    config: MetaToolsConfig, available: Mapping[str, BaseTool]
) -> tuple[dict[str, list[BaseTool]], list[str]]:
    """Map each category's tool names and globs to tools.

    Returns the tools per category and warnings (tools listed in no category).

    Raises:
        ConfigError: a listed name or glob that no source provides, with close names.
    """
    problems: list[str] = []
    chosen: dict[str, list[BaseTool]] = {}
    used: set[str] = set()
    for category, spec in config.categories.items():
        names: list[str] = []
        for index, pattern in enumerate(spec.tools):
            where = f'$."{category}".tools[{index}]'
            if any(ch in pattern for ch in "*?["):
                matched = [n for n in available if fnmatch.fnmatchcase(n, pattern)]
                if not matched:
                    problems.append(f"{where}: pattern {pattern!r} matches no tool")
                names.extend(n for n in matched if n not in names)
            elif pattern in available:
                if pattern not in names:
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
        chosen[category] = [available[n] for n in names]
        used.update(names)
    if problems:
        raise ConfigError(config.source, problems)
    warnings = [
        f"tool {name!r} is provided but listed in no category"
        for name in available
        if name not in used
    ]
    return chosen, warnings


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
        self._managers: dict[str, CategoryManager] = {}
        self._stack = AsyncExitStack()
        self._pending: Callable[[], Any] | None = None
        self._closed = False
        self.tracer: Tracer | None = None
        self._model: ChatModel | None = None
        self._model_given = False
        self._tools: list[BaseTool] = []
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
    ) -> MetaManager:
        """Build the router from a config file (or a loaded config).

        Raises:
            ConfigError: every problem of the file, its templates and its tool lists.
        """
        loaded = config if isinstance(config, MetaToolsConfig) else MetaToolsConfig.load(config)
        prompts = PromptSet.load(loaded.prompts_path())
        model_given = model is not None
        meta = cls([], config=loaded)
        if model is None:
            from .llm.factory import model_from_config

            model = model_from_config(loaded.model)
            closer = getattr(model, "aclose", None)
            if closer is not None:
                meta._stack.push_async_callback(closer)  # we built it, so we close it
        python_tools = [as_tool(t) for t in tools]
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
            available[found.name] = found
        chosen, warnings = resolve_tools(config, available)
        defaults = config.defaults
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
            )
            for name, spec in config.categories.items()
        )
        self.warnings = warnings
        self._tools, self._model = tools, model

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
        previous = {m.name: m for m in self._managers.values()}
        self._build(config, self._tools, model, prompts)
        for manager in self._managers.values():
            old = previous.get(manager.name)
            if old is not None:
                manager.adopt_memory(old)
        self.config = config
        return self.warnings

    # -- lifecycle -----------------------------------------------------------------------
    async def start(self) -> None:
        """Open tool sources (MCP sessions); idempotent."""
        if self._closed:
            raise ClosedError("this MetaManager is closed; build a new one")

    async def aclose(self) -> None:
        """Close every tool source; closing twice is harmless."""
        if not self._closed:
            self._closed = True
            await self._stack.aclose()

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
        objective, exact_input = arguments["objective"], arguments["exact_input"]
        if self.tracer is None:
            return await manager.run(objective, exact_input, session=session, on_event=on_event)
        async with self.tracer.main_call(manager.slug, call_id=call_id) as traced:
            return await manager.run(
                objective, exact_input, session=session, on_event=fan_out(traced, on_event)
            )
