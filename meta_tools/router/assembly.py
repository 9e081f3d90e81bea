"""Building a router from a config: its categories, and what it owns while it runs.

`ConfigAssembly` is what `MetaManager.from_config` adds to a plain router: the
loaded config, the tool sources (`ToolSources`: Python tools, built-ins, MCP
servers and the caches around them), the model it built from the `model`
section, and the redactor of the config's secrets. The router asks it for new
categories on reload, lets it re-tool the categories when an MCP server's tool
list changes, and hands it each call to prepare (connect waiting servers).
"""

from __future__ import annotations

import logging
import os
from collections.abc import AsyncIterator, Awaitable, Callable, Iterable, Sequence
from contextlib import AsyncExitStack, asynccontextmanager
from functools import partial

import anyio
import anyio.to_thread

from ..category.manager import CategoryManager
from ..category.prompts import PromptSet
from ..category.result import CategoryResult
from ..config import ANY_CATEGORY, READ_ONCE, MetaToolsConfig, category_name_problems
from ..exceptions import ConfigError
from ..guards import Guards
from ..llm.base import ChatModel
from ..llm.defaults import KEY_ENV
from ..llm.owned import OwnedModels, close_model
from ..llm.profile import ProfileChoice
from ..support.lifecycle import AsyncCloseable
from ..support.redaction import Redactor
from ..tools.base import BaseTool
from ..tools.mcp.asks import ElicitationHandler, SamplingHandler
from ..tools.mcp.connection import McpToolSource
from ..tools.pack import ToolPack
from ..tools.python_modules import ToolsLike
from ..tools.wrapper import unwrap
from .catalog import ToolSources
from .from_config import (
    category_from_config,
    guards_from_config,
    model_from_config,
    name_given,
    profile_choice,
)

__all__ = ["ANY_CATEGORY", "ConfigAssembly", "category_table", "config_secrets"]

logger = logging.getLogger("meta_tools.meta")

Categories = dict[str, CategoryManager]
"""A router's categories by function name (slug)."""


def category_table(managers: Iterable[CategoryManager]) -> Categories:
    """The categories by slug, their names checked as a config's are when it is read.

    Raises:
        ConfigError: two categories have the same function name, one has the name of
            the router's own `any_category` tool, or one has no letter or digit.
    """
    managers = list(managers)
    if problems := category_name_problems(m.name for m in managers):
        raise ConfigError("categories", problems)
    return {m.slug: m for m in managers}


def config_secrets(config: MetaToolsConfig) -> set[str]:
    """What must never be shown: `${VAR}` values, the model's API key, the service's token."""
    names = {config.model.api_key_env, *KEY_ENV.values(), "META_TOOLS_TOKEN"}
    keys = {os.environ[name] for name in names if name and os.environ.get(name)}
    return set(config.secrets) | keys


