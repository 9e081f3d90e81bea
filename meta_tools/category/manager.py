"""Level 2: `CategoryManager`, a bounded select → execute → evaluate → summarize loop.

Each `run` has its own state (`RunState`: messages, executions, failure
counts), so concurrent runs never see each other. The category keeps only a bounded
memory of past runs per session, shown to its LLM as context. Each round's
tool calls are run by a `RoundExecutor` (`execute`).
"""

from __future__ import annotations

import time
from collections.abc import Callable, Iterable, Sequence
from dataclasses import replace
from functools import partial
from typing import Any

import jinja2

from ..exceptions import ConfigError, ModelError
from ..guards import Guards
from ..guards.findings import done_so_far
from ..guards.results import RepeatRounds
from ..kernel import run_rounds
from ..llm.base import AnswerLater, ChatModel
from ..llm.types import (
    RESERVED_TOOL_NAMES,
    AssistantTurn,
    ChatRequest,
    Message,
    ToolDefinition,
)
from ..support.redaction import Redactor
from ..support.text import sentence, slugify
from ..tools.base import BaseTool
from ..tools.cache import CachedTool, ResultCache
from ..tools.pack import ToolPack
from .events import (
    Evaluated,
    EventSink,
    ModelCalled,
    RunEvent,
    RunFinished,
    RunStarted,
    ToolsSelected,
)
from .execute import RoundExecutor
from .limits import LIMITS
from .loop import CategoryRound
from .memory import MemoryStore, SessionMemory
from .prompts import PromptSet, PromptVariables
from .result import CategoryResult, RunStatus
from .run import Run, RunState
from .shortlist import Selection, Shortlist, ShortlistPolicy
from .suspend import RunSuspended, SuspendedPhase, SuspendedRun
from .task import task_message
from .turns import (
    CONTROL_TOOLS,
    Calls,
    Outcome,
    tool_definition,
)

__all__ = ["CONTROL_TOOLS", "CategoryManager"]


