"""Level 2: `CategoryManager`, a bounded select → execute → evaluate → summarize loop.

Each `run` has its own memory (messages, executions, failure counts), so
concurrent runs never see each other. The category keeps only a bounded
memory of past runs per session, shown to its LLM as context.
"""

from __future__ import annotations

import re
import time
import uuid
from collections.abc import Callable, Iterable, Sequence
from typing import Any

from .._redaction import Redactor
from ..exceptions import ConfigError, ModelError, ToolNotFoundError
from ..llm.base import ChatModel
from ..llm.types import AssistantTurn, ChatRequest, Message, ToolCall
from ..tools.base import BaseTool
from ..tools.cache import CachedTool, ResultCache, collect_cache_report
from ..tools.pack import ToolOutcome, ToolPack
from .events import (
    Evaluated,
    EventSink,
    RunEvent,
    RunFinished,
    RunStarted,
    ToolFinished,
    ToolsSelected,
)
from .memory import RunMemory, SessionMemory
from .prompts import PromptSet
from .result import CategoryResult, Execution, RunStatus, truncate
from .shortlist import Selection, Shortlist, ShortlistPolicy
from .turns import (
    CONTROL_TOOLS,
    Answered,
    Calls,
    Declined,
    Outcome,
    Requested,
    classify_turn,
    fence_result,
    render_value,
)

__all__ = ["CONTROL_TOOLS", "CategoryManager", "slugify"]


def slugify(name: str) -> str:
    """`Programming & Tech Support` -> `programming_tech_support` (a valid function name)."""
    slug = re.sub(r"[^a-z0-9]+", "_", name.lower()).strip("_")
    return slug[:64] or "category"


