"""Guards of the calls stage: calls held before they run, with a note that says why."""

from __future__ import annotations

from functools import partial
from typing import ClassVar

from ..support.off_loop import by_size
from ..support.text import clipped
from .base import Action, Guard, Hold, Loop, Stage, Stop
from .grounding import guessed_calls, shown, unfounded_numbers
from .main_checks import written_input
from .stages import CallsSeen

__all__ = ["CallsGuard", "MadeUpInput", "RoundCap", "UnfoundedCall"]


class CallsGuard(Guard):
    """A guard of the calls stage."""

    stage: ClassVar[Stage] = "calls"

    async def on_calls(self, seen: CallsSeen) -> Action:
        raise NotImplementedError


class UnfoundedCall(CallsGuard):
    name = "unfounded_call"
    loops: ClassVar[frozenset[Loop]] = frozenset({"category"})
    does = (
        "Holds a call whose values are all made up, to a tool that shares at most one word"
        " with the task; declines when the next round does it again."
    )
    budget = 1
    text = (
        "{{ tool }} was not run: the task gives none of its values ({{ values }})"
        " and says little of what the tool does. If no tool here does the task, call decline."
        " If the task lacks a value a fitting tool needs, call request_input."
    )

    async def on_calls(self, seen: CallsSeen) -> Action:
        """The unfounded calls held, with why; once the model was told (its budget), a
        round of nothing but unfounded calls is a decline, for the router to try the
        next category. The run's text is analysed in a worker thread when there is
        much of it (a 1 MB objective from an MCP host held the event loop for two seconds)."""
        run = seen.run
        if run is None or not seen.calls:
            return None
        read = sum(len(e.result or "") + len(e.error or "") for e in run.executions)
        size = run.task_chars + read + len(seen.told)
        guessed = await by_size(
            size, partial(guessed_calls, seen.calls, run, seen.tools, seen.told)
        )
        if not guessed:
            return None
        if not self.within(seen.counts) and all(c.id in guessed for c in seen.calls):
            call = seen.calls[0]
            return Stop(
                declined=f"No tool here fits the task: {call.name} was called again with"
                f" values the task does not give ({shown(guessed[call.id])})."
            )
        seen.counts.add(self.name)
        return Hold(
            {
                c.id: self.say(tool=c.name, values=shown(guessed[c.id]))
                for c in seen.calls
                if c.id in guessed
            }
        )


class MadeUpInput(CallsGuard):
    name = "made_up_input"
    loops: ClassVar[frozenset[Loop]] = frozenset({"main"})
    does = (
        "Holds a category call whose `exact_input` writes numbers nobody in the conversation gave."
    )
    text = (
        "not run: the user has not given {{ numbers }} (exact_input)."
        " Reply to the user with a question that asks for the missing value,"
        " or call the category with only what the user wrote."
    )

    async def on_calls(self, seen: CallsSeen) -> Action:
        """Seen with the 1.5B main agent on the demo: asked "What weekday was my
        birthday?", it called the dates category with `exact_input: "2023-04-15"`, and
        the category, reading that as the user's input, answered for a date nobody gave.
        """
        if seen.heard is None:
            return None
        heard = seen.heard()
        held = {}
        for call in seen.calls:
            given = written_input(call.arguments) if isinstance(call.arguments, dict) else None
            numbers = unfounded_numbers(given, heard) if given is not None else []
            if numbers:
                held[call.id] = self.say(numbers=clipped(", ".join(numbers[:4]), 80))
        return Hold(held) if held else None


class RoundCap(CallsGuard):
    """Seen with the 1.5B over 2,009 tools: asked about "a specific" Star Wars character,
    it called the movies category 13 times, one made-up name each (26 LLM calls, 39,440
    prompt tokens for one question)."""

    name = "round_cap"
    loops: ClassVar[frozenset[Loop]] = frozenset({"main"})
    does = (
        "Runs at most 4 category calls from one main-agent reply (`MainAgent`'s"
        " `max_calls_per_round` for a capable model); the rest are answered as not run."
    )
    calls_a_reply: ClassVar[int] = 4
    text = (
        "not run: at most {{ calls }} category calls run from one reply. Call it again"
        " after reading the results above, if it is still needed."
    )

    async def on_calls(self, seen: CallsSeen) -> Action:
        over = seen.calls[self.calls_a_reply :]
        note = self.say(calls=self.calls_a_reply, budget=self.calls_a_reply)
        return Hold({call.id: note for call in over}) if over else None
