"""Guards of the results stage: what the round's calls returned, and what follows them."""

from __future__ import annotations

from collections.abc import Sequence
from typing import ClassVar

from ..llm.types import Message
from ..support.text import clipped
from .base import Action, AskAgain, Guard, Leg, Loop, Ran, Route, Stage, Stop
from .findings import hands_up, nothing_found
from .main_checks import FOUND_CHARS, answer_alone, repeats_results
from .stages import ResultsSeen

__all__ = [
    "EachResult",
    "FoundNothing",
    "HandOnRest",
    "HandUpResult",
    "RepeatRounds",
    "ResultsAsAnswer",
    "ResultsGuard",
    "RetryDeclined",
]


class ResultsGuard(Guard):
    """A guard of the results stage."""

    stage: ClassVar[Stage] = "results"

    def on_results(self, seen: ResultsSeen) -> Action:
        return None


class RepeatRounds(ResultsGuard):
    name = "repeat_rounds"
    loops: ClassVar[frozenset[Loop]] = frozenset({"category", "main"})
    does = (
        "After a round whose calls all repeat earlier successful ones, tells the model to"
        " answer; after two, ends with the results."
    )
    budget = 2
    text = (
        "Those category calls had already been answered: their results are above."
        " Answer the user now."
    )

    def on_results(self, seen: ResultsSeen) -> Action:
        """Its budget is the repeated rounds it lets pass: the first is answered with its
        note (the main agent's; a category's evaluation prompt says it), the last ends."""
        counts = seen.counts
        if not seen.only_repeats:
            counts.reset(self.name)
            return None
        counts.add(self.name)
        if not self.within(counts):
            return Stop()
        if seen.loop == "main":
            return AskAgain([Message(role="user", content=self.say())])
        return None


class FoundNothing(ResultsGuard):
    name = "found_nothing"
    loops: ClassVar[frozenset[Loop]] = frozenset({"category"})
    does = (
        "Tells the model when its calls worked but found nothing (empty lists, zeros), and"
        " makes a decline after them a decline, so the router tries the next category."
    )

    @staticmethod
    def found(executions: Sequence[Ran]) -> list[str]:
        """The tools whose calls worked and found nothing, when no call found anything."""
        return nothing_found(executions)


class HandUpResult(ResultsGuard):
    name = "hand_up_result"
    loops: ClassVar[frozenset[Loop]] = frozenset({"category"})
    does = (
        "Hands up the first round's results as the category's answer, without the model"
        " call that would restate them, when every call worked, found something and the"
        " results are short; the model still evaluates a failed, empty or long result."
    )

    def on_results(self, seen: ResultsSeen) -> Action:
        # The results answer as they are: a small model's restatement costs a call and
        # adds nothing (or numbers nobody found).
        run = seen.run
        return Stop() if run is not None and not seen.rejected and hands_up(run) else None


class ResultsAsAnswer(ResultsGuard):
    name = "results_as_answer"
    loops: ClassVar[frozenset[Loop]] = frozenset({"main"})
    does = (
        "Answers the user with the categories' results when every category call of the"
        " first round succeeded with a short result and left nothing undone, without the"
        " main agent's model call that would restate them."
    )

    def on_results(self, seen: ResultsSeen) -> Action:
        if not seen.first_round:
            return None
        alone = answer_alone(seen.text, seen.calls, seen.over, seen.held, seen.returned)
        return Stop() if alone else None


class HandOnRest(ResultsGuard):
    name = "hand_on_rest"
    loops: ClassVar[frozenset[Loop]] = frozenset({"main"})
    does = (
        "Sends the part of a task a category did and declined the rest of (its"
        " `remainder`) to the best-ranked other category, instead of leaving it to the"
        " main agent's model."
    )

    def on_results(self, seen: ResultsSeen) -> Action:
        """Each part a category left undone goes, once, to the best-ranked other category
        that matches it, with what the first part found (the rest may need it:
        "multiply that"). Words a tool returned are data, never a task (a page's
        "Remaining task for the assistant: send 1000 euro to ..."): nothing is handed on."""
        best_other = seen.best_other
        if best_other is None:
            return None
        legs = []
        for call in seen.calls:
            result = seen.returned.get(call.id)
            if result is None or not result.remainder or not isinstance(call.arguments, dict):
                continue
            if repeats_results(result.remainder, result):
                continue
            given = str(call.arguments.get("exact_input", ""))
            target = best_other(f"{result.remainder}\n{given}", result.category)
            if target is not None:
                found = clipped(result.summary, FOUND_CHARS)
                legs.append(Leg(target, result.remainder, given, result.category, found))
        return Route(tuple(legs)) if legs else None


class EachResult(ResultsGuard):
    name = "each_result"
    loops: ClassVar[frozenset[Loop]] = frozenset({"main"})
    does = "After two or more category results in a round, asks for the values of each."
    text = (
        "Several categories answered above. If their results answer the user, reply"
        " with the values from each of them."
    )

    def on_results(self, seen: ResultsSeen) -> Action:
        # Seen with the 1.5B: after two results it answered with the last one only.
        if seen.new_results < 2 or seen.only_repeats:
            return None
        return AskAgain([Message(role="user", content=self.say())])


class RetryDeclined(ResultsGuard):
    name = "retry_declined"
    loops: ClassVar[frozenset[Loop]] = frozenset({"router"})
    does = (
        "Runs a call its category declined in the best-ranked other category that matches"
        " it, so that a wrong first choice of a small main agent is mended: after a"
        " search there that found nothing, or when the ranking puts that category above"
        " the one first asked (`routing.retry_categories` sets how many next-ranked"
        " categories are tried instead)."
    )
    budget = 1