class CategoryManager:
    """One category: its tools, its model, its prompts and its limits.

    Args:
        name: display name (the main agent sees `slug`, a valid function name).
        description: what the category is for.
        tools: the category's level-1 tools.
        model: the LLM that selects tools and evaluates results.
        tool_usage_notes: extra guidance shown to the LLM.
        max_iterations: rounds of tool calls before a forced summary.
        tool_timeout_s: timeout of each tool call.
        max_calls_per_round: tool calls run from one LLM turn; the rest are answered
            with an error asking for them in the next round.
        max_result_chars: longer tool outputs are truncated with a marker.
        memory_size: past runs (objective + summary) remembered per session.
        prompts: the templates (defaults when omitted).
        secrets: values (API keys, tokens) scrubbed from results, errors and events,
            or a `Redactor` already built for them (shared, not compiled again).
        max_tools_per_prompt: above this many tools, each call is offered a shortlist.
        max_tool_chars_per_prompt: above this many characters of tool definitions, too.
        pinned: tool names always offered, whatever the shortlist ranks.
        abstain_below: the shortlist declines (status `no_suitable_tool`, no LLM call)
            when its best tools cover less than this share of the objective's words.
        cache: memoise every tool's results here (tools already wrapped in a
            `CachedTool`, e.g. by their MCP server's config, keep their own cache).
        memory: where past runs are kept (default: in this process, `memory_size` per session).
        guards: the rules that second-guess the model (`meta_tools.guards`): a `Guards`
            or a profile's name; default the profile `model` calls for by its name and
            where it runs (`Guards.for_model`), `capable` (none) when nothing is known.
    """

    def __init__(
        self,
        name: str,
        description: str,
        tools: ToolPack | Iterable[BaseTool | Callable[..., Any]],
        model: ChatModel,
        *,
        tool_usage_notes: str = "",
        max_iterations: int = LIMITS.max_iterations,
        tool_timeout_s: float = LIMITS.tool_timeout_s,
        max_calls_per_round: int = LIMITS.max_calls_per_round,
        max_result_chars: int = LIMITS.max_result_chars,
        memory_size: int = LIMITS.category_memory,
        prompts: PromptSet | None = None,
        secrets: Iterable[str] | Redactor = (),
        max_tools_per_prompt: int = LIMITS.max_tools_per_prompt,
        max_tool_chars_per_prompt: int | None = LIMITS.max_tool_chars_per_prompt,
        pinned: Sequence[str] = (),
        abstain_below: float | None = LIMITS.abstain_below,
        cache: ResultCache | None = None,
        memory: MemoryStore | None = None,
        guards: Guards | str | None = None,
    ) -> None:
        self.name = name
        self.slug = slugify(name)
        self.description = description
        self.cache = cache
        self._shortlist_policy = ShortlistPolicy(
            max_tools_per_prompt, max_tool_chars_per_prompt, tuple(pinned), abstain_below
        )
        self.tools = ToolPack([], name=name)
        self.shortlist: Shortlist | None = None
        self.set_tools(tools)
        self.model = model
        self.tool_usage_notes = tool_usage_notes
        self.max_iterations = max_iterations
        self.tool_timeout_s = tool_timeout_s
        self.max_calls_per_round = max_calls_per_round
        self.max_result_chars = max_result_chars
        self.memory: MemoryStore = memory or SessionMemory(memory_size)
        self.prompts = prompts or PromptSet.load()
        self.redactor = secrets if isinstance(secrets, Redactor) else Redactor(secrets)
        self.guards = Guards.for_model(model) if guards is None else Guards.of(guards)

    @property
    def max_tools_per_prompt(self) -> int:
        """Above this many tools, each LLM call is offered a shortlist."""
        return self._shortlist_policy.max_tools

    def __repr__(self) -> str:
        return f"<CategoryManager {self.name!r} tools={len(self.tools)}>"

    def set_tools(self, tools: ToolPack | Iterable[BaseTool | Callable[..., Any]]) -> None:
        """Use these tools from the next LLM call on (an MCP server listed new ones).

        They get the category's cache and a fresh shortlist; a run in flight sees
        them at its next step.

        Raises:
            ConfigError: a pinned tool is not among them, or a tool takes a control call's
                name (the current tools stay).
        """
        pack = tools if isinstance(tools, ToolPack) else ToolPack(tools, name=self.name)
        cache = self.cache
        if cache is not None:
            wrapped = [
                t if isinstance(t, CachedTool) else CachedTool(t, cache) for t in pack.list_tools()
            ]
            pack = ToolPack(wrapped, name=pack.name)
        reserved = sorted(RESERVED_TOOL_NAMES.intersection(t.name for t in pack.list_tools()))
        if reserved:
            raise ConfigError(
                f"category {self.name!r}",
                [
                    f"the tool name {r!r} is reserved for a control call; rename it"
                    for r in reserved
                ],
            )
        # The index is built here, once per tool set, and only for a category that needs one.
        shortlist = self._shortlist_policy.build(pack.list_tools(), owner=f"category {self.name!r}")
        self.tools, self.shortlist = pack, shortlist
        self._few: tuple[int, Shortlist] | None = None  # guard `few_tools`'s, when asked
        self._defined: dict[int, tuple[BaseTool, ToolDefinition]] = {}

    def _definitions(self, tools: Sequence[BaseTool]) -> list[ToolDefinition]:
        """The definitions of `tools` as the model is offered them, each built once per
        tool set (a schema does not change while its tool is offered)."""
        defined = self._defined
        out = []
        for tool in tools:
            known = defined.get(id(tool))
            if known is None or known[0] is not tool:
                known = defined[id(tool)] = (tool, tool_definition(tool))
            out.append(known[1])
        return out

    def offer(self, run: Run) -> Selection:
        """Choose the tools the run's next LLM call is offered, and offer them.

        All but the run's withdrawn tools; in a category over its limits, the
        shortlist's best matches for the objective and input (and for the user's
        request, when known), plus pinned and already used tools.
        """
        state = run.state
        shortlist = self.shortlist
        few = self.guards.tools_a_call(len(self.tools))
        if few is not None:
            # The best `few` only when the task's words reach that many: where they reach
            # fewer, the ranking cannot tell the rest apart, and the category's own
            # limits stand ("let everyone know lunch is here" names no tool's words).
            capped = self._few_tools(few)
            if capped.matched(state.objective, state.exact_input, request=state.request) >= few:
                shortlist = capped
        if shortlist is None:
            tools = self.tools.list_tools()
            selection = Selection([t for t in tools if t.name not in state.withdrawn])
        else:
            selection = shortlist.select(
                state.objective,
                state.exact_input,
                request=state.request,
                used=state.used,
                withdrawn=state.withdrawn,
            )
        run.offer(selection.tools)
        return selection

    def _few_tools(self, few: int) -> Shortlist:
        """The shortlist offering at most `few` tools a call (guard `few_tools`): the
        category's own with that limit, built once per tool set (its index is shared)."""
        if self._few is not None and self._few[0] == few:
            return self._few[1]
        base, policy = self.shortlist, self._shortlist_policy
        fewer = replace(policy, max_tools=min(few, policy.max_tools))
        shortlist = fewer.shortlist(
            self.tools.list_tools(), index=None if base is None else base.index
        )
        self._few = (few, shortlist)
        return shortlist

    async def past_runs(self, session: str | None) -> list[dict[str, str]]:
        return await self.memory.past_runs(session)

    def adopt_memory(self, other: CategoryManager) -> None:
        """Take over `other`'s session memory (used when a config reload replaces it).

        With the same memory size the store is shared, so runs of `other` still in
        flight remember into it too; otherwise it is copied at the new size.
        """
        self.memory = other.memory.resized(self.memory.size)

    async def run(
        self,
        objective: str,
        exact_input: str,
        *,
        session: str | None = None,
        on_event: EventSink | None = None,
        resume: SuspendedRun | None = None,
        request: str = "",
    ) -> CategoryResult:
        """Run the loop for one task and return its result; never raises for tool or model faults.

        With `resume` (from a `RunSuspended` of this category), go on where that run stopped.
        `request` is the user's message the task came from, when known: the shortlist
        ranks for it too and the model reads it, told which part is its own (see `task_message`).

        Raises:
            RunSuspended: the model answers with a later request (see `suspend`).
        """
        if resume is not None:
            run = self._restore(resume, on_event)
            if resume.phase == "summary":
                result = await self._summarize(run)
            else:
                result = await self._loop(run)
            return await self._finish(run, result)
        if request.strip() in f"{objective}\n{exact_input}":
            request = ""  # it adds nothing the task does not say
        objective = self.guards.objective(objective, (t.name for t in self.tools.list_tools()))
        state = RunState(objective, exact_input, session=session, request=request.strip())
        run = Run(state, on_event)
        state.past_runs = await self.memory.past_runs(session)
        await run.emit(partial(self._started, state))
        selection = self.offer(run)
        if selection.abstained and not selection.tools:
            result = self._abstained(run, selection)
        else:
            prompt = self._render(self.prompts.tool_selection, run)
            state.messages.append(Message(role="system", content=prompt))
            task = task_message(objective, exact_input, state.past_runs, request)
            state.messages.append(Message(role="user", content=task))
            result = await self._loop(run)
        return await self._finish(run, result)

    def _restore(self, point: SuspendedRun, sink: EventSink | None) -> Run:
        """The run `point` carries, offered those of its tools this category still has."""
        run = Run(point.state, sink, started=time.perf_counter() - point.elapsed_s)
        run.offer([self.tools.get_tool(n) for n in point.state.offered if n in self.tools])
        return run

    async def _finish(self, run: Run, result: CategoryResult) -> CategoryResult:
        """Time the run, remember it in its session, report its end."""
        state = run.state
        result.usage.wall_s = round(time.perf_counter() - run.started, 6)
        if result.status in ("success", "max_iterations"):
            await self.memory.remember(state.session, state.objective, result.summary)
        await run.emit(
            partial(
                RunFinished,
                state.run_id,
                self.name,
                state.iteration,
                status=result.status,
                duration_s=result.usage.wall_s,
                llm_calls=result.usage.llm_calls,
                prompt_tokens=result.usage.prompt_tokens,
                completion_tokens=result.usage.completion_tokens,
                error=result.summary if result.status == "failed" else None,
            )
        )
        return result

    async def _loop(self, run: Run) -> CategoryResult:
        """Select → execute → evaluate, round after round, until the model ends the run
        (`kernel.run_rounds` over `loop.CategoryRound`)."""
        try:
            return await run_rounds(CategoryRound(self, run))
        except ModelError as exc:
            return self._result(run, "failed", self._failure_summary(exc, run))

    async def _complete(self, run: Run, request: ChatRequest) -> AssistantTurn:
        """The model's reply to `request`, as it came (`_replied` records it once read).

        Raises:
            RunSuspended: the model answers later (`AnswerLater`); the run stops before this call.
            ModelError: the model failed (traced).
        """
        state, tools = run.state, request.tools
        started = time.perf_counter()
        try:
            return await self.model.complete(request)
        except AnswerLater:
            phase: SuspendedPhase = "loop" if tools else "summary"
            elapsed = max(started - run.started, 0.0)
            point = SuspendedRun(category=self.name, phase=phase, elapsed_s=elapsed, state=state)
            raise RunSuspended(point, request) from None
        except ModelError as exc:  # the trace keeps what was sent, and why nothing came back
            await run.emit(partial(self._model_called, state, tools, None, started, exc))
            raise

    async def _replied(
        self, run: Run, request: ChatRequest, turn: AssistantTurn, started: float
    ) -> None:
        """Count and trace a reply as read (asked at `started`)."""
        state = run.state
        await run.emit(lambda: self._model_called(state, request.tools, turn, started))
        state.usage.count(turn)

    def _executor(self) -> RoundExecutor:
        """The executor of this round, with the category's tools and limits as they are now."""
        return RoundExecutor(
            self.name,
            self.tools,
            self.redactor,
            max_calls=self.max_calls_per_round,
            timeout_s=self.tool_timeout_s,
            max_result_chars=self.max_result_chars,
        )

    async def _summarize_at_limit(self, run: Run) -> CategoryResult:
        run.offer([])  # the summary call is offered no tool
        summary_prompt = self._render(self.prompts.max_iteration_summary, run)
        run.state.messages.append(Message(role="user", content=summary_prompt))
        return await self._summarize(run)

    async def _summarize(self, run: Run) -> CategoryResult:
        """The summary at the iteration limit: one model call offered no tool."""
        try:
            started, request = time.perf_counter(), ChatRequest(messages=list(run.state.messages))
            reply = await self._complete(run, request)
            turn = await self.guards.read_reply(reply, request, "category")
            await self._replied(run, request, turn, started)
            summary = (turn.text or "").strip() or done_so_far(run.state)
        except ModelError as exc:
            summary = self._failure_summary(exc, run)
        return self._result(run, "max_iterations", summary)

    def _render(self, template: jinja2.Template, run: Run) -> str:
        """A prompt template rendered for the run as it stands."""
        state = run.state
        variables = PromptVariables(
            category=self.name,
            description=self.description,
            tool_usage_notes=self.tool_usage_notes,
            tools=[{"name": t.name, "description": t.description} for t in run.tools],
            objective=state.objective,
            exact_input=state.exact_input,
            iteration=state.iteration,
            max_iterations=self.max_iterations,
            withdrawn=list(state.withdrawn),
            failed=list(
                dict.fromkeys(
                    e.tool for e in state.executions if e.round == state.iteration and not e.ok
                )
            ),
            has_results=state.has_results,
            found_nothing=self.guards.found_nothing(state.executions),
            past_runs=state.past_runs,
            repeated=state.guarded[RepeatRounds.name] > 0,
        )
        return template.render(variables)

    def _result(self, run: Run, status: RunStatus, summary: str) -> CategoryResult:
        state = run.state
        return CategoryResult(
            category=self.name,
            status=status,
            summary=self.redactor.text(summary),
            executions=state.executions,
            iterations=state.iteration,
            usage=state.usage,
        )

    def _abstained(self, run: Run, selection: Selection) -> CategoryResult:
        covered = f"{selection.coverage or 0.0:.0%}"
        threshold = f"{self.shortlist.abstain_below if self.shortlist else 0.0:.0%}"
        result = self._result(
            run,
            "no_suitable_tool",
            f"No tool of the {self.name!r} category matches this objective: the best "
            f"matches cover {covered} of its key words, below the {threshold} threshold.",
        )
        result.suggestion = (
            "Check that this is the right category, or restate the objective "
            "in the words its tools use."
        )
        return result

    def _failure_summary(self, exc: ModelError, run: Run) -> str:
        return f"The category's model failed: {sentence(str(exc))} {done_so_far(run.state)}"

    def _model_called(
        self,
        state: RunState,
        tools: list[ToolDefinition],
        turn: AssistantTurn | None,
        started: float,
        error: ModelError | None = None,
    ) -> ModelCalled:
        """The trace record of one LLM call: the prompt's new messages and the reply (or error)."""
        new = state.messages[state.traced :]
        state.traced = len(state.messages)
        phase = "summary" if not tools else "select" if state.iteration == 0 else "evaluate"
        return ModelCalled(
            state.run_id,
            self.name,
            state.iteration,
            phase=phase,
            messages=tuple(self.redactor.value(m.model_dump(exclude_defaults=True)) for m in new),
            tools=tuple(t.name for t in tools),
            reply=(
                {}
                if turn is None
                else self.redactor.value(turn.as_message().model_dump(exclude_defaults=True))
            ),
            duration_s=round(time.perf_counter() - started, 6),
            error=None if error is None else self.redactor.text(str(error)),
        )

    def _started(self, state: RunState) -> RunEvent:
        objective = self.redactor.text(state.objective)
        return RunStarted(
            state.run_id, self.name, 0, objective=objective, guards=self.guards.describe()
        )

    def _decision(self, run: Run, outcome: Outcome, turn: AssistantTurn, took: float) -> RunEvent:
        """The event of one LLM decision: the first selects tools, later ones evaluate."""
        run_id, iteration = run.state.run_id, run.state.iteration
        tokens = (
            turn.usage.prompt_tokens if turn.usage else 0,
            turn.usage.completion_tokens if turn.usage else 0,
        )
        if iteration == 0:
            names = tuple(c.name for c in outcome.calls) if isinstance(outcome, Calls) else ()
            return ToolsSelected(run_id, self.name, 1, names, took, *tokens)
        decision = "more_tools" if isinstance(outcome, Calls) else "final"
        return Evaluated(run_id, self.name, iteration, decision, took, *tokens)
