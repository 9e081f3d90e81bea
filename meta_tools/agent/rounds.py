"""The main agent's round: one user message answered over category calls (`MainRound`,
the spec `kernel.run_rounds` runs for `MainAgent`).

A call is a category call; a round's calls run concurrently (`MainAgent.call_all`).
A reply without calls is the answer, unless it tells the user to use a category
(guard `told_to_use`). After a round the model answers from the results, or the
results are the answer (`results_as_answer`). Out of rounds, it is asked to answer
with no tools offered.
"""

from __future__ import annotations

from collections.abc import Sequence
from functools import cache, partial
from typing import TYPE_CHECKING

from ..category.result import CategoryResult
from ..guards import GuardCounts, Guards
from ..kernel import OUT_OF_ROUNDS, Again, Batch, Finish, Step, Verdict
from ..llm.base import ChatModel
from ..llm.quotes import Quotes
from ..llm.types import AssistantTurn, ChatRequest, Message, ToolDefinition
from ..turn_trace import Reached
from .checks import (
    QUOTED_CALL,
    answer_alone,
    conversation_heard,
    made_up_input,
    not_run,
    quoted_call,
)
from .routing import is_category, told_target
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

    def may_ask(self) -> bool:
        return self._asked < self.agent.max_rounds

    def request(self) -> ChatRequest:
        self._asked += 1
        return ChatRequest(messages=[self.system, *self.history, *self.turn], tools=self.tools)

    async def complete(self, request: ChatRequest) -> AssistantTurn:
        return await self.model.complete(request)

    async def reread(self, reply: AssistantTurn, request: ChatRequest) -> AssistantTurn:
        if self.guards.on("text_calls"):
            return await self.agent.routable(reply, request)
        return reply

    def empty_counts(self) -> bool:
        return False

    def add(self, messages: Sequence[Message]) -> None:
        self.turn.extend(messages)

    def may_run(self) -> bool:
        return True

    async def decide(self, reply: AssistantTurn, request: ChatRequest) -> Step[str]:
        if reply.tool_calls:
            return Batch(reply.as_message(), list(reply.tool_calls))
        agent, guards = self.agent, self.guards
        results = self.results
        target = None if results else told_target(agent.meta, guards, reply, request, self.counts)
        if target is not None:
            text = self.text
            came, exchange = await agent._router_call(target, text, text, text, self.on_step)
            if came.result is not None:
                results.append(came.result)
                return Again(exchange)
        # A call it still could not write is no answer when categories found one.
        return Finish("" if reply.unread_call and results else (reply.text or "").strip())

    async def execute(self, batch: Batch) -> bool:
        """The calls stage (held, routed, capped) and the round's category calls."""
        agent, guards, reply_calls = self.agent, self.guards, batch.calls
        # The exact_input the model wrote; keys it added go on as data (the 1.5B over
        # 2,009 tools added an "executions" echo with a made-up id to a good call).
        held: dict[str, str] = {}
        if guards.on("made_up_input"):
            heard = conversation_heard(self.system, self.history, self.turn)
            held = {c.id: why for c in reply_calls if (why := made_up_input(c, heard, guards))}
        if guards.on("tool_name_route"):
            # A call to a tool's name is routed by that name: never one a page wrote.
            quotes = cache(partial(Quotes.of, [*self.history, *self.turn]))  # skips its own turns
            held |= {
                c.id: QUOTED_CALL
                for c in reply_calls
                if not is_category(agent.meta, c.name) and quoted_call(c, quotes)
            }
        calls = [agent._as_category_call(call, self.text) for call in reply_calls]
        cap = agent.max_calls_per_round
        if guards.on("round_cap"):
            cap = min(cap, guards.budget("round_cap"))
        self._calls, self._over, self._cap, self._held = calls[:cap], calls[cap:], cap, held
        self._returned = {}  # this round's results, by call id
        self._replies, self._only_repeats = await agent._call_all(
            self._calls, self.text, held, self.on_step, self._returned, self.succeeded
        )
        return self._only_repeats

    async def after_round(self, batch: Batch, verdict: Verdict) -> str | None:
        agent, guards, returned = self.agent, self.guards, self._returned
        before = len(self.results)
        self.results.extend(returned.values())
        self.turn.extend(self._replies)
        self.turn.extend(not_run(self._over, guards, self._cap))
        if (
            guards.on("results_as_answer")
            and before == 0
            and answer_alone(self.text, self._calls, self._over, self._held, returned)
        ):
            return ""  # the results are the answer: no call to restate them
        if guards.on("hand_on_rest"):
            self.turn.extend(
                await agent._finish_remainders(
                    self._calls, self.text, returned, self.results, self.on_step
                )
            )
        if guards.on("each_result") and len(self.results) - before >= 2 and not self._only_repeats:
            # Seen with the 1.5B: after two results it answered with the last one only.
            self.turn.append(Message(role="user", content=guards.text("each_result")))
        if verdict == "answer":
            self.turn.append(Message(role="user", content=guards.text("repeat_rounds")))
        return None

    def from_results(self) -> str:
        return ""  # told once to answer, it repeats again: what the categories found is the answer

    async def out_of_rounds(self) -> str:
        """Ask for an answer with no tools offered."""
        self.reached = "out_of_rounds"
        self.turn.append(Message(role="user", content=OUT_OF_ROUNDS))
        reply = await self.model.complete(
            ChatRequest(messages=[self.system, *self.history, *self.turn])
        )
        return (reply.text or "").strip()
