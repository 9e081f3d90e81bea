"""Level 2: `CategoryManager`, a bounded select → execute → evaluate → summarize loop.

Each `run` has its own memory (messages, executions, failure counts), so
concurrent runs never see each other. The category keeps only a bounded
memory of past runs per session, shown to its LLM as context.
"""

from __future__ import annotations

import json
import re
import time
import uuid
from collections import Counter, OrderedDict, deque
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass, field
from typing import Any

from pydantic_core import to_jsonable_python

from .cache import CachedTool, ResultCache, collect_cache_report
from .events import (
    Evaluated,
    EventSink,
    RunEvent,
    RunFinished,
    RunStarted,
    ToolFinished,
    ToolsSelected,
)
from .exceptions import ConfigError, ModelError
from .llm.base import ChatModel
from .llm.types import AssistantTurn, ChatRequest, Message, ToolCall
from .prompts import PromptSet
from .redaction import Redactor
from .result import CategoryResult, Execution, RunStatus, RunUsage, truncate
from .shortlist import Selection, Shortlist
from .tools.base import BaseTool
from .tools.pack import ToolOutcome, ToolPack

__all__ = ["CONTROL_TOOLS", "CategoryManager", "slugify"]

_FAILURES_BEFORE_WITHDRAWAL = 2
_MAX_SESSIONS = 256

CONTROL_TOOLS: list[dict[str, Any]] = [
    {
        "type": "function",
        "function": {
            "name": "request_input",
            "description": "Ask the main agent for missing input instead of calling a tool.",
            "parameters": {
                "type": "object",
                "properties": {
                    "missing": {
                        "type": "array",
                        "items": {"type": "string"},
                        "description": "The values that are missing or ambiguous.",
                    },
                    "question": {
                        "type": "string",
                        "description": "One question that would resolve it.",
                    },
                },
                "required": ["missing", "question"],
            },
        },
    },
    {
        "type": "function",
        "function": {
            "name": "decline",
            "description": "Say that no available tool can do this task.",
            "parameters": {
                "type": "object",
                "properties": {
                    "reason": {"type": "string", "description": "Why no tool fits."},
                    "suggestion": {"type": "string", "description": "What could be done instead."},
                },
                "required": ["reason", "suggestion"],
            },
        },
    },
]
_CONTROL_NAMES = frozenset(("request_input", "decline"))


def slugify(name: str) -> str:
    """`Programming & Tech Support` -> `programming_tech_support` (a valid function name)."""
    slug = re.sub(r"[^a-z0-9]+", "_", name.lower()).strip("_")
    return slug[:64] or "category"


# The outcomes of one LLM turn: the loop is a `match` over these.
@dataclass(frozen=True, slots=True)
class _Requested:
    missing: list[str]
    question: str


@dataclass(frozen=True, slots=True)
class _Declined:
    reason: str
    suggestion: str


@dataclass(frozen=True, slots=True)
class _Answered:
    text: str


@dataclass(frozen=True, slots=True)
class _Calls:
    calls: list[ToolCall]


_Outcome = _Requested | _Declined | _Answered | _Calls


def _control_arguments(call: ToolCall) -> dict[str, Any]:
    args: Any = call.arguments
    if isinstance(args, str):
        try:
            args = json.loads(args)
        except json.JSONDecodeError:
            args = {"question": args, "reason": args}
    return args if isinstance(args, dict) else {}


def _classify(turn: AssistantTurn) -> _Outcome:
    for call in turn.tool_calls:
        if call.name in _CONTROL_NAMES:
            args = _control_arguments(call)
            if call.name == "request_input":
                missing = args.get("missing", [])
                missing = [str(m) for m in missing] if isinstance(missing, list) else [str(missing)]
                return _Requested(missing, str(args.get("question", "")))
            return _Declined(str(args.get("reason", "")), str(args.get("suggestion", "")))
    if turn.tool_calls:
        return _Calls(list(turn.tool_calls))
    return _Answered((turn.text or "").strip())


