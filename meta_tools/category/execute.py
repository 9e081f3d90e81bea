"""The execute step of the category loop: run one round's tool calls and record them.

A round is the tool calls of one LLM turn. Calls that repeat one that already
succeeded get its earlier result back; the same call twice in one turn runs
once; a withdrawn tool is not run again; at most `max_calls` run and the rest
are answered with an error asking for them in the next round. Every outcome
goes into the run's state (secrets redacted, long output truncated) and is
reported as a `ToolFinished` event.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from functools import partial

from ..exceptions import ToolError, ToolNotFoundError
from ..kernel.batch import call_key, once, only_repeats
from ..llm.types import ToolCall
from ..support.redaction import Redactor
from ..tools.pack import ToolOutcome, ToolPack
from .events import ToolFinished
from .fence import render_value, tool_message
from .result import Execution, truncate
from .run import Run, RunState

__all__ = ["RoundExecutor"]


@dataclass(frozen=True, slots=True)
class RoundExecutor:
    """Runs one round's tool calls for a category and records them in the run's state.

    Built for each round from the category's current tools and limits, which
    may change between rounds (an MCP server lists new tools, a user sets a limit).

    Args:
        category: the category's name, for the tool calls and the events.
        tools: the tools the calls are run against.
        redactor: scrubs secrets from arguments, results and errors.
        max_calls: calls run from one round; the rest are answered, not started.
        timeout_s: timeout of each tool call.
        max_result_chars: longer outputs are truncated with a marker.
    """

    category: str
    tools: ToolPack
    redactor: Redactor
    max_calls: int
    timeout_s: float
    max_result_chars: int

    async def execute(self, run: Run, calls: Sequence[ToolCall]) -> bool:
        """Run `calls` as the run's current round.

        A call that repeats one of an earlier round runs again: a status poll must see
        the new status (a cached tool answers from its cache, as its config allows).

        Returns:
            True when every call repeated one that already succeeded (guard `repeat_rounds`).
        """
        state = run.state
        keys = {c.id: call_key(c.name, self.redactor.value(c.arguments)) for c in calls}
        earlier = {call_key(e.tool, e.arguments) for e in state.executions if e.ok}
        repeats = only_repeats(keys.values(), earlier)
        # The same call twice in one turn runs once; the copies get its result.
        copies = once(calls, lambda c: keys[c.id])
        unique = [c for c, original in copies if c is original]
        if not unique:
            return repeats
        outcomes = await self._outcomes(state, unique)
        recorded = [self._record(state, o) for o in outcomes]
        by_call = {c.id: e for c, e in zip(unique, recorded, strict=True)}
        for copy, original in copies:
            if copy is not original:
                done = by_call[original.id]
                state.messages.append(tool_message(copy, done.ok, done.result or done.error or ""))
        for outcome, execution in zip(outcomes, recorded, strict=True):
            await run.emit(
                partial(
                    ToolFinished,
                    state.run_id,
                    self.category,
                    state.iteration,
                    tool=outcome.call.name,
                    call_id=outcome.call.id,
                    ok=outcome.ok,
                    duration_s=outcome.duration_s,
                    error=execution.error,
                    arguments=execution.arguments,
                    result=execution.result,
                )
            )
        return repeats

    async def _outcomes(self, state: RunState, calls: list[ToolCall]) -> list[ToolOutcome]:
        """One outcome per call, in order: run, or answered with why it was not run."""
        # A withdrawn tool is not run again, even when the LLM still calls it.
        withdrawn = set(state.withdrawn)
        chosen = [i for i, c in enumerate(calls) if c.name not in withdrawn][: self.max_calls]
        runnable = [calls[i] for i in chosen]
        ran = iter(
            await self.tools.call_tools(
                runnable, timeout=self.timeout_s, category=self.category, run_id=state.run_id
            )
            if runnable
            else []
        )
        outcomes = [
            next(ran)
            if i in chosen
            else ToolOutcome(c, error=_withdrawn_error(c))
            if c.name in withdrawn
            else ToolOutcome(c, error=_deferred_error(c, len(calls), self.max_calls))
            for i, c in enumerate(calls)
        ]
        state.usage.cache_hits += sum(o.cached is True for o in outcomes)
        state.usage.cache_misses += sum(o.cached is False for o in outcomes)
        return outcomes

    def _record(self, state: RunState, outcome: ToolOutcome) -> Execution:
        """Add one outcome to the run's state, secrets scrubbed, output truncated."""
        call, error = outcome.call, outcome.error
        value = self.redactor.value(outcome.value)  # before encoding: JSON escapes hide secrets
        raw = render_value(value) if error is None else str(error)
        text = truncate(self.redactor.text(raw), self.max_result_chars)
        execution = Execution(
            tool=call.name,
            arguments=self.redactor.value(call.arguments),
            ok=error is None,
            result=text if error is None else None,
            error=None if error is None else text,
            round=state.iteration,
            duration_s=round(outcome.duration_s, 6),
            cached=outcome.cached is True,
        )
        # Only faults of the tool itself count; bad arguments are the LLM's to fix.
        if (
            error is not None
            and error.kind in ("raised", "timeout", "unavailable")
            and call.name in self.tools
        ):
            state.count_failure(call.name)
        state.executions.append(execution)
        state.messages.append(tool_message(call, execution.ok, text))
        return execution


def _withdrawn_error(call: ToolCall) -> ToolNotFoundError:
    return ToolNotFoundError(
        f"tool {call.name!r} failed repeatedly in this run and is withdrawn; use another tool"
    )


def _deferred_error(call: ToolCall, asked: int, cap: int) -> ToolError:
    return ToolError(
        f"not run: this turn asked for {asked} tool calls and at most {cap} run per round;"
        f" call {call.name!r} again in the next round if it is still needed"
    )
