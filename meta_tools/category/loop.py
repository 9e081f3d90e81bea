"""The category's round: what its requests hold, what its replies mean and how it ends
(`CategoryRound`, the spec `kernel.run_rounds` runs for a category).

A reply is one of four outcomes (`turns.classify_turn`): tool calls, a request for
input, a decline or an answer. Calls run as a round (`execute.RoundExecutor`),
then the model evaluates the results, or they are handed up as the answer
(guard `hand_up_result`); at the round limit the model summarises. The guards
of the answer stage decide which answer stands: the model's, or the results.
"""

from __future__ import annotations

import json
import time
from collections.abc import Sequence
from functools import partial
from typing import TYPE_CHECKING

from ..guards import GuardCounts, Guards
from ..kernel import Batch, Finish, Step, Verdict
from ..llm.recovery import bare_name
from ..llm.types import DECLINE, AssistantTurn, ChatRequest, Message
from ..support.off_loop import by_size
from .execute import hands_up, nothing_worked, results_so_far
from .fence import tool_message
from .grounding import ascreen_calls
from .note import Note
from .result import CategoryResult, RunStatus
from .run import Run, RunState
from .spread import spread_turn
from .task import recites_request
from .turns import (
    CONTROL_TOOLS,
    Answered,
    Calls,
    Declined,
    Outcome,
    Requested,
    classify_turn,
    invents_numbers,
)

if TYPE_CHECKING:
    from .manager import CategoryManager

__all__ = ["CategoryRound"]


