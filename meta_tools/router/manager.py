"""Level 3: `MetaManager`, the few category tools the main agent sees, routed to their managers."""

from __future__ import annotations

import os
import re
from collections.abc import Awaitable, Callable, Iterable, Mapping
from contextlib import AsyncExitStack
from dataclasses import dataclass, replace
from typing import Any

import anyio.to_thread
from mcp.types import Tool as McpTool
from typing_extensions import Self

from ..category.events import EventSink
from ..category.manager import CategoryManager
from ..category.result import CategoryResult, Execution, RunUsage
from ..category.suspend import RunSuspended, SuspendedRun
from ..config import MetaToolsConfig, RoutingConfig
from ..exceptions import CategoryNotFoundError, ClosedError, ModelError, ToolArgumentsError
from ..guards import Guards
from ..llm.base import ChatModel
from ..llm.openai_tools import openai_tool
from ..llm.profile import ProfileChoice, choice_for_model
from ..llm.types import ToolDefinition
from ..support.lifecycle import AsyncCloseable
from ..support.redaction import Redactor
from ..support.suggest import did_you_mean
from ..support.terms import tool_words
from ..support.text import slugify
from ..tools.mcp.asks import ElicitationHandler, SamplingHandler
from ..tools.mcp.connection import McpToolSource
from ..tools.pack import ToolPack
from ..tools.python_modules import ToolsLike
from ..tracing import Tracer, fan_out
from .assembly import ANY_CATEGORY, ConfigAssembly, category_table
from .ranking import CategoryRanking, RankedCategory, best_few

__all__ = [
    "ANY_CATEGORY",
    "CATEGORY_SENTENCE",
    "MAX_ARGUMENT_CHARS",
    "CategoryCall",
    "MetaManager",
    "category_not_found",
    "category_parameters",
]

CATEGORY_SENTENCE = "It picks and runs the right tools itself."
_PARAMETERS = ("objective", "exact_input")
_NO_GUARDS = Guards()
MAX_ARGUMENT_CHARS = 100_000
"""Characters of `objective` or `exact_input` a call may carry: about 25,000 tokens, which
every prompt of the run repeats; a larger text is refused before any work on it."""


def server_words(name: str) -> str:
    """The server prefix of a tool's name as words, as written (`Movie_and_TV__quote` ->
    `Movie and TV`); '' for a name without one."""
    server, found, _ = name.rpartition("__")
    return re.sub(r"[\W_]+", " ", server).strip() if found else ""


def what_tools_do(names: Iterable[str]) -> str:
    """What the tools do, in words, grouped by server in first-seen order:
    `Nexweave: get all templates, get template details; track parcel`.

    Users name the service they mean ("with the Nexweave API"), and the words help a
    small model match them. No function name is shown: offered one, a small model
    calls it as its own tool (a call it writes to a service is routed all the same:
    `MainAgent.routable`).
    """
    by_server: dict[str, list[str]] = {}
    for name in names:
        by_server.setdefault(server_words(name), []).append(tool_words(name))
    return "; ".join(
        f"{server}: {', '.join(dict.fromkeys(does))}" if server else "; ".join(dict.fromkeys(does))
        for server, does in by_server.items()
    )


def any_category_tool() -> ToolDefinition:
    """The tool that reaches every category: the ranking picks where the task runs."""
    return ToolDefinition(
        name=ANY_CATEGORY,
        description=(
            "Any other category: when none of the offered categories fits the task,"
            " call this; the task runs in the category that fits it best, among all of them."
        ),
        parameters=category_parameters(),
    )


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


RankingPart = tuple[CategoryManager, str, ToolPack]


def _ranking_parts(managers: Iterable[CategoryManager]) -> list[RankingPart]:
    """What a ranking is built from: each category, its description and its tools."""
    return [(m, m.description, m.tools) for m in managers]


def _same_categories(parts: list[RankingPart], managers: list[CategoryManager]) -> bool:
    """Whether `parts` were taken from these very categories (their tools may differ)."""
    return len(parts) == len(managers) and all(
        part[0] is manager for part, manager in zip(parts, managers, strict=True)
    )


def _same_parts(old: list[RankingPart], new: list[RankingPart]) -> bool:
    """Whether two lists of (category, description, tools) hold the same objects and texts."""
    return len(old) == len(new) and all(
        a is x and b == y and c is z for (a, b, c), (x, y, z) in zip(old, new, strict=True)
    )


