"""`MainAgent`: a small OpenAI-style agent loop whose only tools are a router's category tools.

This is the "main agent" of the design (Friday in `example.py`): it offers the
model `meta.tool_definitions()` (their parameter notes left to its instructions),
runs the category calls it asks for through `MetaManager.call_tool`
(concurrently, when it asks for several), gives the results back as JSON
text, and repeats until the model answers in words.
"""

from __future__ import annotations

import uuid
from collections import deque
from collections.abc import Mapping
from functools import partial
from typing import Any

import anyio

from ..category.result import CategoryResult
from ..exceptions import CategoryNotFoundError, ToolArgumentsError
from ..guards import AnswerSeen, Guards, NamesSeen, Replace
from ..kernel import run_rounds
from ..kernel.batch import call_key, once, only_repeats
from ..llm.base import ChatModel
from ..llm.profile import ProfileChoice
from ..llm.types import AssistantTurn, ChatRequest, Message, ToolCall
from ..router.manager import MetaManager
from ..turn_trace import Reached
from .offer import INSTRUCTIONS, without_parameter_notes
from .rounds import MainRound
from .routing import as_category_call
from .steps import CategoryCalled, CategoryReturned, StepSink, traced

__all__ = ["MainAgent"]


class MainAgent:
    """A conversation with a model that sees only the category tools of `meta`.

    Args:
        model: the main agent's LLM.
        meta: the router; its category tools are the only tools offered.
        name: how the agent calls itself in its instructions.
        instructions: the system prompt (`{name}` is filled in). The category tools are
            offered without their parameter notes, so it says what `objective` and
            `exact_input` are (the default does).
        max_rounds: tool rounds per question before the model must answer.
        max_calls_per_round: category calls run from one reply, a bound on the work one
            reply can start; the others are answered as not run, so that the model can
            make them in a later round. (Guard `round_cap` lowers it for small models.)
        history_turns: past questions (with their tool calls) kept as context.
        guards: the rules that second-guess the model (`meta_tools.guards`); default the
            router's (`meta.guards`: the config's `guards` section, on the profile the
            model calls for), or for a router built in code the profile `model` calls for.
    """

    def __init__(
        self,
        model: ChatModel,
        meta: MetaManager,
        *,
        name: str = "Friday",
        instructions: str = INSTRUCTIONS,
        max_rounds: int = 6,
        max_calls_per_round: int = 16,
        history_turns: int = 20,
        guards: Guards | str | None = None,
    ) -> None:
        self.model = model
        self.meta = meta
        self.name = name
        self.instructions = instructions.format(name=name)
        self.max_rounds = max_rounds
        self.max_calls_per_round = max_calls_per_round
        self._guards = None if guards is None else Guards.of(guards)
        self.session = f"{name.lower()}-{uuid.uuid4().hex[:8]}"
        self._turns: deque[list[Message]] = deque(maxlen=history_turns)
        self._used: deque[str] = deque(maxlen=history_turns)
        """Categories this conversation called (slugs): offered again while it goes on."""

    @property
    def guards(self) -> Guards:
        """The guards in force: those given, else the router's (`meta.guards`: its config's,
        on the profile its model calls for), else the profile this agent's model calls for."""
        return self._guards if self._guards is not None else self.meta.guards_for(self.model)

    @property
    def profile_choice(self) -> ProfileChoice:
        """Why the guards in force are the ones they are (banners and traces)."""
        if self._guards is not None:
            return ProfileChoice(self._guards.describe(), "given to the main agent")
        return self.meta.choice_for(self.model)

    async def ask(self, text: str, *, on_step: StepSink | None = None) -> str:
        """Answer one user message, calling categories as the model asks.

        The categories offered are ranked once for the message. The guards
        (`self.guards`) act at their stages; with the default profile, none does.

        With a tracer on the router (`meta.tracer`), the turn is traced beside its
        category runs: each reply of the model, each category call, the answer.

        Raises:
            ModelError: the main agent's model failed (category failures are results, not errors).
        """
        tracer = self.meta.tracer
        if tracer is None:
            answer, _reached = await self._ask(text, self.model, on_step)
            return answer
        redactor = self.meta.redactor
        guards = self.profile_choice.line()
        async with tracer.turn(
            text, agent=self.name, session=self.session, redactor=redactor, guards=guards
        ) as trace:
            answer, reached = await self._ask(text, trace.model(self.model), traced(trace, on_step))
            trace.answered(answer, reached)
            return answer

    async def _ask(
        self, text: str, model: ChatModel, on_step: StepSink | None
    ) -> tuple[str, Reached]:
        """The turn's answer, and how it was reached (for its trace): `kernel.run_rounds`
        over `rounds.MainRound`, then the answer stage."""
        guards = self.guards
        tools = without_parameter_notes(self.meta.tool_definitions(text, include=self._used))
        rounds = MainRound(self, text, model, on_step, tools)
        answer = await run_rounds(rounds)
        said = answer  # the model's own words, if it wrote any
        results, reached = rounds.results, rounds.reached
        if results and guards.acts_at("answer"):
            found = "\n".join(r.for_agent() for r in results)
            action = guards.on_answer(AnswerSeen("main", answer, found=found))
            if isinstance(action, Replace) and action.answer is not None:
                answer = action.answer  # "": the results are the answer
        if not answer and results:
            # The model said nothing after its category calls: give the user what they found.
            answer = "\n".join(
                dict.fromkeys(f"{r.category}: {r.question or r.summary}" for r in results)
            )
            if reached == "answered":
                reached = "from_results"
        if answer and answer == said:
            # The history keeps what the model said, never words put in its mouth: seen
            # with the 1.5B in a chat, answers made of results taught it to write results
            # (and made-up ones) itself, and an empty answer to reply nothing.
            rounds.turn.append(Message(role="assistant", content=answer))
        self._turns.append(rounds.turn)
        return answer, reached

    async def _call_all(
        self,
        calls: list[ToolCall],
        text: str,
        held: Mapping[str, str],
        on_step: StepSink | None,
        returned: dict[str, CategoryResult],
        succeeded: set[str],
    ) -> tuple[list[Message], bool]:
        """Run the calls of one round for the user message `text` concurrently; the tool
        messages keep the calls' order.

        A call in `held` is answered with why, by id, instead of run. A call made again
        in a later round runs again (a status may have changed); two calls in one reply
        that run the same (the same category and arguments as read: `any_category`
        reaching a category the reply also calls for the same task) run once. The
        results are added to `returned` by call id, and the keys of the calls that
        succeeded to `succeeded`. Also returns whether every call repeated one that had
        succeeded before (guard `repeat_rounds`).
        """
        keys = {id(call): self._run_key(call) for call in calls}
        repeats = only_repeats(keys.values(), succeeded)
        pairs = once(calls, lambda call: keys[id(call)])
        came_back: dict[int, CategoryReturned] = {}  # by the call that ran, as an object

        async def call_one(call: ToolCall) -> None:
            if on_step is not None:
                await on_step(CategoryCalled(call))
            came = (
                CategoryReturned(call, error=held[call.id])
                if call.id in held
                else await self._call(call, text, on_step)
            )
            came_back[id(call)] = came
            if came.result is not None:
                returned[call.id] = came.result
                if came.result.status == "success":
                    succeeded.add(keys[id(call)])
            if on_step is not None:
                await on_step(came)

        async with anyio.create_task_group() as group:
            for call, first in pairs:
                if call is first:
                    group.start_soon(call_one, call)
        replies = []
        for call, first in pairs:
            came = came_back[id(first)]
            content = came.result.for_agent() if came.result else f"error: {came.error}"
            replies.append(
                Message(role="tool", tool_call_id=call.id, name=call.name, content=content)
            )
        return replies, repeats

    def _as_category_call(self, call: ToolCall, text: str) -> ToolCall:
        """`call` as the names stage reads it (guard `tool_name_route`: a tool's name or
        a tool's arguments as the category call they mean); with no guard of that stage,
        a call runs as written, and a wrong name or shape is answered with the error,
        which names the categories."""
        guards = self.guards
        if not guards.acts_at("names"):
            return call
        route = partial(as_category_call, self.meta, text=text)
        seen = NamesSeen("main", AssistantTurn(tool_calls=[call]), as_category_call=route)
        return guards.on_names(seen).tool_calls[0]

    async def routable(self, reply: AssistantTurn, request: ChatRequest) -> AssistantTurn:
        """`reply` as this agent reads it (guard `text_calls`: calls written as text, to
        a category or to a name that is none)."""
        return await self.guards.read_reply(reply, request, "main")

    def category_for(self, call: ToolCall, text: str) -> str | None:
        """The slug of the category a call of this agent's model, for user message `text`,
        runs in first; None when it reaches none (an unknown name, bad arguments)."""
        return self._reaches(self._as_category_call(call, text))

    def _reaches(self, call: ToolCall) -> str | None:
        """The slug of the category a call as read runs in first, or None."""
        if not isinstance(call.arguments, dict):
            return None
        try:
            return self.meta.check_call(call.name, call.arguments).category.slug
        except (CategoryNotFoundError, ToolArgumentsError):
            return None

    def _run_key(self, call: ToolCall) -> str:
        """What a call the names stage read runs as, as a key: the category it reaches
        and its arguments. Seen with the 1.5B: `entertainment` and `any_category` in one
        reply, both for the user's message; `any_category` reached `entertainment`,
        which ran the same tool twice."""
        return call_key(self._reaches(call) or call.name, call.arguments)

    def request_for(self, text: str) -> ChatRequest:
        """The request this agent's model gets first for the user message `text`.

        With more categories than the router's `routing.max_categories`, it offers
        the best-ranked ones for `text` (and those the conversation used) in rank
        order, and `any_category`.
        """
        history = [message for past in self._turns for message in past]
        return self._request([*history, Message(role="user", content=text)], text)

    def _request(self, messages: list[Message], text: str) -> ChatRequest:
        tools = self.meta.tool_definitions(text, include=self._used)
        system = Message(role="system", content=self.instructions)
        return ChatRequest(messages=[system, *messages], tools=without_parameter_notes(tools))

    async def _router_call(
        self,
        name: str,
        objective: str,
        exact_input: str,
        text: str,
        on_step: StepSink | None,
        handed_on_by: str | None = None,
    ) -> tuple[CategoryReturned, list[Message]]:
        """A category call of the router's own for user message `text`: what came back,
        and the assistant turn with the call and its tool message, for the conversation.
        `handed_on_by`: the category that left `objective` undone (see `call_tool`)."""
        call = ToolCall(name=name, arguments={"objective": objective, "exact_input": exact_input})
        if on_step is not None:
            await on_step(CategoryCalled(call, by="router"))
        came = await self._call(call, text, on_step, handed_on_by)
        if on_step is not None:
            await on_step(came)
        content = came.result.for_agent() if came.result else f"error: {came.error}"
        return came, [
            Message(role="assistant", tool_calls=[call]),
            Message(role="tool", tool_call_id=call.id, name=call.name, content=content),
        ]

    async def _call(
        self,
        call: ToolCall,
        request: str,
        on_step: StepSink | None,
        handed_on_by: str | None = None,
    ) -> CategoryReturned:
        """Run `call` for the user message `request` (the category's context)."""
        arguments: Mapping[str, Any] | str = call.arguments
        if isinstance(arguments, str):
            return CategoryReturned(call, error="arguments must be a JSON object")
        try:
            result = await self.meta.call_tool(
                call.name,
                arguments,
                session=self.session,
                on_event=on_step,
                call_id=call.id,
                request=request,
                handed_on_by=handed_on_by,
            )
        except (CategoryNotFoundError, ToolArgumentsError) as exc:
            return CategoryReturned(call, error=str(exc))
        # The category that answered (a declined call may have been run in another one).
        slug = next((m.slug for m in self.meta.categories if m.name == result.category), None)
        if slug is not None and slug not in self._used:
            self._used.append(slug)
        return CategoryReturned(call, result=result)
