"""`ToolSources`: the Python tools and MCP servers a router's categories draw from.

It owns the MCP servers' lifecycle and the result caches wrapped around their
tools, and resolves a config's names and globs against what the sources
provide *now* (a server that was not listed yet is stood in for by a
`PendingTool`).
"""

from __future__ import annotations

import logging
from collections.abc import Callable, Iterable
from contextlib import AsyncExitStack
from typing import TYPE_CHECKING

import anyio

from ..category.manager import CategoryManager
from ..category.memory import MemoryStore, RedisMemory
from ..config import CacheConfig, MemoryConfig, MetaToolsConfig, json_path
from ..exceptions import ConfigError, ToolDefinitionError, ToolUnavailableError
from ..support.redis_client import connect
from ..support.text import slugify
from ..tools.base import BaseTool
from ..tools.cache import CachedTool, ResultCache
from ..tools.mcp.asks import ElicitationHandler, SamplingHandler
from ..tools.mcp.connection import McpToolSource
from ..tools.mcp.tool import McpServerTool, PendingTool, reserved_name_of
from ..tools.python_modules import ToolsLike, collect_tools, import_tools
from ..tools.schema import TOOL_NAME
from ..tools.wrapper import unwrap
from .from_config import builtin_tools, cache_from_config, mcp_source
from .resolve import resolve_tools

if TYPE_CHECKING:
    import redis.asyncio

__all__ = ["ToolSources"]

_HELD_BACK = "(the tool names it would provide are checked once it imports)"
"""Said of a `python_tools` entry that does not import, when names were held back for it."""

# Its messages are about the router's categories: they keep the router's logger.
logger = logging.getLogger("meta_tools.meta")


def renamed_tools(servers: Iterable[McpToolSource]) -> list[str]:
    """One warning per MCP tool offered under another name because its own is reserved."""
    return [
        f"tool {t.remote.name!r} of MCP server {s.name!r} is offered as {t.name!r}:"
        " its name is reserved for the category's control calls"
        for s in servers
        for t in s.tools()
        if reserved_name_of(t.name) is not None
    ]


