"""`run_rounds`: the one loop body, request → reply → names → calls → execute → results → answer.

Every agent here runs it: a category over its tools, the main agent over the
categories, a flat agent over concrete tools (the benchmarks' baseline). What
differs is a `RoundSpec`: what the request holds, what a call is and how a
batch runs, how a reply is classified, how the loop ends (an answer, a summary
at the round limit, a suspension raised by `complete`). The stages every loop
shares run here, once: the reply as read (guard `text_calls`), the note that
answers a reply the model did not mean (`unread_call`, `empty_reply`), and the
end of a loop whose rounds only repeat (`repeat_rounds`).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Generic, Literal, Protocol, TypeVar

from ..guards import GuardCounts, Guards
from ..llm.types import AssistantTurn, ChatRequest, Message, ToolCall
from .reply import read_reply, repeat_verdict, reply_note

__all__ = [
    "OUT_OF_ROUNDS",
    "Again",
    "Batch",
    "Finish",
    "RoundSpec",
    "Step",
    "Verdict",
    "run_rounds",
]

Done = TypeVar("Done")

#: What a conversation's model is told when no round is left (the main agent's, a flat
#: agent's): it answers with no tools offered. A category summarises its run instead
#: (its prompt `max_iteration_summary`).
OUT_OF_ROUNDS = "Answer now with what you have."
Verdict = Literal["go", "answer", "stop"]
"""What follows a round (`reply.repeat_verdict`): go on, tell the model to answer, or stop."""


@dataclass(frozen=True, slots=True)
class Again:
    """The reply is answered with `messages`, and the model is asked again."""

    messages: list[Message]


@dataclass(frozen=True, slots=True)
class Finish(Generic[Done]):
    """The loop ends with `done`."""

    done: Done


@dataclass(frozen=True, slots=True)
class Batch:
    """The calls of one reply, to run as a round.

    `said` is the model's turn as the conversation keeps it; `rejected` are calls
    answered with why instead of run (the category's invalid control calls and held
    calls), in the order the spec answers them.
    """

    said: Message
    calls: list[ToolCall]
    rejected: list[tuple[ToolCall, str]] = field(default_factory=list)


Step = Again | Finish[Done] | Batch


class RoundSpec(Protocol[Done]):
    """One loop's particulars; `run_rounds` calls them stage by stage."""

    @property
    def guards(self) -> Guards:
        """The guards in force."""
        ...

    @property
    def counts(self) -> GuardCounts:
        """How often each guard acted in this run or question."""
        ...

    def may_ask(self) -> bool:
        """Whether the model may be asked again (else the loop is out of rounds)."""
        ...

    def request(self) -> ChatRequest:
        """The next model request: the conversation and the tools offered."""
        ...

    async def complete(self, request: ChatRequest) -> AssistantTurn:
        """The model's reply to `request` (a suspension is raised from here)."""
        ...

    async def reread(self, reply: AssistantTurn, request: ChatRequest) -> AssistantTurn:
        """The reply as read, after the calls written as text were (names of the loop's own)."""
        ...

    def empty_counts(self) -> bool:
        """Whether an empty reply is answered with a note now (guard `empty_reply`)."""
        ...

    def add(self, messages: Sequence[Message]) -> None:
        """Add `messages` to the conversation."""
        ...

    async def decide(self, reply: AssistantTurn, request: ChatRequest) -> Step[Done]:
        """What the reply means: calls to run, an end, or a note and another ask."""
        ...

    def may_run(self) -> bool:
        """Whether another round of calls may run (else the loop is out of rounds)."""
        ...

    async def execute(self, batch: Batch) -> bool:
        """Run the round; whether every call repeated one that had already succeeded."""
        ...

    async def after_round(self, batch: Batch, verdict: Verdict) -> Done | None:
        """What the round's results mean: an end, or None to ask the model again."""
        ...

    def from_results(self) -> Done:
        """The end with what the calls found, the model's own words aside."""
        ...

    async def out_of_rounds(self) -> Done:
        """The end when no round or ask is left."""
        ...


async def run_rounds(spec: RoundSpec[Done]) -> Done:
    """Ask, read, run and judge, round after round, until the spec's loop ends."""
    guards, counts = spec.guards, spec.counts
    while spec.may_ask():
        request = spec.request()
        reply = await read_reply(await spec.complete(request), request, guards)
        reply = await spec.reread(reply, request)
        note = reply_note(reply, guards, counts, empty_counts=spec.empty_counts())
        if note is not None:
            # It meant to call a tool, or said nothing: say what went wrong, once more.
            spec.add(note)
            continue
        step = await spec.decide(reply, request)
        if isinstance(step, Again):
            spec.add(step.messages)
            continue
        if isinstance(step, Finish):
            return step.done
        if not spec.may_run():
            return await spec.out_of_rounds()
        spec.add([step.said])
        verdict = repeat_verdict(await spec.execute(step), guards, counts)
        done = await spec.after_round(step, verdict)
        if done is not None:
            return done
        if verdict == "stop":
            # Told once to finish, it repeats again: end with what it has.
            return spec.from_results()
    return await spec.out_of_rounds()
