"""The category's round: what its requests hold, what its replies mean and how it ends
(`CategoryRound`, the spec `kernel.run_rounds` runs for a category).

A reply is one of four outcomes (`turns.classify_turn`): tool calls, a request for
input, a decline or an answer. Calls run as a round (`execute.RoundExecutor`),
then the model evaluates the results, or they are handed up as the answer
(guard `hand_up_result`); at the round limit the model summarises. The guards
of the answer stage decide which answer stands: the model's, or the results.
"""

from __future__ import annotations

import time
from collections.abc import Sequence
from functools import partial
from typing import TYPE_CHECKING, cast

from ..guards import (
    AfterRound,
    AnswerSeen,
    CallsSeen,
    Guards,
    Hold,
    NamesSeen,
    Replace,
    ReplySeen,
    ResultsSeen,
    Route,
    Stop,
)
from ..guards.calls import UnfoundedCall
from ..guards.findings import nothing_worked, results_so_far
from ..guards.note import Note
from ..kernel import Again, Batch, Finish, Step
from ..llm.types import AssistantTurn, ChatRequest, Message, ToolDefinition
from .fence import tool_message
from .result import CategoryResult, RunStatus
from .run import Run, RunState
from .turns import (
    CONTROL_TOOLS,
    Answered,
    Calls,
    Declined,
    Outcome,
    Requested,
    classify_turn,
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
        self._started = 0.0
        self._note = Note()

    async def opening(self) -> None:
        return None  # a category's model is always asked first

    def may_ask(self) -> bool:
        return True

    def request(self) -> ChatRequest:
        self._started = time.perf_counter()
        offered = [*self.manager._definitions(self.run.tools), *CONTROL_TOOLS]
        return ChatRequest(messages=list(self.state.messages), tools=offered)

    async def complete(self, request: ChatRequest) -> AssistantTurn:
        return await self.manager._complete(self.run, request)

    def reply_seen(self, reply: AssistantTurn, request: ChatRequest) -> ReplySeen:
        state, manager = self.state, self.manager

        def unoffered() -> dict[str, ToolDefinition]:
            shut = {*state.offered, *state.withdrawn}
            others = [t for t in manager.tools.list_tools() if t.name not in shut]
            return {d.name: d for d in manager._definitions(others)}

        return ReplySeen(
            "category",
            reply,
            request,
            state.guarded,
            empty_counts=not state.has_results,
            unoffered=unoffered,
        )

    async def replied(self, reply: AssistantTurn, request: ChatRequest) -> None:
        await self.manager._replied(self.run, request, reply, self._started)

    def add(self, messages: Sequence[Message]) -> None:
        self.state.messages.extend(messages)

    async def route(self, route: Route) -> Again | None:
        return None  # no guard of a category routes

    def may_run(self) -> bool:
        return self.state.iteration < self.manager.max_iterations

    async def out_of_rounds(self) -> CategoryResult:
        return await self.manager._summarize_at_limit(self.run)

    def from_results(self) -> CategoryResult:
        return self._result("success", results_so_far(self.state))

    async def decide(self, reply: AssistantTurn, request: ChatRequest) -> Step[CategoryResult]:
        """The names, calls and answer stages: the outcome the reply is, as the guards read it."""
        manager, state, guards, run = self.manager, self.state, self.guards, self.run
        if guards.acts_at("names"):
            seen = NamesSeen("category", reply, run.tools, manager.max_calls_per_round)
            reply = guards.on_names(seen)
        # A call it still could not write, after the notes, is not an answer either.
        if guards.acts_at("answer"):
            note, copied = await guards.own_note(state)
            self._note = note
        else:
            note, copied = self._note, ""
        outcome = classify_turn(
            reply.model_copy(update={"text": None}) if reply.unread_call else reply, note, copied
        )
        if isinstance(outcome, Calls) and outcome.calls and guards.acts_at("calls"):
            told = f"{manager.description}\n{manager.tool_usage_notes}"
            calls_seen = CallsSeen("category", outcome.calls, state.guarded, state, run.tools, told)
            action = await guards.on_calls(calls_seen)
            if isinstance(action, Stop):
                outcome = Declined(action.declined, "")
            elif isinstance(action, Hold):
                kept = [c for c in outcome.calls if c.id not in action.notes]
                held = [(c, action.notes[c.id]) for c in outcome.calls if c.id in action.notes]
                outcome = Calls(kept, outcome.rejected + held)
        if isinstance(outcome, Answered) and copied and not note.echoed_by(outcome.text):
            # Its own words, without the note's sentences it opened with, copied.
            outcome = Answered(note.cut_from(outcome.text))
        took = time.perf_counter() - self._started
        await run.emit(partial(manager._decision, run, outcome, reply, took))
        if isinstance(outcome, Calls):
            return Batch(reply.as_message(), outcome.calls, outcome.rejected)
        return Finish(self._ending(outcome))

    def _ending(self, outcome: Outcome) -> CategoryResult:
        """The result a reply that calls no tool ends the run with: the model's, or the
        one a guard of the answer stage puts in its place."""
        state, guards, redactor = self.state, self.guards, self.manager.redactor
        match outcome:
            case Requested(missing, question):
                result = self._result("insufficient_input", question or "More input is needed.")
                result.missing = redactor.value(missing)
                result.question = redactor.text(question)
                return result
            case Declined(reason, suggestion):
                # It did its part and no tool here does the rest: say what is left. Its
                # calls found nothing (guard `found_nothing`): a decline, for the next
                # category to try.
                if state.has_results and not guards.found_nothing(state.executions):
                    result = self.from_results()
                    result.remainder = redactor.text(reason)
                    return result
                result = self._result("no_suitable_tool", reason or "No tool fits this task.")
                result.suggestion = redactor.text(suggestion)
                return result
            case Answered(text) if not state.executions:
                # Nothing ran: it declined. A call that was held did not happen, so an
                # answer that says it did is not the summary (status and summary agree).
                held = state.guarded[UnfoundedCall.name] > 0
                return self._result("no_suitable_tool", _NOTHING_RAN if held else text or _NONE)
            case Answered(text):
                if guards.acts_at("answer"):
                    seen = AnswerSeen(
                        "category", text, state, self._note, guards.found_nothing(state.executions)
                    )
                    action = guards.on_answer(seen)
                    if isinstance(action, Replace) and action.answer is not None:
                        status = cast(RunStatus, action.status or "success")
                        return self._result(status, action.answer)
                if not state.has_results:
                    return self._result("failed", text or nothing_worked(state))
                return self._result("success", text or results_so_far(state))
        raise AssertionError(f"unhandled outcome {outcome!r}")  # pragma: no cover

    async def execute(self, batch: Batch) -> bool:
        state = self.state
        state.iteration += 1
        repeats = await self.manager._executor().execute(self.run, batch.calls)
        state.messages.extend(tool_message(c, False, why) for c, why in batch.rejected)
        return repeats

    def results_seen(self, batch: Batch, only_repeats: bool) -> ResultsSeen:
        return ResultsSeen(
            "category", self.state.guarded, only_repeats, self.state, rejected=batch.rejected
        )

    async def after_round(self, batch: Batch, after: AfterRound) -> CategoryResult | None:
        """After a round: its results as the answer (a guard stopped the run), or the
        evaluation prompt for the model's next reply."""
        if after.stop:
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