class ToolSources:
    """The tools a router's categories draw from, and the caches around them.

    Args:
        tools: Python tools and enabled built-ins (unique names).
        servers: MCP servers (unique names); entered on `stack` by `open`.
        stack: the router's exit stack; every cache is closed on it.
    """

    def __init__(
        self,
        tools: Iterable[BaseTool] = (),
        servers: Iterable[McpToolSource] = (),
        *,
        stack: AsyncExitStack,
    ) -> None:
        self.tools = list(tools)
        self.servers = list(servers)
        self._stack = stack
        self._caches: dict[tuple[str, CacheConfig], ResultCache] = {}
        self.unimportable: list[str] = []  # `python_tools` entries that failed, one line each
        self._redis: dict[str, redis.asyncio.Redis] = {}

    @classmethod
    def from_config(
        cls,
        config: MetaToolsConfig,
        *,
        tools: ToolsLike,
        servers: Iterable[McpToolSource],
        stack: AsyncExitStack,
        elicitation: ElicitationHandler | None = None,
        sampling: SamplingHandler | None = None,
    ) -> ToolSources:
        """The config's MCP servers and built-ins, plus the tools and servers given in code.

        The config's servers get `elicitation` and `sampling` (those given in code keep theirs).

        Raises:
            ConfigError: two MCP servers, or two Python tools, share a name; a module
                or file in `python_tools` cannot be imported.
            ToolDefinitionError: a function cannot become a tool.
        """
        mcp = [
            mcp_source(
                name, spec, base_dir=config.base_dir, elicitation=elicitation, sampling=sampling
            )
            for name, spec in config.mcp_servers.items()
        ] + list(servers)
        python, unimportable = _config_python_tools(config)
        python = collect_tools(tools) + python + builtin_tools(config)
        problems = [f"two MCP sources are named {n!r}" for n in _twice(s.name for s in mcp)]
        problems += [
            f"two tools are named {n!r}; rename one" for n in _twice(t.name for t in python)
        ]
        if problems:
            raise ConfigError(config.source, unimportable + problems)
        sources = cls(python, mcp, stack=stack)
        sources.unimportable = unimportable  # reported with the tool names by `resolve`
        return sources

    def resolve(
        self, config: MetaToolsConfig, *, strict: bool = True
    ) -> tuple[dict[str, list[BaseTool]], list[str]]:
        """Each category's tools from the sources as they are now, and the warnings.

        With `strict=False` every problem is a warning (and logged, for a name clash).

        Raises:
            ConfigError: (strict) a `python_tools` entry that cannot be imported, a name
                clash, or a listed tool that no source provides; all of them at once.
        """
        available = {t.name: self._with_server_cache(config, t) for t in self.tools}
        clashes = self._add_server_tools(config, available)
        if (self.unimportable or clashes) and strict:

            def listed_problems(*, check_names: bool) -> list[str]:
                try:
                    resolve_tools(
                        config,
                        available,
                        placeholder=self._placeholder(),
                        check_names=check_names,
                    )
                except ConfigError as exc:
                    return exc.problems
                return []

            # Without a module, its tools are missing too: one problem, not one per name.
            found = listed_problems(check_names=not self.unimportable)
            held = bool(self.unimportable) and len(listed_problems(check_names=True)) > len(found)
            problems = [f"{line} {_HELD_BACK}" if held else line for line in self.unimportable]
            problems += clashes + found
            raise ConfigError(config.source, problems)
        for problem in clashes:
            logger.warning("%s", problem)
        chosen, warnings = resolve_tools(
            config, available, placeholder=self._placeholder(), strict=strict
        )
        return chosen, clashes + warnings + self._left_out() + renamed_tools(self.servers)

    def _left_out(self) -> list[str]:
        """One warning per MCP tool that only runs as a task, which no category can call."""
        return [
            f"{json_path(('mcp_servers', server.name))}: tool {name!r} is left out: it must be"
            ' called as a task (execution.taskSupport "required"), which meta-tools cannot do yet'
            for server in self.servers
            for name in server.left_out
        ]

    def cache(self, config: CacheConfig, scope: str) -> ResultCache:
        """One cache per (scope, settings), kept across reloads and closed with the stack."""
        key = (scope, config)
        found = self._caches.get(key)
        if found is None:
            found = self._caches[key] = cache_from_config(config, scope=scope)
            self._stack.push_async_callback(found.aclose)
        return found

    def memory(self, config: MemoryConfig, category: str, size: int) -> MemoryStore | None:
        """The category's memory in Redis when `config` names one (else None: in the process).

        One Redis client per URL, shared by every category and closed with the stack.
        """
        if config.redis_url is None:
            return None
        client = self._redis.get(config.redis_url)
        if client is None:
            client = self._redis[config.redis_url] = connect(config.redis_url)
            self._stack.push_async_callback(client.aclose)
        return RedisMemory(
            client, namespace=f"meta_tools:memory:{category}", size=size, ttl_s=config.ttl_s
        )

    def failures(self) -> list[str]:
        """One line per MCP server whose last connection attempt failed."""
        return [
            f"MCP server {s.name!r} {s.last_error}" for s in self.servers if s.status == "failed"
        ]

    # -- MCP servers' lifecycle -------------------------------------------------------------
    async def open(self) -> None:
        """Enter every MCP server on the stack; connect those with `connect: "start"` at once."""
        for server in self.servers:
            await self._stack.enter_async_context(server)
        async with anyio.create_task_group() as group:
            for server in self.servers:
                if server.connect_mode == "start":
                    group.start_soon(self._connect_quietly, server)

    def begin_close(self) -> None:
        """Let every MCP server start winding down, so that they all end at once."""
        for server in self.servers:
            server.begin_close()

    async def connect_waiting(self, category: CategoryManager) -> list[str] | None:
        """Connect the MCP servers the category's tools wait for (first use, or failed earlier).

        Returns why not, one line per server, when none of its tools can run even now.
        """
        waiting: dict[str, McpToolSource] = {}
        for found in category.tools.list_tools():
            inner = unwrap(found)  # a `CachedTool` may wrap the stand-in
            if isinstance(inner, PendingTool):
                waiting.update((s.name, s) for s in inner.sources if isinstance(s, McpToolSource))
        if not waiting:
            return None
        async with anyio.create_task_group() as group:
            for server in waiting.values():
                group.start_soon(self._connect_quietly, server)
        # Read again: a server that connected gave the category its real tools.
        tools = [unwrap(t) for t in category.tools.list_tools()]
        if not tools or not all(isinstance(t, PendingTool) for t in tools):
            return None
        return [
            f"MCP server {s.name!r} is unavailable: {s.last_error or 'not connected'}"
            for s in waiting.values()
        ]

    @staticmethod
    async def _connect_quietly(server: McpToolSource) -> None:
        """Connect; a failure is logged (the server's tools will say why, and retry)."""
        try:
            await server.connect()
        except ToolUnavailableError as exc:
            logger.warning("%s", exc)

    # -- resolution -------------------------------------------------------------------------
    def _add_server_tools(
        self, config: MetaToolsConfig, available: dict[str, BaseTool]
    ) -> list[str]:
        """Add every MCP server's current tools; a name already taken is a problem (use `prefix`)."""
        problems: list[str] = []
        owners = {name: "a Python tool" for name in available}
        for server in self.servers:
            for found in server.tools():
                if found.name in available:
                    prefix = slugify(server.name)[:32]
                    problems.append(
                        f"{json_path(('mcp_servers', server.name))}: tool {found.name!r} is also"
                        f' provided by {owners[found.name]}; set "prefix" on one of the servers'
                        f' (e.g. "prefix": "{prefix}" names its tools {prefix}_<tool>)'
                    )
                    continue
                available[found.name] = self._with_server_cache(config, found)
                owners[found.name] = f"MCP server {server.name!r}"
        return problems

    def _placeholder(self) -> Callable[[str], BaseTool | None] | None:
        """Stand-ins for names that MCP servers not listed yet may provide (down, or first use)."""
        pending = [server for server in self.servers if not server.listed]
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

    def _with_server_cache(self, config: MetaToolsConfig, tool: BaseTool) -> BaseTool:
        """Wrap a tool of an MCP server whose config has `cache` (category caches wrap the rest)."""
        if not isinstance(tool, McpServerTool):
            return tool
        server = config.mcp_servers.get(tool.source.name)
        if server is None or server.cache is None:
            return tool
        return CachedTool(tool, self.cache(server.cache, f"server:{tool.source.name}"))


def _twice(names: Iterable[str]) -> list[str]:
    """The names that occur more than once, sorted."""
    seen: set[str] = set()
    repeated: set[str] = set()
    for name in names:
        (repeated if name in seen else seen).add(name)
    return sorted(repeated)


def _config_python_tools(config: MetaToolsConfig) -> tuple[list[BaseTool], list[str]]:
    """The tools of the config's `python_tools`, and one problem per spec that fails."""
    found: list[BaseTool] = []
    problems: list[str] = []
    for index, spec in enumerate(config.python_tools):
        try:
            found += import_tools(spec, base_dir=config.base_dir, label=f"$.python_tools[{index}]")
        except ToolDefinitionError as exc:
            problems.append(str(exc))
    return collect_tools(found), problems
