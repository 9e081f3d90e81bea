"""The execute step of the category loop: run one round's tool calls and record them.

A round is the tool calls of one LLM turn. Calls that repeat one that already
succeeded get its earlier result back; the same call twice in one turn runs
once; a withdrawn tool is not run again; at most `max_calls` run and the rest
are answered with an error asking for them in the next round. Every outcome
goes into the run's state (secrets redacted, long output truncated) and is
reported as a `ToolFinished` event.
"""

from __future__ import annotations

import re
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
from .result import TRUNCATED, Execution, truncate
from .run import Run, RunState, found_nothing

__all__ = [
    "HAND_UP_CHARS",
    "RoundExecutor",
    "done_so_far",
    "hands_up",
    "in_parts",
    "in_steps",
    "nothing_worked",
    "results_so_far",
    "unfinished",
]


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


def done_so_far(state: RunState) -> str:
    """Which tools the run called and whether each call worked, for a summary without one."""
    if not state.executions:
        return "No tool was run."
    parts = [f"{e.tool}: {'ok' if e.ok else 'failed'}" for e in state.executions]
    return "Tool calls so far: " + "; ".join(parts)


def nothing_worked(state: RunState) -> str:
    """The summary of a run none of whose calls worked or found anything: each call and
    its error, or that it found nothing."""
    said = [
        f"{e.tool}: {'found nothing' if e.ok else truncate(e.error or 'failed', 300)}"
        for e in state.executions
    ]
    head = "No tool call found anything. " if state.has_results else "No tool call worked. "
    return head + ("; ".join(said) if said else "No tool was run.")


def results_so_far(state: RunState) -> str:
    """The results of the run's successful calls, one a line (else `done_so_far`)."""
    ok = [e for e in state.executions if e.ok]
    return "\n".join(dict.fromkeys(f"{e.tool}: {e.result}" for e in ok)) or done_so_far(state)


#: The longest results a category hands up as its answer without a model call (guard
#: `hand_up_result`): longer ones are summarised by the model, so a host gets a compact result.
HAND_UP_CHARS = 1500

#: A result that says the work is still going (a build "running", a job "queued"): not
#: the answer yet. A word used otherwise only costs the model call that evaluates it.
_IN_PROGRESS = re.compile(
    r"\b(running|pending|queued|in[ _-]progress|processing|waiting|not (yet )?(done|finished|complete))\b",
    re.IGNORECASE,
)
#: A task in steps ("find the config file, then read it"): the first round did one.
_STEPS = re.compile(
    r"\b(then|after that|afterwards|followed by|once (it|that|done)|finally|and also)\b",
    re.IGNORECASE,
)
#: A request in parts ("What weekday is it, and what is 365 * 24?", "Convert 4 miles to
#: km, and count the sentences in ..."): one call may have done only one of them.
_PARTS = re.compile(
    r"(,\s*and|;|\balso)\s+(what|how|which|when|where|who|tell|give|show|find|get|list"
    r"|count|convert|calculate|compute|send|check|read|look)\b",
    re.IGNORECASE,
)


def unfinished(text: str) -> bool:
    """Whether a result says the work is still going (a status to poll again)."""
    return _IN_PROGRESS.search(text) is not None


def in_steps(task: str) -> bool:
    """Whether a task says it has steps after the first ("..., then ...")."""
    return _STEPS.search(task) is not None


def in_parts(request: str) -> bool:
    """Whether a request asks for more than one thing: steps, or parts joined by a comma
    and "and" ("..., and what is ...?"). Two sentences may be one task ("Where is my
    parcel? Track it."): they are not read as parts."""
    return in_steps(request) or _PARTS.search(request) is not None


def hands_up(state: RunState) -> bool:
    """Whether the first round's results are the run's answer as they are: every call of
    it worked, each found something, none was cut, and together they are short
    (`HAND_UP_CHARS`), none says the work is still going, and the task is not one in
    steps. A failed, empty, long or unfinished result goes to the model to evaluate."""
    if state.iteration != 1 or not state.executions:
        return False
    if not all(e.ok and e.round == 1 for e in state.executions):
        return False
    if any(found_nothing(e.result, e.arguments) for e in state.executions):
        return False
    if any(TRUNCATED in (e.result or "") for e in state.executions):
        return False
    if any(unfinished(e.result or "") for e in state.executions):
        return False  # a status poll: the model decides whether to ask again
    if in_steps(f"{state.objective}\n{state.exact_input}\n{state.request}"):
        return False  # the next step may need these results
    return len(results_so_far(state)) <= HAND_UP_CHARS


def _withdrawn_error(call: ToolCall) -> ToolNotFoundError:
    return ToolNotFoundError(
        f"tool {call.name!r} failed repeatedly in this run and is withdrawn; use another tool"
    )


def _deferred_error(call: ToolCall, asked: int, cap: int) -> ToolError:
    return ToolError(
        f"not run: this turn asked for {asked} tool calls and at most {cap} run per round;"
        f" call {call.name!r} again in the next round if it is still needed"
    )