class CategoryRound:
    """One category run as rounds: the category's side of `kernel.run_rounds`.

    It asks while the model has something to say: the round limit
    (`max_iterations`) is checked when calls come, and a reply past it gets
    the summary prompt instead of another round.
    """

    def __init__(self, manager: CategoryManager, run: Run) -> None:
        self.manager = manager
        self.run = run
        self.state: RunState = run.state
        self.guards: Guards = manager.guards
        self.counts: GuardCounts = run.state.guarded
        self._started = 0.0

    def may_ask(self) -> bool:
        return True

    def request(self) -> ChatRequest:
        self._started = time.perf_counter()
        offered = [*self.manager._definitions(self.run.tools), *CONTROL_TOOLS]
        return ChatRequest(messages=list(self.state.messages), tools=offered)

    async def complete(self, request: ChatRequest) -> AssistantTurn:
        return await self.manager._complete(self.run, request)

    async def reread(self, reply: AssistantTurn, request: ChatRequest) -> AssistantTurn:
        await self.manager._replied(self.run, request, reply, self._started)
        return reply

    def empty_counts(self) -> bool:
        return not self.state.has_results

    def add(self, messages: Sequence[Message]) -> None:
        self.state.messages.extend(messages)

    def may_run(self) -> bool:
        return self.state.iteration < self.manager.max_iterations

    async def out_of_rounds(self) -> CategoryResult:
        return await self.manager._summarize_at_limit(self.run)

    def from_results(self) -> CategoryResult:
        return self._result("success", results_so_far(self.state))

    async def decide(self, reply: AssistantTurn, request: ChatRequest) -> Step[CategoryResult]:
        """The names, calls and answer stages: the outcome the reply is, as the guards read it."""
        manager, state, guards = self.manager, self.state, self.guards
        if guards.on("spread_lists"):
            reply = spread_turn(reply, self.run.tools, manager.max_calls_per_round)
        # A call it still could not write, after the notes, is not an answer either.
        echoed = guards.on("echoed_note")
        note = await by_size(state.task_chars, partial(_own_note, state)) if echoed else Note()
        copied = guards.text("echoed_note", tool="request_input") if echoed else ""
        outcome = classify_turn(
            reply.model_copy(update={"text": None}) if reply.unread_call else reply, note, copied
        )
        if guards.on("unfounded_call"):
            told = f"{manager.description}\n{manager.tool_usage_notes}"
            outcome = await ascreen_calls(outcome, state, self.run.tools, guards, told)
        if isinstance(outcome, Answered) and echoed and not note.echoed_by(outcome.text):
            # Its own words, without the note's sentences it opened with, copied.
            outcome = Answered(note.cut_from(outcome.text))
        took = time.perf_counter() - self._started
        await self.run.emit(partial(manager._decision, self.run, outcome, reply, took))
        if isinstance(outcome, Calls):
            return Batch(reply.as_message(), outcome.calls, outcome.rejected)
        return Finish(self._ending(outcome, note))

    def _ending(self, outcome: Outcome, note: Note) -> CategoryResult:
        """The result a reply that calls no tool ends the run with."""
        state, guards, redactor = self.state, self.guards, self.manager.redactor
        # Read only where an outcome can end the run on it (the evaluation prompt reads it too).
        found_nothing = state.found_nothing if guards.on("found_nothing") else []
        match outcome:
            case Requested(missing, question):
                result = self._result("insufficient_input", question or "More input is needed.")
                result.missing = redactor.value(missing)
                result.question = redactor.text(question)
                return result
            case Declined(reason) if state.has_results and not found_nothing:
                # It did its part and no tool here does the rest: say what is left.
                # (Its calls found nothing: a decline, for the next category to try.)
                result = self.from_results()
                result.remainder = redactor.text(reason)
                return result
            case Declined(reason, suggestion):
                result = self._result("no_suitable_tool", reason or "No tool fits this task.")
                result.suggestion = redactor.text(suggestion)
                return result
            case Answered(text) if not state.executions:
                # Nothing ran: it declined. A call that was held did not happen, so an
                # answer that says it did is not the summary (status and summary agree).
                held = state.guarded["unfounded_call"] > 0
                return self._result("no_suitable_tool", _NOTHING_RAN if held else text or _NONE)
            case Answered(text) if guards.on("echoed_note") and (
                note.echoed_by(text) or bare_name(text) == DECLINE
            ):
                # A line of the prompt copied back ("call decline", "The task is still
                # open."), or "decline" alone: the results are the answer; a decline
                # without any (or after calls that found nothing) is one.
                declined = DECLINE in text.lower()
                if state.has_results and not (declined and found_nothing):
                    return self.from_results()
                status: RunStatus = "no_suitable_tool" if declined else "failed"
                return self._result(status, nothing_worked(state))
            case Answered(text) if not state.has_results:
                # No call worked. Small models answer a failed calculation with a
                # made-up number: under that guard, say what failed instead.
                if guards.on("answer_without_results") or not text:
                    return self._result("failed", nothing_worked(state))
                return self._result("failed", text)
            case Answered(text) if guards.on("recited_request") and recites_request(
                text, state.request
            ):
                # Its answer is the user's request copied back: the results are the answer.
                return self.from_results()
            case Answered(text) if guards.on("invented_numbers") and invents_numbers(
                text, _calls_and_results(state)
            ):
                # Numbers that no call used or returned ("24" where the tool gave 31
                # days, "5" where it gave 52 weeks): the results are the answer.
                return self.from_results()
            case Answered(text):
                return self._result("success", text or results_so_far(state))
        raise AssertionError(f"unhandled outcome {outcome!r}")  # pragma: no cover

    async def execute(self, batch: Batch) -> bool:
        state = self.state
        state.iteration += 1
        repeats = await self.manager._executor().execute(self.run, batch.calls)
        state.messages.extend(tool_message(c, False, why) for c, why in batch.rejected)
        return repeats

    async def after_round(self, batch: Batch, verdict: Verdict) -> CategoryResult | None:
        """After a round: its results as the answer (guard `hand_up_result`), or the
        evaluation prompt for the model's next reply."""
        if verdict == "stop":
            return None
        if self.guards.on("hand_up_result") and not batch.rejected and hands_up(self.state):
            # The results answer as they are: a small model's restatement
            # costs a call and adds nothing (or numbers nobody found).
            return self.from_results()
        self.manager.offer(self.run)
        evaluation = self.manager._render(self.manager.prompts.tool_result_evaluation, self.run)
        self.state.messages.append(Message(role="user", content=evaluation))
        return None

    def _result(self, status: RunStatus, summary: str) -> CategoryResult:
        return self.manager._result(self.run, status, summary)


#: The summary of a run whose calls were all held: none of them happened.
_NOTHING_RAN = (
    "No tool was run: the calls made were held, because the task gives none of their values."
)
_NONE = "No tool was selected."


def _own_note(state: RunState) -> Note:
    """The loop's last message of its own, which the model's reply answers, without the
    task it quotes; empty before the first round (the last message is the task)."""
    last = next((m for m in reversed(state.messages) if m.role == "user"), None)
    if last is None or not any(m.role == "assistant" for m in state.messages):
        return Note()
    return Note.of(last.content or "", (state.objective, state.exact_input, state.request))


def _calls_and_results(state: RunState) -> str:
    """The run's calls (their arguments) and what they returned, as text."""
    return " ".join(f"{json.dumps(e.arguments)} {e.result or ''}" for e in state.executions)