class ConfigAssembly(AsyncCloseable):
    """A config's categories, and what a router built from it owns: sources, model, redactor.

    Build one with `ConfigAssembly.load`; `MetaManager.from_config` does, and
    delegates its lifecycle and reloads to it.

    Attributes:
        config: the config now applied.
        warnings: the problems that did not stop the last build (tools in no category, ...).
        redactor: the secrets of `config`, masked in logs and in texts shown to clients.
    """

    def __init__(
        self,
        config: MetaToolsConfig,
        sources: ToolSources,
        model: ChatModel,
        *,
        stack: AsyncExitStack,
        owned: OwnedModels,
    ) -> None:
        self.config = config
        self.warnings: list[str] = []
        self.redactor = Redactor()
        self.extra_secrets: set[str] = set()  # not from the config (the service's token)
        self.sources = sources
        self._model = model  # the model of the categories now built
        self._owned = owned  # `_model` when built from the config, and those it replaced
        self._stack = stack
        self._categories: Callable[[], Sequence[CategoryManager]] = list
        self._closed = False
        self._retool_lock = anyio.Lock()
        self._retool_wanted = False
        self._retooled: Callable[[], Awaitable[None]] | None = None
        self.served: str | None = None
        """The model's name as its server reported it, when nobody gave one (`probe_model`)."""
        self.choice: ProfileChoice = ProfileChoice("capable", "not built yet")
        self.guards: Guards = Guards()

    @classmethod
    def load(
        cls,
        config: MetaToolsConfig | str | os.PathLike[str],
        *,
        tools: ToolsLike = (),
        model: ChatModel | None = None,
        sources: Iterable[McpToolSource] = (),
        elicitation: ElicitationHandler | None = None,
        sampling: SamplingHandler | None = None,
    ) -> tuple[ConfigAssembly, Categories]:
        """The assembly of `config` and its first categories.

        Raises:
            ConfigError: every problem of the file, its templates and its tool lists.
        """
        loaded = config if isinstance(config, MetaToolsConfig) else MetaToolsConfig.load(config)
        prompts = PromptSet.load(loaded.prompts_path())
        stack = AsyncExitStack()
        owned = OwnedModels()
        stack.push_async_callback(owned.aclose)  # first in: closed last
        tool_sources = ToolSources.from_config(
            loaded,
            tools=tools,
            servers=sources,
            stack=stack,
            elicitation=elicitation,
            sampling=sampling,
        )
        if model is None:
            model = owned.current = model_from_config(loaded.model)
        assembly = cls(loaded, tool_sources, model, stack=stack, owned=owned)
        return assembly, assembly._build(loaded, model, prompts)

    def add_secrets(self, secrets: Iterable[str]) -> None:
        """Hide these values too, now and after every reload."""
        self.extra_secrets.update(secrets)
        self.redactor.add(secrets)
        self.redactor.attach()

    def _build(self, config: MetaToolsConfig, model: ChatModel, prompts: PromptSet) -> Categories:
        """The categories of `config`; nothing of this assembly changes if it raises."""
        # A config made in code was not read by `MetaToolsConfig.load`, which checks these.
        if problems := category_name_problems(config.categories):
            raise ConfigError(config.source, problems)
        chosen, warnings = self.sources.resolve(config)
        redactor = Redactor(config_secrets(config) | self.extra_secrets)
        choice = self._choice(config, model)
        guards = guards_from_config(config, choice)
        table = category_table(
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
                    else self.sources.cache(spec.cache, f"category:{name}")
                ),
                memory=self.sources.memory(config.memory, name, config.defaults.category_memory),
                guards=guards,
            )
            for name, spec in config.categories.items()
        )
        self.choice, self.guards = choice, guards
        self.redactor.detach()
        self.redactor = redactor
        redactor.attach()
        self.warnings = warnings
        self._model = model
        return table

    async def reload(
        self, config: MetaToolsConfig, current: Iterable[CategoryManager]
    ) -> Categories:
        """The categories of `config`, built from the sources already open.

        A category that keeps its name adopts the session memory of its `current` one.
        A model built from the old `model` section is closed once no call uses it.

        Raises:
            ConfigError: every problem of `config`; nothing changes. A change of
                `mcp_servers`, `python_tools` or `builtins` is not applied (the sources are
                open; it needs a restart) but named in the warnings; the rest of the edit is.
            ModelError: the new `model` section names a key that is not set.
        """
        old = self.config
        config, restart = keep_sources(config, old)
        prompts = PromptSet.load(config.prompts_path())
        model, built = self._model, None
        # A model passed in code stays; one built from the config follows its `model` section.
        if model is self._owned.current and config.model != old.model:
            model = built = model_from_config(config.model)
        try:
            table = self._build(config, model, prompts)
        except BaseException:
            if built is not None:
                await close_model(built)
            raise
        if built is not None:
            await self._owned.replace(built)
        previous = {m.name: m for m in current}
        for manager in table.values():
            if manager.name in previous:
                manager.adopt_memory(previous[manager.name])
        self.config = config
        self.warnings = restart + self.warnings
        return table

    @property
    def model(self) -> ChatModel:
        """The model the categories now built run on (the config's, or the one passed in)."""
        return self._model

    def _choice(self, config: MetaToolsConfig, model: ChatModel) -> ProfileChoice:
        """The guard profile for `model`: the config's own, or what the model calls for."""
        passed = None if model is self._owned.current else model
        return profile_choice(config, served=self.served, model=passed)

    async def probe_model(self, categories: Sequence[CategoryManager]) -> None:
        """Ask the server which model it serves when nobody named one, then choose again.

        A local server (llama.cpp, Ollama, vLLM) answers whatever name is sent, or
        refuses a wrong one: with exactly one model served, its name is sent from now
        on, shown in banners, and the guard profile follows it. With several, the
        config must say which (a warning).
        """
        model, spec = self._model, self.config.model
        if model is not self._owned.current or name_given(spec) is not None:
            return
        ask = getattr(model, "served_models", None)
        if ask is None:
            return
        names: list[str] = await ask()
        if len(names) > 1:
            shown = ", ".join(names[:5]) + (", ..." if len(names) > 5 else "")
            self.warnings.append(
                f"the model's server serves {len(names)} models ({shown}); set model.name"
                " (or OPENAI_MODEL) to the one to use"
            )
        if len(names) != 1:
            return
        self.served = model.model = names[0]  # type: ignore[attr-defined]
        self.choice = self._choice(self.config, model)
        self.guards = guards_from_config(self.config, self.choice)
        for manager in categories:
            manager.guards = self.guards

    # -- tool sources --------------------------------------------------------------------
    async def open(
        self,
        categories: Callable[[], Sequence[CategoryManager]],
        *,
        retooled: Callable[[], Awaitable[None]] | None = None,
    ) -> None:
        """Open the MCP servers and give `categories()` their tools, now and on every change.

        `retooled()` is awaited after each change has been applied (the router rebuilds
        its ranking then); `retooling` is True from the change until it returns.

        Raises:
            ConfigError: two servers provide the same tool name, or a category lists a tool
                that no server provides.
        """
        self._categories = categories
        self._retooled = retooled
        if not self.sources.servers:
            return
        await self.sources.open()
        self.retool(strict=True)
        for source in self.sources.servers:
            source.subscribe(self._on_source_change)

    def retool(self, *, strict: bool) -> None:
        """Give every category the tools the config names, from the sources as they are now.

        Raises:
            ConfigError: (strict) a name clash, or a listed tool that no source provides.
        """
        self._retool(self.config, list(self._categories()), strict=strict)

    def _retool(
        self, config: MetaToolsConfig, managers: Sequence[CategoryManager], *, strict: bool
    ) -> None:
        # Given the config and the categories it was taken with: run in a worker thread,
        # a reload meanwhile swaps in new categories built by itself, never these tools.
        chosen, warnings = self.sources.resolve(config, strict=strict)
        changed = []
        for manager in managers:
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
                else:
                    changed.append(manager.name)
        if changed:
            logger.debug("new tools for %s", ", ".join(map(repr, changed)))
        # A server's error may quote its stderr, which may quote a secret it was given.
        failed = self.sources.failures()
        self.warnings = [self.redactor.text(w) for w in warnings + failed]

    async def _on_source_change(self, source: McpToolSource) -> None:
        """Re-tool the categories in a worker thread; changes that arrive meanwhile, once.

        Resolving thousands of tools and building the categories' shortlist indexes
        takes long enough to stall every client if done on the event loop.
        """
        if self._closed:
            return
        logger.info("MCP server %r lists %d tools", source.name, len(source.tools()))
        self._retool_wanted = True
        async with self._retool_lock:
            if not self._retool_wanted or self._closed:
                return  # the re-tooling just done already saw this change
            self._retool_wanted = False
            work = partial(self._retool, self.config, list(self._categories()), strict=False)
            await anyio.to_thread.run_sync(work)
            if self._retooled is not None:
                await self._retooled()

    @property
    def retooling(self) -> bool:
        """Whether a server's change is still being applied (tools, then the ranking)."""
        return self._retool_wanted or self._retool_lock.locked()

    # -- calls ---------------------------------------------------------------------------
    @asynccontextmanager
    async def call(self, manager: CategoryManager) -> AsyncIterator[CategoryResult | None]:
        """Hold `manager`'s model open for one call; yields a failed result if no tool can run.

        MCP servers the category waits for (first use, or failed and out of backoff)
        are connected first.
        """
        # Counted before any await, so that a reload in between cannot close the model.
        async with self._owned.using(manager.model):
            reasons = await self.sources.connect_waiting(manager) if self.sources.servers else None
            if reasons is None:
                yield None
            else:
                summary = f"No tool of this category can run now. {' '.join(reasons)}"
                yield CategoryResult(
                    category=manager.name, status="failed", summary=self.redactor.text(summary)
                )

    async def aclose(self) -> None:
        """Close every tool source (ending MCP subprocesses) and the models built here."""
        if not self._closed:
            self._closed = True
            self.redactor.detach()
            self.sources.begin_close()  # all wind down at once; each is then left in order
            await self._stack.aclose()


def _same_tools(current: Sequence[BaseTool], new: Sequence[BaseTool]) -> bool:
    """Whether `new` are the very tools of `current`, looking through the caches around them.

    A cache wrapper is made afresh on every resolution, the tool inside it is not;
    a server that listed again gives new tool objects, and so does a stand-in.
    """
    return len(current) == len(new) and all(
        unwrap(a) is unwrap(b) for a, b in zip(current, new, strict=True)
    )


def keep_sources(
    config: MetaToolsConfig, current: MetaToolsConfig
) -> tuple[MetaToolsConfig, list[str]]:
    """`config` with the running tool sources kept, and one warning per section that changed.

    The tool sources are open (MCP sessions, imported modules); an edit of them
    applies on the next start, while the rest of the edit applies now.
    """
    changed = [s for s in READ_ONCE if getattr(config, s) != getattr(current, s)]
    if not changed:
        return config, []
    kept = config.model_copy(update={s: getattr(current, s) for s in changed})
    warnings = [
        f"$.{section}: changed, but {READ_ONCE[section]};"
        " restart the service to apply it (the rest of the edit is applied)"
        for section in changed
    ]
    return kept, warnings