def _withdrawn_error(call: ToolCall) -> ToolNotFoundError:
    return ToolNotFoundError(
        f"tool {call.name!r} failed repeatedly in this run and is withdrawn; use another tool"
    )


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
    """

    def __init__(
        self,
        name: str,
        description: str,
        tools: ToolPack | Iterable[BaseTool | Callable[..., Any]],
        model: ChatModel,
        *,
        tool_usage_notes: str = "",
        max_iterations: int = 5,
        tool_timeout_s: float = 30.0,
        max_result_chars: int = 4000,
        memory_size: int = 10,
        prompts: PromptSet | None = None,
        secrets: Iterable[str] | Redactor = (),
        max_tools_per_prompt: int = 20,
        max_tool_chars_per_prompt: int | None = 12_000,
        pinned: Sequence[str] = (),
        abstain_below: float | None = None,
        cache: ResultCache | None = None,
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
        self.max_result_chars = max_result_chars
        self.memory = SessionMemory(memory_size)
        self.prompts = prompts or PromptSet.load()
        self.redactor = secrets if isinstance(secrets, Redactor) else Redactor(secrets)

    def __repr__(self) -> str:
        return f"<CategoryManager {self.name!r} tools={len(self.tools)}>"

    def set_tools(self, tools: ToolPack | Iterable[BaseTool | Callable[..., Any]]) -> None:
        """Use these tools from the next LLM call on (an MCP server listed new ones).

        They get the category's cache and a fresh shortlist; a run in flight sees
        them at its next step.

        Raises:
            ConfigError: a pinned tool is not among them (the current tools stay).
        """
        pack = tools if isinstance(tools, ToolPack) else ToolPack(tools, name=self.name)
        cache = self.cache
        if cache is not None:
            wrapped = [
                t if isinstance(t, CachedTool) else CachedTool(t, cache) for t in pack.list_tools()
            ]
            pack = ToolPack(wrapped, name=pack.name)
        unknown = [p for p in self._shortlist_policy.pinned if p not in pack]
        if unknown:
            raise ConfigError(
                f"category {self.name!r}",
                [f"pinned tool {p!r} is not one of the category's tools" for p in unknown],
            )
        # The index is built here, once per tool set, and only for a category that needs one.
        self.tools, self.shortlist = pack, self._shortlist_policy.build(pack.list_tools())

    def offered_tools(
        self,
        objective: str,
        exact_input: str,
        run_withdrawn: Sequence[str],
        used: Sequence[str] = (),
    ) -> list[BaseTool]:
        """The tools offered to the LLM in one call.

        All but the withdrawn ones; in a category over its limits, the shortlist's
        best matches for the objective and input, plus pinned and already used tools.
        """
        return self._select(objective, exact_input, run_withdrawn, used).tools

    def _select(
        self, objective: str, exact_input: str, withdrawn: Sequence[str], used: Sequence[str]
    ) -> Selection:
        if self.shortlist is None:
            return Selection([t for t in self.tools.list_tools() if t.name not in withdrawn])
        return self.shortlist.select(objective, exact_input, used=used, withdrawn=withdrawn)

    def _offer(self, run: RunMemory, exact_input: str) -> Selection:
        used = list(dict.fromkeys(e.tool for e in run.executions))
        return self._select(run.objective, exact_input, run.withdrawn, used)

    def _abstained(self, run: RunMemory, selection: Selection) -> CategoryResult:
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

    @property
    def memory_size(self) -> int:
        """Past runs remembered per session."""
        return self.memory.size

    def past_runs(self, session: str | None) -> list[dict[str, str]]:
        return self.memory.past_runs(session)

    def adopt_memory(self, other: CategoryManager) -> None:
        """Take over `other`'s session memory (used when a config reload replaces it).

        With the same memory size the store is shared, so runs of `other` still in
        flight remember into it too; otherwise it is copied at the new size.
        """
        self.memory = other.memory.resized(self.memory.size)

    def _variables(
        self, run: RunMemory, exact_input: str, offered: Sequence[BaseTool], session: str | None
    ) -> dict[str, Any]:
        return {
            "category": self.name,
            "description": self.description,
            "tool_usage_notes": self.tool_usage_notes,
            "tools": [{"name": t.name, "description": t.description} for t in offered],
            "objective": run.objective,
            "exact_input": exact_input,
            "iteration": run.iteration,
            "max_iterations": self.max_iterations,
            "withdrawn": list(run.withdrawn),
            "past_runs": self.past_runs(session),
        }

    async def run(
        self,
        objective: str,
        exact_input: str,
        *,
        session: str | None = None,
        on_event: EventSink | None = None,
    ) -> CategoryResult:
        """Run the loop for one task and return its result; never raises for tool or model faults."""
        run = RunMemory(run_id=uuid.uuid4().hex[:16], objective=objective, sink=on_event)
        await run.emit(
            lambda: RunStarted(run.run_id, self.name, 0, objective=self.redactor.text(objective))
        )
        selection = self._offer(run, exact_input)
        if selection.abstained and not selection.tools:
            result = self._abstained(run, selection)
        else:
            offered = selection.tools
            variables = self._variables(run, exact_input, offered, session)
            run.messages.append(
                Message(role="system", content=self.prompts.tool_selection.render(variables))
            )
            run.messages.append(
                Message(role="user", content=f"Objective: {objective}\nExact input: {exact_input}")
            )
            result = await self._loop(run, exact_input, offered, session)
        result.usage.wall_s = round(time.perf_counter() - run.started, 6)
        if result.status in ("success", "max_iterations"):
            self.memory.remember(session, objective, result.summary)
        await run.emit(
            lambda: RunFinished(
                run.run_id,
                self.name,
                run.iteration,
                status=result.status,
                duration_s=result.usage.wall_s,
                llm_calls=result.usage.llm_calls,
                prompt_tokens=result.usage.prompt_tokens,
                completion_tokens=result.usage.completion_tokens,
            )
        )
        return result

    async def _loop(
        self, run: RunMemory, exact_input: str, offered: list[BaseTool], session: str | None
    ) -> CategoryResult:
        while True:
            schemas = [t.openai_schema() for t in offered] + CONTROL_TOOLS
            started = time.perf_counter()
            try:
                turn = await self._complete(run, schemas)
            except ModelError as exc:
                return self._result(run, "failed", self._failure_summary(exc, run))
            outcome = classify_turn(turn)
            await self._report_decision(run, outcome, turn, time.perf_counter() - started)
            match outcome:
                case Requested(missing, question):
                    result = self._result(
                        run, "insufficient_input", question or "More input is needed."
                    )
                    result.missing = self.redactor.value(missing)
                    result.question = self.redactor.text(question)
                    return result
                case Declined(reason, suggestion):
                    result = self._result(
                        run, "no_suitable_tool", reason or "No tool fits this task."
                    )
                    result.suggestion = self.redactor.text(suggestion)
                    return result
                case Answered(text) if run.iteration == 0:
                    return self._result(run, "no_suitable_tool", text or "No tool was selected.")
                case Answered(text):
                    return self._result(run, "success", text or self._done_so_far(run))
                case Calls(calls):
                    if run.iteration >= self.max_iterations:
                        return await self._summarize_at_limit(run, exact_input, session)
                    run.messages.append(turn.as_message())
                    await self._execute(run, calls)
                    offered = self._offer(run, exact_input).tools
                    variables = self._variables(run, exact_input, offered, session)
                    evaluation = self.prompts.tool_result_evaluation.render(variables)
                    run.messages.append(Message(role="user", content=evaluation))

    async def _complete(self, run: RunMemory, schemas: list[dict[str, Any]]) -> AssistantTurn:
        turn = await self.model.complete(ChatRequest(messages=list(run.messages), tools=schemas))
        run.usage.llm_calls += 1
        if turn.usage is not None:
            run.usage.prompt_tokens += turn.usage.prompt_tokens
            run.usage.completion_tokens += turn.usage.completion_tokens
        return turn

    async def _report_decision(
        self, run: RunMemory, outcome: Outcome, turn: AssistantTurn, took: float
    ) -> None:
        if run.sink is None:
            return
        tokens = (
            turn.usage.prompt_tokens if turn.usage else 0,
            turn.usage.completion_tokens if turn.usage else 0,
        )
        if run.iteration == 0:
            names = tuple(c.name for c in outcome.calls) if isinstance(outcome, Calls) else ()
            event: RunEvent = ToolsSelected(run.run_id, self.name, 1, names, took, *tokens)
        else:
            decision = "more_tools" if isinstance(outcome, Calls) else "final"
            event = Evaluated(run.run_id, self.name, run.iteration, decision, took, *tokens)
        await run.sink(event)

    async def _execute(self, run: RunMemory, calls: list[ToolCall]) -> None:
        run.iteration += 1
        # A withdrawn tool is not run again, even when the LLM still calls it.
        withdrawn = set(run.withdrawn)
        runnable = [c for c in calls if c.name not in withdrawn]
        with collect_cache_report() as cache:
            ran = iter(
                await self.tools.call_tools(
                    runnable, timeout=self.tool_timeout_s, category=self.name, run_id=run.run_id
                )
                if runnable
                else []
            )
        outcomes = [
            next(ran) if c.name not in withdrawn else ToolOutcome(c, error=_withdrawn_error(c))
            for c in calls
        ]
        run.usage.cache_hits += len(cache.hits)
        run.usage.cache_misses += len(cache.misses)
        recorded = [self._record(run, o, cached=o.call.id in cache.hits) for o in outcomes]
        for outcome, execution in zip(outcomes, recorded, strict=True):
            await run.emit(
                lambda o=outcome, e=execution: ToolFinished(  # type: ignore[misc]
                    run.run_id,
                    self.name,
                    run.iteration,
                    tool=o.call.name,
                    call_id=o.call.id,
                    ok=o.ok,
                    duration_s=o.duration_s,
                    error=e.error,
                )
            )

    def _record(self, run: RunMemory, outcome: ToolOutcome, *, cached: bool) -> Execution:
        """Add one outcome to the run's memory, secrets scrubbed, output truncated."""
        call, error = outcome.call, outcome.error
        text = self._clip(render_value(outcome.value) if error is None else str(error))
        execution = Execution(
            tool=call.name,
            arguments=self.redactor.value(call.arguments),
            ok=error is None,
            result=text if error is None else None,
            error=None if error is None else text,
            round=run.iteration,
            duration_s=round(outcome.duration_s, 6),
            cached=cached,
        )
        # Only faults of the tool itself count; bad arguments are the LLM's to fix.
        if (
            error is not None
            and error.kind in ("raised", "timeout", "unavailable")
            and call.name in self.tools
        ):
            run.count_failure(call.name)
        run.executions.append(execution)
        run.messages.append(
            Message(
                role="tool",
                tool_call_id=call.id,
                name=call.name,
                content=fence_result(call.name, execution.ok, text),
            )
        )
        return execution

    def _clip(self, text: str) -> str:
        return truncate(self.redactor.text(text), self.max_result_chars)

    async def _summarize_at_limit(
        self, run: RunMemory, exact_input: str, session: str | None
    ) -> CategoryResult:
        variables = self._variables(run, exact_input, [], session)
        run.messages.append(
            Message(role="user", content=self.prompts.max_iteration_summary.render(variables))
        )
        try:
            turn = await self._complete(run, [])
            summary = (turn.text or "").strip() or self._done_so_far(run)
        except ModelError as exc:
            summary = self._failure_summary(exc, run)
        return self._result(run, "max_iterations", summary)

    def _done_so_far(self, run: RunMemory) -> str:
        if not run.executions:
            return "No tool was run."
        parts = [f"{e.tool}: {'ok' if e.ok else 'failed'}" for e in run.executions]
        return "Tool calls so far: " + "; ".join(parts)

    def _failure_summary(self, exc: ModelError, run: RunMemory) -> str:
        return f"The category's model failed: {exc}. {self._done_so_far(run)}"

    def _result(self, run: RunMemory, status: RunStatus, summary: str) -> CategoryResult:
        return CategoryResult(
            category=self.name,
            status=status,
            summary=self.redactor.text(summary),
            executions=run.executions,
            iterations=run.iteration,
            usage=run.usage,
        )