def _shown(value: Any) -> str:
    """`repr` for values JSON cannot hold; a `__repr__` that raises still gives a description."""
    try:
        return repr(value)
    except Exception as exc:
        return f"<{type(value).__name__} object (repr failed: {type(exc).__name__})>"


def render_value(value: Any) -> str:
    """Any tool result as text: strings as they are, everything else as JSON.

    Never raises: bytes are decoded, and a value JSON cannot express (a cycle,
    undecodable bytes inside a container) is described instead.
    """
    if isinstance(value, str):
        return value
    if isinstance(value, (bytes, bytearray)):
        return bytes(value).decode("utf-8", errors="replace")
    try:
        return json.dumps(to_jsonable_python(value, fallback=_shown), ensure_ascii=False)
    except (ValueError, TypeError, RecursionError) as exc:
        return f"<a {type(value).__name__} that cannot be shown as JSON: {exc}>"


_CLOSING_TAG = re.compile(r"<\s*/\s*tool_result", re.IGNORECASE)


def _fence(tool: str, ok: bool, text: str) -> str:
    """Wrap a tool result as data; no closing tag inside it (any case or spacing) can end the fence."""
    body = _CLOSING_TAG.sub("<\\\\/tool_result", text)
    name = re.sub(r"[^A-Za-z0-9_.-]", "_", tool)
    return f'<tool_result tool="{name}" status="{"ok" if ok else "error"}">\n{body}\n</tool_result>'


