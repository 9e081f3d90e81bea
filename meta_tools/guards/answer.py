"""Guards of the answer stage: an answer that is no answer is replaced by what the calls
found (or by what failed), without another model call."""

from __future__ import annotations

import json
from typing import ClassVar

from ..llm.recovery import bare_name
from ..llm.types import DECLINE
from ..support.off_loop import by_size
from .base import Action, Guard, Loop, Replace, RunView, Stage
from .findings import invents_numbers, nothing_worked, recites_request, results_so_far
from .note import Note
from .stages import AnswerSeen

__all__ = [
    "AnswerGuard",
    "AnswerWithoutResults",
    "EchoedNote",
    "InventedNumbers",
    "RecitedRequest",
]


class AnswerGuard(Guard):
    """A guard of the answer stage."""

    stage: ClassVar[Stage] = "answer"

    def on_answer(self, seen: AnswerSeen) -> Action:
        return None


def _results(run: RunView) -> Replace:
    return Replace(answer=results_so_far(run), status="success")


class EchoedNote(AnswerGuard):
    name = "echoed_note"
    loops: ClassVar[frozenset[Loop]] = frozenset({"category"})
    does = (
        "Takes a reply that copies the loop's own note back (or a question for the user"
        " that does) as no answer, and cuts copied sentences from an answer."
    )
    text = (
        "{{ tool }} was not sent: its question repeats the note you were given, which is"
        " no question for the user. Ask only for a value the task needs and does not"
        " give, or call the tool that does the task, or decline."
    )

    async def own_note(self, run: RunView) -> Note:
        """The loop's last message of its own, which the model's reply answers, without
        the task it quotes; empty before the first round (the last message is the task)."""
        return await by_size(run.task_chars, lambda: _own_note(run))

    def on_answer(self, seen: AnswerSeen) -> Action:
        """A line of the prompt copied back ("call decline", "The task is still open."),
        or "decline" alone: the results are the answer; a decline without any (or after
        calls that found nothing) is one."""
        run, text = seen.run, seen.answer
        if run is None:
            return None
        if not (seen.note.echoed_by(text) or bare_name(text) == DECLINE):
            return None
        declined = DECLINE in text.lower()
        if run.has_results and not (declined and seen.found_nothing):
            return _results(run)
        return Replace(
            answer=nothing_worked(run), status="no_suitable_tool" if declined else "failed"
        )


class AnswerWithoutResults(AnswerGuard):
    name = "answer_without_results"
    loops: ClassVar[frozenset[Loop]] = frozenset({"category"})
    does = "Replaces an answer written after calls that all failed with what failed."

    def on_answer(self, seen: AnswerSeen) -> Action:
        # Small models answer a failed calculation with a made-up number.
        run = seen.run
        if run is None or run.has_results:
            return None
        return Replace(answer=nothing_worked(run), status="failed")


class RecitedRequest(AnswerGuard):
    name = "recited_request"
    loops: ClassVar[frozenset[Loop]] = frozenset({"category"})
    does = "Replaces an answer that copies the user's request with the results."

    def on_answer(self, seen: AnswerSeen) -> Action:
        run = seen.run
        if run is None or not run.has_results:
            return None
        return _results(run) if recites_request(seen.answer, run.request) else None


class InventedNumbers(AnswerGuard):
    name = "invented_numbers"
    loops: ClassVar[frozenset[Loop]] = frozenset({"category", "main"})
    does = (
        "Replaces a short answer about numbers whose numbers no call used or returned with"
        " the results."
    )

    def on_answer(self, seen: AnswerSeen) -> Action:
        """Numbers that no call used or returned ("24" where the tool gave 31 days, "5"
        where it gave 52 weeks): the results are the answer."""
        if seen.loop == "main":
            if seen.found and invents_numbers(seen.answer, seen.found):
                return Replace(answer="")
            return None
        run = seen.run
        if run is None or not run.has_results:
            return None
        said = " ".join(f"{json.dumps(e.arguments)} {e.result or ''}" for e in run.executions)
        return _results(run) if invents_numbers(seen.answer, said) else None


def _own_note(run: RunView) -> Note:
    last = next((m for m in reversed(run.messages) if m.role == "user"), None)
    if last is None or not any(m.role == "assistant" for m in run.messages):
        return Note()
    return Note.of(last.content or "", (run.objective, run.exact_input, run.request))
