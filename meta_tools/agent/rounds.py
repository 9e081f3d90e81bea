"""The main agent's round: one user message answered over category calls (`MainRound`,
the spec `kernel.run_rounds` runs for `MainAgent`).

A call is a category call; a round's calls run concurrently (`MainAgent.call_all`).
Under guard `clear_route`, the one category the ranking offers for a conversation's
first message runs with it before the model is asked.
A reply without calls is the answer, unless it tells the user to use a category
(guard `told_to_use`). After a round the model answers from the results, or the
results are the answer (`results_as_answer`). Out of rounds, it is asked to answer
with no tools offered.
"""

from __future__ import annotations

from collections.abc import Sequence
from functools import cache, partial
from typing import TYPE_CHECKING

from ..category.fence import fence_result
from ..category.result import CategoryResult
from ..guards import (
    AfterRound,
    CallsSeen,
    GuardCounts,
    Guards,
    Hold,
    Leg,
    NamesSeen,
    ReplySeen,
    ResultsSeen,
    Route,
)
from ..guards.calls import RoundCap
from ..guards.main_checks import conversation_heard
from ..kernel import OUT_OF_ROUNDS, Again, Batch, Finish, Step
from ..llm.base import ChatModel
from ..llm.quotes import Quotes
from ..llm.types import AssistantTurn, ChatRequest, Message, ToolCall, ToolDefinition
from ..turn_trace import Reached
from .routing import as_category_call, category_named, is_category
from .steps import StepSink

if TYPE_CHECKING:
    from .main import MainAgent

__all__ = ["MainRound"]