@dataclass
class _Run:
    """The private memory of one invocation."""

    run_id: str
    objective: str
    messages: list[Message]
    sink: EventSink | None
    category: str
    started: float = field(default_factory=time.perf_counter)
    executions: list[Execution] = field(default_factory=list)
    failures: Counter[str] = field(default_factory=Counter)
    withdrawn: list[str] = field(default_factory=list)
    usage: RunUsage = field(default_factory=RunUsage)
    iteration: int = 0

    async def emit(self, make: Callable[[], RunEvent]) -> None:
        if self.sink is not None:
            await self.sink(make())


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
        secrets: values (API keys, tokens) scrubbed from results, errors and events.
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
        secrets: Iterable[str] = (),
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
        self._shortlist_options = (
            max_tools_per_prompt,
            max_tool_chars_per_prompt,
            tuple(pinned),
            abstain_below,
        )
        self.tools = ToolPack([], name=name)
        self.shortlist: Shortlist | None = None
        self.set_tools(tools)
        self.model = model
        self.tool_usage_notes = tool_usage_notes
        self.max_iterations = max_iterations
        self.tool_timeout_s = tool_timeout_s
        self.max_result_chars = max_result_chars
        self.memory_size = memory_size
        self.prompts = prompts or PromptSet.load()
        self.redactor = Redactor(secrets)
        self._sessions: OrderedDict[str, deque[dict[str, str]]] = OrderedDict()

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
        previous, self.tools = self.tools, pack
        try:
            self.shortlist = self._build_shortlist(*self._shortlist_options)
        except ConfigError:
            self.tools = previous
            raise

    def _build_shortlist(
        self,
        max_tools: int,
        max_chars: int | None,
        pinned: Sequence[str],
        abstain_below: float | None,
    ) -> Shortlist | None:
        """The index is built once, here, and only for a category that needs one."""
        listed = self.tools.list_tools()
        unknown = [p for p in pinned if p not in self.tools]
        if unknown:
            raise ConfigError(
                f"category {self.name!r}",
                [f"pinned tool {p!r} is not one of the category's tools" for p in unknown],
            )
        if abstain_below is None and not Shortlist.needed(
            listed, max_tools=max_tools, max_chars=max_chars
        ):
            return None
        return Shortlist(
            listed,
            max_tools=max_tools,
            max_chars=max_chars,
            pinned=pinned,
            abstain_below=abstain_below,
        )

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
        if self.shortlist is None:
            return [t for t in self.tools.list_tools() if t.name not in run_withdrawn]
        return self.shortlist.select(
            objective, exact_input, used=used, withdrawn=run_withdrawn
        ).tools

    def _offer(self, run: _Run, exact_input: str) -> Selection:
        if self.shortlist is None:
            return Selection([t for t in self.tools.list_tools() if t.name not in run.withdrawn])
        used = list(dict.fromkeys(e.tool for e in run.executions))
        return self.shortlist.select(run.objective, exact_input, used=used, withdrawn=run.withdrawn)

    def _abstained(self, run: _Run, selection: Selection) -> CategoryResult:
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

    def past_runs(self, session: str | None) -> list[dict[str, str]]:
        return list(self._sessions.get(session or "", ()))

    def adopt_memory(self, other: CategoryManager) -> None:
        """Take over `other`'s session memory (used when a config reload replaces it).

        With the same memory size the store is shared, so runs of `other` still in
        flight remember into it too; otherwise it is copied at the new size.
        """
        if other.memory_size == self.memory_size:
            self._sessions = other._sessions
            return
        self._sessions = OrderedDict(
            (key, deque(runs, maxlen=self.memory_size)) for key, runs in other._sessions.items()
        )

    def _remember(self, session: str | None, objective: str, summary: str) -> None:
        if self.memory_size == 0:
            return
        key = session or ""
        runs = self._sessions.get(key)
        if runs is None:
            runs = self._sessions[key] = deque(maxlen=self.memory_size)
            while len(self._sessions) > _MAX_SESSIONS:
                self._sessions.popitem(last=False)
        self._sessions.move_to_end(key)
        runs.append({"objective": truncate(objective, 200), "summary": truncate(summary, 300)})

    def _variables(
        self, run: _Run, exact_input: str, offered: Sequence[BaseTool], session: str | None
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
        run = _Run(
            run_id=uuid.uuid4().hex[:16],
            objective=objective,
            messages=[],
            sink=on_event,
            category=self.name,
        )
        await run.emit(lambda: RunStarted(run.run_id, self.name, 0, objective=objective))
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
            self._remember(session, objective, result.summary)
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
        self, run: _Run, exact_input: str, offered: list[BaseTool], session: str | None
    ) -> CategoryResult:
        while True:
            schemas = [t.openai_schema() for t in offered] + CONTROL_TOOLS
            started = time.perf_counter()
            try:
                turn = await self._complete(run, schemas)
            except ModelError as exc:
                return self._result(run, "failed", self._failure_summary(exc, run))
            outcome = _classify(turn)
            await self._report_decision(run, outcome, turn, time.perf_counter() - started)
            match outcome:
                case _Requested(missing, question):
                    result = self._result(
                        run, "insufficient_input", question or "More input is needed."
                    )
                    result.missing = self.redactor.value(missing)
                    result.question = self.redactor.text(question)
                    return result
                case _Declined(reason, suggestion):
                    result = self._result(
                        run, "no_suitable_tool", reason or "No tool fits this task."
                    )
                    result.suggestion = self.redactor.text(suggestion)
                    return result
                case _Answered(text) if run.iteration == 0:
                    return self._result(run, "no_suitable_tool", text or "No tool was selected.")
                case _Answered(text):
                    return self._result(run, "success", text or self._done_so_far(run))
                case _Calls(calls):
                    if run.iteration >= self.max_iterations:
                        return await self._summarize_at_limit(run, exact_input, session)
                    run.messages.append(turn.as_message())
                    await self._execute(run, calls)
                    offered = self._offer(run, exact_input).tools
                    variables = self._variables(run, exact_input, offered, session)
                    evaluation = self.prompts.tool_result_evaluation.render(variables)
                    run.messages.append(Message(role="user", content=evaluation))

    async def _complete(self, run: _Run, schemas: list[dict[str, Any]]) -> AssistantTurn:
        turn = await self.model.complete(ChatRequest(messages=list(run.messages), tools=schemas))
        run.usage.llm_calls += 1
        if turn.usage is not None:
            run.usage.prompt_tokens += turn.usage.prompt_tokens
            run.usage.completion_tokens += turn.usage.completion_tokens
        return turn

    async def _report_decision(
        self, run: _Run, outcome: _Outcome, turn: AssistantTurn, took: float
    ) -> None:
        if run.sink is None:
            return
        tokens = (
            turn.usage.prompt_tokens if turn.usage else 0,
            turn.usage.completion_tokens if turn.usage else 0,
        )
        if run.iteration == 0:
            names = tuple(c.name for c in outcome.calls) if isinstance(outcome, _Calls) else ()
            event: RunEvent = ToolsSelected(run.run_id, self.name, 1, names, took, *tokens)
        else:
            decision = "more_tools" if isinstance(outcome, _Calls) else "final"
            event = Evaluated(run.run_id, self.name, run.iteration, decision, took, *tokens)
        await run.sink(event)

    async def _execute(self, run: _Run, calls: list[ToolCall]) -> None:
        run.iteration += 1
        with collect_cache_report() as cache:
            outcomes = await self.tools.call_tools(
                calls, timeout=self.tool_timeout_s, category=self.name, run_id=run.run_id
            )
        recorded = [self._record(run, outcome) for outcome in outcomes]
        if cache.hits or cache.misses:
            run.usage.cache_hits += len(cache.hits)
            run.usage.cache_misses += len(cache.misses)
            for outcome, execution in zip(outcomes, recorded, strict=True):
                execution.cached = outcome.call.id in cache.hits
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

    def _record(self, run: _Run, outcome: ToolOutcome) -> Execution:
        """Add one outcome to the run's memory, secrets scrubbed, output truncated."""
        call = outcome.call
        arguments = self.redactor.value(call.arguments)
        if outcome.error is None:
            text = self._clip(render_value(outcome.value))
            execution = Execution(
                tool=call.name,
                arguments=arguments,
                ok=True,
                result=text,
                round=run.iteration,
                duration_s=round(outcome.duration_s, 6),
            )
        else:
            text = self._clip(str(outcome.error))
            execution = Execution(
                tool=call.name,
                arguments=arguments,
                ok=False,
                error=text,
                round=run.iteration,
                duration_s=round(outcome.duration_s, 6),
            )
            if (
                outcome.error.kind in ("raised", "timeout", "unavailable")
                and call.name in self.tools
            ):
                run.failures[call.name] += 1
                if (
                    run.failures[call.name] >= _FAILURES_BEFORE_WITHDRAWAL
                    and call.name not in run.withdrawn
                ):
                    run.withdrawn.append(call.name)
        run.executions.append(execution)
        run.messages.append(
            Message(
                role="tool",
                tool_call_id=call.id,
                name=call.name,
                content=_fence(call.name, outcome.ok, text),
            )
        )
        return execution

    def _clip(self, text: str) -> str:
        return truncate(self.redactor.text(text), self.max_result_chars)

    async def _summarize_at_limit(
        self, run: _Run, exact_input: str, session: str | None
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

    def _done_so_far(self, run: _Run) -> str:
        if not run.executions:
            return "No tool was run."
        parts = [f"{e.tool}: {'ok' if e.ok else 'failed'}" for e in run.executions]
        return "Tool calls so far: " + "; ".join(parts)

    def _failure_summary(self, exc: ModelError, run: _Run) -> str:
        return f"The category's model failed: {exc}. {self._done_so_far(run)}"

    def _result(self, run: _Run, status: RunStatus, summary: str) -> CategoryResult:
        return CategoryResult(
            category=self.name,
            status=status,
            summary=self.redactor.text(summary),
            executions=run.executions,
            iterations=run.iteration,
            usage=run.usage,
        )
