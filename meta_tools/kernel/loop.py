"""`run_rounds`: the one loop body, request → reply → names → calls → execute → results → answer.

Every agent here runs it: a category over its tools, the main agent over the
categories, a flat agent over concrete tools (the benchmarks' baseline). What
differs is a `RoundSpec`: what the request holds, what a call is and how a
batch runs, how a reply is classified, how the loop ends (an answer, a summary
at the round limit, a suspension raised by `complete`). The guards in force
(`meta_tools.guards`) act at the stages as hooks: the loop hands each stage to
them and carries out the action they return (read the reply otherwise, ask
again, hold calls, route, stop, replace the answer).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Generic, Protocol, TypeVar

from ..guards import AfterRound, AskAgain, Guards, ReplySeen, ResultsSeen, Route
from ..llm.types import AssistantTurn, ChatRequest, Message, ToolCall

__all__ = ["OUT_OF_ROUNDS", "Again", "Batch", "Finish", "RoundSpec", "Step", "run_rounds"]

Done = TypeVar("Done")

#: What a conversation's model is told when no round is left (the main agent's, a flat
#: agent's): it answers with no tools offered. A category summarises its run instead
#: (its prompt `max_iteration_summary`).
OUT_OF_ROUNDS = "Answer now with what you have."


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

    async def opening(self) -> Again | Finish[Done] | None:
        """The router's own calls before the first request (guard `clear_route`): the
        exchange to start the conversation with, the end when their results are the
        answer, or None to ask the model first."""
        ...

    def may_ask(self) -> bool:
        """Whether the model may be asked again (else the loop is out of rounds)."""
        ...

    def request(self) -> ChatRequest:
        """The next model request: the conversation and the tools offered."""
        ...

    async def complete(self, request: ChatRequest) -> AssistantTurn:
        """The model's reply to `request`, as it came (a suspension is raised from here)."""
        ...

    def reply_seen(self, reply: AssistantTurn, request: ChatRequest) -> ReplySeen:
        """What the reply stage's guards see of this loop."""
        ...

    async def replied(self, reply: AssistantTurn, request: ChatRequest) -> None:
        """Record the reply as read (a category traces and counts it)."""
        ...

    def add(self, messages: Sequence[Message]) -> None:
        """Add `messages` to the conversation."""
        ...

    async def route(self, route: Route) -> Again | Finish[Done] | None:
        """Run the router's own category calls a guard asked for; the exchange to add and
        ask again with, the end when their results are the answer, or None when none ran
        (the reply stands)."""
        ...

    async def decide(self, reply: AssistantTurn, request: ChatRequest) -> Step[Done]:
        """The names and calls stages, and the answer stage of a reply without calls."""
        ...

    def may_run(self) -> bool:
        """Whether another round of calls may run (else the loop is out of rounds)."""
        ...

    async def execute(self, batch: Batch) -> bool:
        """Run the round; whether every call repeated one that had already succeeded."""
        ...

    def results_seen(self, batch: Batch, only_repeats: bool) -> ResultsSeen:
        """What the results stage's guards see of the round."""
        ...

    async def after_round(self, batch: Batch, after: AfterRound) -> Done | None:
        """Carry out what the results stage asked; an end, or None to ask the model again."""
        ...

    async def out_of_rounds(self) -> Done:
        """The end when no round or ask is left."""
        ...


_NOTHING_AFTER = AfterRound()


async def run_rounds(spec: RoundSpec[Done]) -> Done:
    """Ask, read, run and judge, round after round, until the spec's loop ends.

    The guards in force act at their stages (`Guards.on_reply`, `on_results`; the spec
    asks those of the request, names, calls and answer stages); the loop carries out
    what they return. With no guard in force, each stage passes the model's reply and calls on.
    """
    guards = spec.guards
    opened = await spec.opening()
    if isinstance(opened, Finish):
        return opened.done
    if opened is not None:
        spec.add(opened.messages)
    while spec.may_ask():
        request = spec.request()
        reply = await spec.complete(request)
        action: AskAgain | Route | None = None
        if guards.acts_at("reply"):
            seen = spec.reply_seen(reply, request)
            action = await guards.on_reply(seen)
            reply = seen.reply
        else:
            guards.unread(reply)
        await spec.replied(reply, request)
        if isinstance(action, AskAgain):
            # It meant to call a tool, or said nothing: say what went wrong, once more.
            spec.add(action.messages)
            continue
        if isinstance(action, Route):
            routed = await spec.route(action)
            if isinstance(routed, Finish):
                return routed.done
            if routed is not None:
                spec.add(routed.messages)
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
        repeats = await spec.execute(step)
        after = (
            guards.on_results(spec.results_seen(step, repeats))
            if guards.acts_at("results")
            else _NOTHING_AFTER
        )
        done = await spec.after_round(step, after)
        if done is not None:
            return done
    return await spec.out_of_rounds()