@dataclass(frozen=True, slots=True)
class CategoryCall:
    """A category-tool call whose name and arguments were checked (`MetaManager.check_call`)."""

    category: CategoryManager
    objective: str
    exact_input: str
    resume: SuspendedRun | None = None
    """A run of this category stopped before a model call (`RunSuspended`), to go on with."""
    request: str = ""
    """The user's message the call came from, when known: the category's context."""
    handed_on_by: str | None = None
    """The category that did its part and handed this rest on: no retry goes back to it."""

    @property
    def text(self) -> str:
        """What the call is ranked by: its objective and exact input."""
        return f"{self.objective}\n{self.exact_input}"


class MetaManager(AsyncCloseable):
    """Routes category-tool calls to their CategoryManagers.

    `MetaManager([...managers])` routes over categories built in code.
    `MetaManager.from_config(path, tools=..., model=...)` also owns what the
    config brings (MCP sessions, the model it built, secrets to redact):
    use it as an async context manager, which opens and closes them.
    """

    def __init__(
        self,
        managers: Iterable[CategoryManager] = (),
        *,
        assembly: ConfigAssembly | None = None,
        routing: RoutingConfig | None = None,
        guards: Guards | str | None = None,
    ) -> None:
        self.tracer: Tracer | None = None
        self._guards = None if guards is None else Guards.of(guards)
        self._managers = category_table(managers)
        self._assembly = assembly
        self._routing = routing
        self._ranking: tuple[list[RankingPart], CategoryRanking] | None = None
        """The ranking, with what it was built from: each category, its description, its tools."""
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
        elicitation: ElicitationHandler | None = None,
        sampling: SamplingHandler | None = None,
    ) -> MetaManager:
        """Build the router from a config file (or a loaded config).

        With `mcp_servers` in the config (or `sources=`, MCP sources built in code),
        enter the router with `async with` (or `await start()`): that opens the
        sessions, lists the servers' tools and checks the tool lists against them.
        A model built from the config's `model` section is closed with the router.

        When a level-1 MCP server asks for input during a call (`elicitation/create`),
        `elicitation` answers it, and `sampling` a request for a model's message
        (`meta_tools.tools.mcp.asks`); without one, the config's servers are not told
        that the router can answer, and a question is declined in words the category
        model reads. (Sources given in code keep their own handlers.)

        Raises:
            ConfigError: every problem of the file, its templates and its tool lists.
        """
        assembly, categories = ConfigAssembly.load(
            config,
            tools=tools,
            model=model,
            sources=sources,
            elicitation=elicitation,
            sampling=sampling,
        )
        return cls(categories.values(), assembly=assembly)

    # -- what a router built from a config owns -----------------------------------------
    @property
    def config(self) -> MetaToolsConfig | None:
        """The config now applied (None for categories built in code)."""
        return self._assembly.config if self._assembly is not None else None

    @property
    def model(self) -> ChatModel:
        """The model the config's categories run on: a main agent may run on it too.

        The one built from the config's `model` section, or the one passed to
        `from_config`. A reload that changes the `model` section builds a new one and
        closes the old once its calls end, so read this again after `reload` (a
        `MainAgent` made before it keeps the old, closed model).

        Raises:
            ModelError: the router was built from categories in code (give a model yourself).
        """
        if self._assembly is None:
            raise ModelError(
                "this MetaManager was built from categories in code, not from a config:"
                " pass your model to MainAgent yourself"
            )
        return self._assembly.model

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
        managers = await self._assembly.reload(config, self.categories)
        # The ranking of the new categories is built before they are served, off the loop:
        # served with the old one, a revoked category could still be routed to.
        new = list(managers.values())
        ranking = await anyio.to_thread.run_sync(CategoryRanking, new)
        self._managers, self._ranking = managers, (_ranking_parts(new), ranking)
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
        if self._assembly is not None:
            try:
                await self._assembly.open(lambda: self.categories, retooled=self._rank_off_loop)
                await self._assembly.probe_model(self.categories)
            except BaseException:
                await self.aclose()
                raise
        await self._rank_off_loop()

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

    @property
    def guards(self) -> Guards:
        """The guards in force for a main agent over this router: those given in code,
        else those of the config (its `guards` section, on the profile its model calls
        for: `profile_choice`), else the default profile."""
        return self.guards_for(None)

    def guards_for(self, model: object) -> Guards:
        """The guards in force for a main agent on `model`: `guards` when given in code or
        by the config, else those `model` calls for (`Guards.for_model`)."""
        if self._guards is not None:
            return self._guards
        if self._assembly is not None:
            return self._assembly.guards
        if model is None:
            # Categories in code: those they run, each chosen by its own model.
            first = next(iter(self._managers.values()), None)
            return _NO_GUARDS if first is None else first.guards
        return Guards.for_model(model)

    @property
    def served_model(self) -> str | None:
        """The model's name as its server reported it, when nobody gave one (after `start`)."""
        return self._assembly.served if self._assembly is not None else None

    @property
    def profile_choice(self) -> ProfileChoice:
        """The guard profile in force and why, for banners, `list` and traces."""
        return self.choice_for(None)

    def choice_for(self, model: object) -> ProfileChoice:
        """Why `guards_for(model)` are the guards they are."""
        if self._guards is not None:
            return ProfileChoice(self._guards.describe(), "given in code")
        if self._assembly is not None:
            return self._assembly.choice
        if model is None:
            first = next(iter(self._managers.values()), None)
            return choice_for_model(None if first is None else first.model)
        return choice_for_model(model)

    # -- routing at scale -----------------------------------------------------------------
    @property
    def routing(self) -> RoutingConfig:
        """The `routing` section in force (the config's, or the one given in code)."""
        if self._routing is not None:
            return self._routing
        config = self.config
        return config.routing if config is not None else RoutingConfig()

    @property
    def retry_categories(self) -> int:
        """How many next-ranked categories a declined call is run in: the `routing`
        section's `retry_categories`, else guard `retry_declined`'s budget when it runs."""
        given = self.routing.retry_categories
        if given is not None:
            return given
        return self.guards.retries()

    def rank(self, text: str) -> list[RankedCategory]:
        """Every category, best first, for `text` (a request, or an objective and its input).

        A category is scored through its tools (BM25 over their names, descriptions
        and parameters) and its own name and description; see `ranking`. The index is
        built on first use and again only when the categories or their tools change.
        """
        return self._current_ranking().rank(text)

    def _current_ranking(self) -> CategoryRanking:
        """The ranking of the categories as they are; built here only when none is coming.

        While a server's change is applied (`ConfigAssembly.retooling`), the ranking of the
        same categories with their previous tools is served: the new one is being built in
        a worker thread, and building it here would hold every client for its duration.
        """
        # A category's tools change only by a new pack (`set_tools`): comparing the packs
        # by identity keeps this check O(categories), not O(tools), on every request.
        managers = list(self._managers.values())
        built_from = _ranking_parts(managers)
        cached = self._ranking
        if cached is not None and _same_parts(cached[0], built_from):
            return cached[1]
        coming = self._assembly is not None and self._assembly.retooling
        if cached is not None and coming and _same_categories(cached[0], managers):
            return cached[1]
        self._ranking = (built_from, CategoryRanking(managers))
        return self._ranking[1]

    async def _rank_off_loop(self) -> None:
        """Build the ranking of the categories as they are now in a worker thread."""
        managers = list(self._managers.values())
        built_from = _ranking_parts(managers)
        cached = self._ranking
        if cached is not None and _same_parts(cached[0], built_from):
            return
        ranking = await anyio.to_thread.run_sync(CategoryRanking, managers)
        # Kept with what it was built from: a change meanwhile makes it stale, not wrong.
        self._ranking = (built_from, ranking)

    def tool_holder(self, name: str) -> CategoryManager | None:
        """The category holding the tool `name` (its function name or that name in words).

        None when no category holds it, or several do. A small model shown a
        category's tools in words sometimes calls one of them by name; this is
        where such a call belongs.
        """
        return self._current_ranking().holder(name)

    def offered(
        self, request: str | None = None, *, include: Iterable[str] = ()
    ) -> list[RankedCategory] | None:
        """The categories a main agent is offered for `request`, or None for all of them.

        With more categories than `routing.max_categories`, the best-ranked ones for
        `request` in rank order (those scoring at least `routing.min_score_ratio` of
        the best), plus those named in `include` (slugs: the categories the
        conversation already used), so the offered list stays short and the best
        fits come first. The rest stay reachable through `any_category`.
        """
        limit = self.routing.max_categories
        if request is None or len(self._managers) <= limit:
            return None
        ranked = self.rank(request)
        few = best_few(ranked, limit, self.routing.min_score_ratio)
        chosen = {r.category.slug for r in few} | set(include)
        return [r for r in ranked if r.category.slug in chosen]

    def clear_category(self, request: str) -> str | None:
        """The slug of the one category offered for `request` (`offered`: the router has
        more categories than `routing.max_categories`, and no other scores within
        `routing.min_score_ratio` of it) when the request's words reach its tools; else None."""
        offered = self.offered(request)
        if offered is None or len(offered) != 1:
            return None
        only = offered[0]
        return only.category.slug if only.score > 0 and only.tools else None

    def tool_definitions(
        self, request: str | None = None, *, include: Iterable[str] = ()
    ) -> list[ToolDefinition]:
        """One tool per category; with `request`, only those offered for it.

        When `request` is given and the router has more categories than
        `routing.max_categories`, the best-ranked categories come first, each
        described with its best-matching tools for `request`, followed by the
        `any_category` tool (`call_tool` runs it in the best-ranked category).
        """
        offered = self.offered(request, include=include)
        if offered is None:
            return [self._definition(m, self.tool_description(m)) for m in self.categories]
        tools = [self._definition(r.category, self._ranked_description(r)) for r in offered]
        return [*tools, any_category_tool()]

    def openai_tools(
        self, request: str | None = None, *, include: Iterable[str] = ()
    ) -> list[dict[str, Any]]:
        """`tool_definitions` as OpenAI functions, for an OpenAI-style agent loop of your own."""
        return [openai_tool(t) for t in self.tool_definitions(request, include=include)]

    def _ranked_description(self, ranked: RankedCategory) -> str:
        """The category's description and what its best-matching tools do, in words.

        Tools are named in words, not by their function names: offered a name,
        a small model calls it as if it were one of its own tools.
        """
        manager = ranked.category
        if not ranked.tools:
            return self.tool_description(manager)
        return (
            f"{manager.description.rstrip()} It can: {what_tools_do(ranked.tools)}."
            f" {CATEGORY_SENTENCE}"
        )

    @staticmethod
    def _definition(manager: CategoryManager, description: str) -> ToolDefinition:
        return ToolDefinition(
            name=manager.slug, description=description, parameters=category_parameters()
        )

    def list_tools(self) -> list[McpTool]:
        """The category tools in MCP shape."""
        return [
            McpTool(name=t.name, description=t.description, input_schema=t.parameters)
            for t in self.tool_definitions()
        ]

    def check_call(self, name: str, arguments: Mapping[str, Any]) -> CategoryCall:
        """The category a call goes to, with its arguments checked.

        A call to `any_category` goes to the best-ranked category for its
        objective and exact input.

        Raises:
            CategoryNotFoundError: `name` is no category (the message lists them), or
                `any_category` was called with a task no category's tools match.
            ToolArgumentsError: `objective` or `exact_input` is missing, not a string, or
                longer than `MAX_ARGUMENT_CHARS`.
        """
        manager = None if name == ANY_CATEGORY else self.get_category(name)
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
        problems += [
            f"{key!r} has {len(value):,} characters, more than {MAX_ARGUMENT_CHARS:,}:"
            " pass a part of the text, or where it is (a file's path)"
            for key in _PARAMETERS
            if isinstance(value := arguments.get(key), str) and len(value) > MAX_ARGUMENT_CHARS
        ]
        if problems:
            raise ToolArgumentsError(name if manager is None else manager.slug, problems)
        objective, exact_input = arguments["objective"], arguments["exact_input"]
        if manager is None:
            manager = self._best_for(f"{objective}\n{exact_input}")
        return CategoryCall(manager, objective, exact_input)

    def _best_for(self, text: str) -> CategoryManager:
        best = next((r.category for r in self.rank(text) if r.score > 0), None)
        if best is None:
            raise CategoryNotFoundError(
                "no category fits this task: no category's tools match its objective or input"
            )
        return best

    async def call_tool(
        self,
        name: str,
        arguments: Mapping[str, Any],
        *,
        session: str | None = None,
        on_event: EventSink | None = None,
        call_id: str | None = None,
        request: str = "",
        handed_on_by: str | None = None,
    ) -> CategoryResult:
        """Run one category call (`call_id`: the main agent's id for it, shown in traces).

        `any_category` (offered by `openai_tools(request)`) runs in the category
        that ranks best for the call; the result names it. `request`, the user's
        message the call came from, is context for the category: its shortlist ranks
        for it too and its model reads it beside the objective. `handed_on_by` names
        the category whose result left this call's objective as its `remainder`: a
        retry never runs it there again.

        Raises:
            CategoryNotFoundError: see `check_call`.
            ToolArgumentsError: `objective` or `exact_input` is missing, not a string, or
                longer than `MAX_ARGUMENT_CHARS`.
        """
        call = replace(self.check_call(name, arguments), request=request, handed_on_by=handed_on_by)
        return await self.run(call, session=session, on_event=on_event, call_id=call_id)

    async def run(
        self,
        call: CategoryCall,
        *,
        session: str | None = None,
        on_event: EventSink | None = None,
        call_id: str | None = None,
    ) -> CategoryResult:
        """Run a call that `check_call` checked (so that a server checks its arguments once).

        When the category declines (`no_suitable_tool`), the same call runs in the
        next-ranked categories that match it, at most `routing.retry_categories` of
        them; the result is the first that did not decline, `declined` names those
        that did, and its usage and executions add up every run. A category that
        declined after a call of its own worked is not retried elsewhere: what ran
        may have been an action (an email sent), which another category would repeat.

        Raises:
            RunSuspended: a run waits for a later model answer; its point carries the
                categories that declined before it, so that `resume` goes on from there.
        """
        if self._closed:
            raise ClosedError("this MetaManager is closed")
        declined = list(call.resume.declined) if call.resume is not None else []
        spent = call.resume.declined_usage if call.resume is not None else RunUsage()
        ran: list[Execution] = []  # what the categories that declined ran: it stays in the record
        while True:
            try:
                result = await self._run_one(call, session, on_event, call_id)
            except RunSuspended as stopped:
                stopped.point.declined = declined
                stopped.point.declined_usage = spent
                raise
            if declined:  # the runs before this one declined: their cost is counted here
                result.usage = spent.plus(result.usage)
                result.declined = list(declined)
                result.executions = [*ran, *result.executions]
            if result.status != "no_suitable_tool" or self._did_something(result):
                return result
            ran = list(result.executions)
            declined.append(call.category.name)
            searched = any(e.ok for e in result.executions)  # and found nothing
            following = self._next_category(call, declined, searched=searched)
            if following is None:
                return result
            spent = result.usage
            call = replace(call, category=following, resume=None)

    def _next_category(
        self, call: CategoryCall, declined: list[str], *, searched: bool = False
    ) -> CategoryManager | None:
        """The best-ranked category for `call` that matched it, has not declined yet
        and did not hand it on.

        Under guard `retry_declined` (no `routing.retry_categories` given), only one
        ranked above the category first asked, unless a call there worked and found
        nothing (`Guards.retry_only_above`). On the tuning part of the StableToolBench
        split (1.5B), retries below the first choice ran 4 tools, none of them a gold
        one ("a news aggregator for Cameroon", declined by the news category, ran a
        finance search).
        """
        if len(declined) > self.retry_categories:
            return None
        passed = {*declined, call.handed_on_by}
        above_first = self.routing.retry_categories is None and self.guards.retry_only_above(
            searched
        )
        for ranked in self.rank(call.text):
            if ranked.score <= 0 or (above_first and ranked.category.name == declined[0]):
                return None
            if ranked.category.name not in passed:
                return ranked.category
        return None

    def _did_something(self, result: CategoryResult) -> bool:
        """Whether a call of `result`'s run worked (and, under guard `found_nothing` of its
        category, found something: not an empty search): then another category must not
        run the task again."""
        manager = next((m for m in self._managers.values() if m.name == result.category), None)
        worked = any(e.ok for e in result.executions)
        return worked and not (
            manager is not None and manager.guards.found_nothing(result.executions)
        )

    async def _run_one(
        self,
        call: CategoryCall,
        session: str | None,
        on_event: EventSink | None,
        call_id: str | None,
    ) -> CategoryResult:
        """One category's run of `call` (an error result when its MCP servers are down)."""
        manager = call.category
        async with AsyncExitStack() as stack:
            if self._assembly is not None:
                if self._assembly.sources.servers and not self._started:
                    raise ClosedError(
                        "this MetaManager uses MCP servers: enter it first (`async with"
                        " MetaManager.from_config(...) as meta:` or `await meta.start()`)"
                    )
                unavailable = await stack.enter_async_context(self._assembly.call(manager))
                if unavailable is not None:
                    return unavailable
            if self.tracer is not None:
                traced = self.tracer.main_call(manager.slug, call_id=call_id)
                on_event = fan_out(await stack.enter_async_context(traced), on_event)
            return await manager.run(
                call.objective,
                call.exact_input,
                session=session,
                on_event=on_event,
                resume=call.resume,
                request=call.request,
            )