class MainRound:
    """One user message as rounds: the main agent's side of `kernel.run_rounds`.

    Every ask counts against `max_rounds`, a note's too. The loop ends with the
    model's answer ("" when the results are the answer); `reached` says how.
    """

    def __init__(
        self,
        agent: MainAgent,
        text: str,
        model: ChatModel,
        on_step: StepSink | None,
        tools: list[ToolDefinition],
    ) -> None:
        self.agent = agent
        self.text = text
        self.model = model
        self.on_step = on_step
        self.guards: Guards = agent.guards
        self.counts = GuardCounts()
        self.history = [message for past in agent._turns for message in past]
        self.system = Message(role="system", content=agent.instructions)
        self.tools = tools
        self.turn = [Message(role="user", content=text)]
        self.results: list[CategoryResult] = []
        self.succeeded: set[str] = set()  # category calls that succeeded, by call key
        self.reached: Reached = "answered"
        self._asked = 0
        self._returned: dict[str, CategoryResult] = {}
        self._only_repeats = False

    async def opening(self) -> Again | Finish[str] | None:
        """The one category the ranking offers for a conversation's first message, run
        with the message before the model is asked (guard `clear_route`): the model
        would only pass the message on. A later message may lean on earlier turns."""
        if self.history or not self.guards.routes_first():
            return None
        target = self.agent.meta.clear_category(self.text)
        if target is None:
            return None
        return await self.route(Route((Leg(target, self.text, self.text),)))

    def may_ask(self) -> bool:
        return self._asked < self.agent.max_rounds

    def request(self) -> ChatRequest:
        self._asked += 1
        return ChatRequest(messages=[self.system, *self.history, *self.turn], tools=self.tools)

    async def complete(self, request: ChatRequest) -> AssistantTurn:
        return await self.model.complete(request)

    def reply_seen(self, reply: AssistantTurn, request: ChatRequest) -> ReplySeen:
        category_for = category_named(self.agent.meta, request)
        return ReplySeen(
            "main",
            reply,
            request,
            self.counts,
            text=self.text,
            called=bool(self.results),
            category_for=category_for,
        )

    async def replied(self, reply: AssistantTurn, request: ChatRequest) -> None:
        return None

    def add(self, messages: Sequence[Message]) -> None:
        self.turn.extend(messages)

    def may_run(self) -> bool:
        return True

    async def route(self, route: Route) -> Again | Finish[str] | None:
        """The router's own category calls (a reply told the user to use a category, or
        wrote a category's response instead of calling it). When they are the question's
        first, the results stage judges them as it judges a round of the model's: their
        results may be the answer (`results_as_answer`)."""
        first = not self.results
        returned: dict[str, CategoryResult] = {}
        exchange = await self._routed(route, returned)
        if not exchange:
            return None
        if first and returned and self.guards.acts_at("results"):
            calls = [call for message in exchange for call in message.tool_calls]
            if self.guards.on_results(self._seen(calls, returned, first_round=True)).stop:
                self.turn.extend(exchange)
                return Finish("")  # the results are the answer: no call to restate them
        return Again(exchange)

    async def _routed(
        self, route: Route, returned: dict[str, CategoryResult] | None = None
    ) -> list[Message]:
        """Run each leg of `route`: the exchanges of the legs that reached a category
        (their results also into `returned`, by call id)."""
        messages: list[Message] = []
        for leg in route.legs:
            context = self.text
            if leg.handed_on_by is not None:
                # What the first part found goes with the user's message, fenced as data:
                # it may be a tool's output, and it must not sway where a retry goes.
                context = f"{self.text}\n\n{fence_result(leg.handed_on_by, True, leg.found)}"
            came, exchange = await self.agent._router_call(
                leg.target, leg.objective, leg.exact_input, context, self.on_step, leg.handed_on_by
            )
            if came.result is not None:
                self.results.append(came.result)
                messages.extend(exchange)
                if returned is not None:
                    returned[came.call.id] = came.result
            elif leg.handed_on_by is not None:
                messages.extend(exchange)
        return messages

    async def decide(self, reply: AssistantTurn, request: ChatRequest) -> Step[str]:
        if reply.tool_calls:
            return Batch(reply.as_message(), list(reply.tool_calls))
        # A call it still could not write is no answer when categories found one.
        return Finish("" if reply.unread_call and self.results else (reply.text or "").strip())

    async def execute(self, batch: Batch) -> bool:
        """The names and calls stages (calls routed and held) and the round's category calls."""
        agent, guards, written = self.agent, self.guards, batch.calls
        held: dict[str, str] = {}
        if guards.acts_at("calls") or guards.acts_at("names"):
            seen = CallsSeen(
                "main",
                written,
                self.counts,
                heard=lambda: conversation_heard(self.system, self.history, self.turn),
                quotes=cache(partial(Quotes.of, [*self.history, *self.turn])),
                is_category=lambda name: is_category(agent.meta, name),
            )
            action = await guards.on_calls(seen)
            held = action.notes if isinstance(action, Hold) else {}
        calls = written
        if guards.acts_at("names"):
            reply = AssistantTurn(tool_calls=list(written))
            route = partial(as_category_call, agent.meta, text=self.text)
            calls = guards.on_names(NamesSeen("main", reply, as_category_call=route)).tool_calls
        cap = agent.max_calls_per_round
        self._calls, self._over, self._cap, self._held = calls[:cap], calls[cap:], cap, held
        self._returned = {}  # this round's results, by call id
        self._replies, self._only_repeats = await agent._call_all(
            self._calls, self.text, held, self.on_step, self._returned, self.succeeded
        )
        return self._only_repeats

    def results_seen(self, batch: Batch, only_repeats: bool) -> ResultsSeen:
        return self._seen(
            self._calls,
            self._returned,
            first_round=not self.results,
            only_repeats=only_repeats,
            held=self._held,
            over=self._over,
        )

    def _seen(
        self,
        calls: list[ToolCall],
        returned: dict[str, CategoryResult],
        *,
        first_round: bool,
        only_repeats: bool = False,
        held: dict[str, str] | None = None,
        over: list[ToolCall] | None = None,
    ) -> ResultsSeen:
        """What the results stage's guards see of category calls that came back: a round
        of the model's, or the router's own (`route`)."""
        meta = self.agent.meta

        def best_other(text: str, category: str) -> str | None:
            ranked = (r for r in meta.rank(text) if r.score > 0 and r.category.name != category)
            return next((r.category.slug for r in ranked), None)

        return ResultsSeen(
            "main",
            self.counts,
            only_repeats,
            text=self.text,
            calls=calls,
            held=held or {},
            over=over or [],
            returned=returned,
            first_round=first_round,
            new_results=len(returned),
            best_other=best_other,
        )

    async def after_round(self, batch: Batch, after: AfterRound) -> str | None:
        """The round's results into the conversation; then the end a guard asked for (the
        results are the answer), or the parts it hands on and its notes."""
        self.results.extend(self._returned.values())
        self.turn.extend(self._replies)
        self.turn.extend(not_run(self._over, self.guards, self._cap))
        if after.stop:
            return ""  # the results are the answer: no call to restate them
        if after.route is not None:
            self.turn.extend(await self._routed(after.route))
        self.turn.extend(after.notes)
        return None

    async def out_of_rounds(self) -> str:
        """Ask for an answer with no tools offered."""
        self.reached = "out_of_rounds"
        self.turn.append(Message(role="user", content=OUT_OF_ROUNDS))
        reply = await self.model.complete(
            ChatRequest(messages=[self.system, *self.history, *self.turn])
        )
        return (reply.text or "").strip()


def not_run(calls: list[ToolCall], guards: Guards, cap: int) -> list[Message]:
    """The answers to the calls of a reply past `cap` (`MainAgent.max_calls_per_round`),
    in the words of guard `round_cap`, which lowers that cap for a small model."""
    if not calls:
        return []
    note = "error: " + guards.text(RoundCap, calls=cap, budget=cap)
    return [
        Message(role="tool", tool_call_id=call.id, name=call.name, content=note) for call in calls
    ]
