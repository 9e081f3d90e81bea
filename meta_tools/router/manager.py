"""Level 3: `MetaManager`, the few category tools the main agent sees, routed to their managers."""

from __future__ import annotations

import os
from collections.abc import Awaitable, Callable, Iterable, Mapping
from dataclasses import dataclass
from typing import Any

from mcp.types import Tool as McpTool
from typing_extensions import Self

from .._lifecycle import AsyncCloseable
from .._redaction import Redactor
from .._suggest import did_you_mean
from .._text import slugify
from ..category.events import EventSink
from ..category.manager import CategoryManager
from ..category.result import CategoryResult
from ..category.suspend import SuspendedRun
from ..config import MetaToolsConfig
from ..exceptions import CategoryNotFoundError, ClosedError, ToolArgumentsError
from ..llm.base import ChatModel
from ..tools.mcp.source import McpToolSource
from ..tools.python_source import ToolsLike
from ..tracing import Tracer, fan_out
from .assembly import ConfigAssembly, category_table

__all__ = [
    "CATEGORY_SENTENCE",
    "CategoryCall",
    "MetaManager",
    "category_not_found",
    "category_parameters",
]

CATEGORY_SENTENCE = "It picks and runs the right tools itself."
_PARAMETERS = ("objective", "exact_input")


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
        "required": list(_PARAMETERS),
    }


def category_not_found(name: str, categories: Mapping[str, str]) -> CategoryNotFoundError:
    """The error for an unknown category, with close names; `categories`: slug → display name."""
    hint = did_you_mean(slugify(name), categories, cutoff=0.5)
    listed = ", ".join(f"{slug!r} ({display})" for slug, display in categories.items()) or "none"
    return CategoryNotFoundError(
        f"unknown category {name!r}; {f'{hint} ' if hint else ''}the categories are: {listed}"
    )


@dataclass(frozen=True, slots=True)
class CategoryCall:
    """A category-tool call whose name and arguments were checked (`MetaManager.check_call`)."""

    category: CategoryManager
    objective: str
    exact_input: str
    resume: SuspendedRun | None = None
    """A run of this category stopped before a model call (`RunSuspended`), to go on with."""


class MetaManager(AsyncCloseable):
    """Routes category-tool calls to their CategoryManagers.

    `MetaManager([...managers])` routes over categories built in code.
    `MetaManager.from_config(path, tools=..., model=...)` also owns what the
    config brings (MCP sessions, the model it built, secrets to redact):
    use it as an async context manager, which opens and closes them.
    """

    def __init__(
        self, managers: Iterable[CategoryManager] = (), *, assembly: ConfigAssembly | None = None
    ) -> None:
        self.tracer: Tracer | None = None
        self._managers = category_table(managers)
        self._assembly = assembly
        self._change_listeners: list[Callable[[], Awaitable[None]]] = []
        self._closed = False
        self._started = False

    @classmethod
    def from_config(
        cls,
        config: MetaToolsConfig | str | os.PathLike[str],
        *,
        tools: ToolsLike = (),
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
        assembly, categories = ConfigAssembly.load(
            config, tools=tools, model=model, sources=sources
        )
        return cls(categories.values(), assembly=assembly)

    # -- what a router built from a config owns -----------------------------------------
    @property
    def config(self) -> MetaToolsConfig | None:
        """The config now applied (None for categories built in code)."""
        return self._assembly.config if self._assembly is not None else None

    @property
    def warnings(self) -> list[str]:
        """Problems of the config that did not stop it (tools in no category, servers down)."""
        return self._assembly.warnings if self._assembly is not None else []

    @property
    def redactor(self) -> Redactor:
        """The config's secrets, masked in logs and in texts shown to clients."""
        return self._assembly.redactor if self._assembly is not None else Redactor()

    def add_secrets(self, secrets: Iterable[str]) -> None:
        """Hide these values (the service's bearer token) like the config's secrets."""
        values = list(secrets)
        if self._assembly is not None:
            self._assembly.add_secrets(values)
        for manager in self.categories:
            manager.redactor.add(values)

    @property
    def sources(self) -> list[McpToolSource]:
        """The MCP servers this router uses (their status, tools and last error)."""
        return list(self._assembly.sources.servers) if self._assembly is not None else []

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
        if self._assembly is None:
            raise ClosedError("this MetaManager was built from categories, not from a config")
        self._managers = await self._assembly.reload(config, self.categories)
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
        if self._assembly is None:
            return
        try:
            await self._assembly.open(lambda: self.categories)
        except BaseException:
            await self.aclose()
            raise

    async def aclose(self) -> None:
        """Close every tool source (ending MCP subprocesses); closing twice is harmless."""
        if not self._closed:
            self._closed = True
            if self._assembly is not None:
                await self._assembly.aclose()

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
            raise category_not_found(name, {m.slug: m.name for m in self._managers.values()})
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

    def check_call(self, name: str, arguments: Mapping[str, Any]) -> CategoryCall:
        """The category a call goes to, with its arguments checked.

        Raises:
            CategoryNotFoundError: `name` is no category (the message lists them).
            ToolArgumentsError: `objective` or `exact_input` is missing or not a string.
        """
        manager = self.get_category(name)
        problems = [
            f"{key!r} is required and must be a string"
            for key in _PARAMETERS
            if not isinstance(arguments.get(key), str)
        ]
        allowed = ", ".join(_PARAMETERS)
        problems += [
            f"{key!r} is not a parameter (allowed: {allowed})"
            for key in sorted(set(arguments) - set(_PARAMETERS))
        ]
        if problems:
            raise ToolArgumentsError(manager.slug, problems)
        return CategoryCall(manager, arguments["objective"], arguments["exact_input"])

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
        return await self.run(
            self.check_call(name, arguments), session=session, on_event=on_event, call_id=call_id
        )

    async def run(
        self,
        call: CategoryCall,
        *,
        session: str | None = None,
        on_event: EventSink | None = None,
        call_id: str | None = None,
    ) -> CategoryResult:
        """Run a call that `check_call` checked (so that a server checks its arguments once)."""
        if self._closed:
            raise ClosedError("this MetaManager is closed")
        manager = call.category
        if self._assembly is None:
            return await self._run(call, session, on_event, call_id)
        if self._assembly.sources.servers and not self._started:
            raise ClosedError(
                "this MetaManager uses MCP servers: enter it first"
                " (`async with MetaManager.from_config(...) as meta:` or `await meta.start()`)"
            )
        async with self._assembly.call(manager) as unavailable:
            if unavailable is not None:
                return unavailable
            return await self._run(call, session, on_event, call_id)

    async def _run(
        self,
        call: CategoryCall,
        session: str | None,
        on_event: EventSink | None,
        call_id: str | None,
    ) -> CategoryResult:
        manager = call.category
        if self.tracer is None:
            return await manager.run(
                call.objective,
                call.exact_input,
                session=session,
                on_event=on_event,
                resume=call.resume,
            )
        async with self.tracer.main_call(manager.slug, call_id=call_id) as traced:
            return await manager.run(
                call.objective,
                call.exact_input,
                session=session,
                on_event=fan_out(traced, on_event),
                resume=call.resume,
            )
