"""The sides the end-to-end benchmark compares, and the bookkeeping they share.

- hierarchy: `MainAgent`, which sees only the category tools;
- category call: the right category (or categories) called directly;
- flat / retrieval: one agent offered concrete tools (all of them, or the BM25 top-k).

Every side runs on a `CountingModel`, so LLM calls and tokens of the main agent
and of the categories are added up the same way.
"""

from __future__ import annotations

import json
import time
from collections.abc import Sequence
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any

from meta_tools.agent import AgentStep, CategoryCalled, CategoryReturned, MainAgent
from meta_tools.category.result import CategoryResult, RunUsage
from meta_tools.category.turns import render_value, tool_definition
from meta_tools.exceptions import ModelError
from meta_tools.guards import GuardCounts, Guards
from meta_tools.llm.base import ChatModel
from meta_tools.llm.types import AssistantTurn, ChatRequest, Message
from meta_tools.rounds import read_reply, reply_note
from meta_tools.router.manager import ANY_CATEGORY, MetaManager
from meta_tools.tools.base import BaseTool
from meta_tools.tools.pack import ToolPack

__all__ = ["FLAT_INSTRUCTIONS", "CountingModel", "Run", "ask_category", "ask_flat", "ask_hierarchy"]

FLAT_INSTRUCTIONS = """You are Friday, a helpful assistant.
Use the tools to do what the user asks.
Take argument values from the user's message. Never invent values.
A required value is missing: ask the user for it, and call no tool.
No tool can do it: say so, and call no tool.
Once the results answer the user, reply briefly in plain text."""


class CountingModel:
    """A `ChatModel` that adds up the calls and tokens of the model it wraps.

    With `log`, every turn (its text and calls) is appended to that JSON-lines
    file, to read what the model did.
    """

    def __init__(self, model: ChatModel, *, log: Path | None = None) -> None:
        self.model = model
        self.counted = RunUsage()
        self.log = log

    async def complete(self, request: ChatRequest) -> AssistantTurn:
        turn = await self.model.complete(request)
        if self.log is not None:
            entry = {
                "offered": [t.name for t in request.tools][:8],
                "last": request.messages[-1].content[:200],
                "text": (turn.text or "")[:600],
                "calls": [(c.name, c.arguments) for c in turn.tool_calls],
                "recovered": turn.recovered,
                "unread": turn.unread_call,
                "prompt_tokens": turn.usage.prompt_tokens if turn.usage else None,
            }
            with self.log.open("a") as file:
                file.write(json.dumps(entry, ensure_ascii=False, default=str) + "\n")
        self.counted.count(turn)
        return turn

    async def aclose(self) -> None:
        """Close the wrapped model, if it has anything to close."""
        close = getattr(self.model, "aclose", None)
        if close is not None:
            await close()

    def take(self) -> RunUsage:
        """What was counted since the last `take`."""
        counted, self.counted = self.counted, RunUsage()
        return counted


@dataclass
class Run:
    """One task on one side: the answer, what ran, and what it cost."""

    answer: str = ""
    ran: list[str] = field(default_factory=list)
    """Tools that ran without error, in order."""
    calls: list[str] = field(default_factory=list)
    """Every concrete call with its arguments, for reading what the model did."""
    statuses: list[str] = field(default_factory=list)
    """Category statuses (hierarchy and category-call sides)."""
    categories: list[str] = field(default_factory=list)
    """The categories the main agent called, in order (hierarchy sides; for an `any_category`
    call, the category the router ran it in first)."""
    error: str | None = None
    llm_calls: int = 0
    prompt_tokens: int = 0
    completion_tokens: int = 0
    recovered_calls: int = 0
    wall_s: float = 0.0

    def record(self) -> dict[str, Any]:
        return asdict(self)


async def _measured(counter: CountingModel, run: Run, started: float) -> Run:
    counted = counter.take()
    run.llm_calls, run.prompt_tokens = counted.llm_calls, counted.prompt_tokens
    run.completion_tokens, run.recovered_calls = counted.completion_tokens, counted.recovered_calls
    run.wall_s = round(time.perf_counter() - started, 2)
    return run


def _took(run: Run, result: CategoryResult) -> None:
    run.statuses.append(result.status)
    run.ran.extend(e.tool for e in result.executions if e.ok)
    run.calls.extend(
        f"{e.tool}({json.dumps(e.arguments, ensure_ascii=False)})" for e in result.executions
    )


async def ask_hierarchy(counter: CountingModel, meta: MetaManager, prompt: str) -> Run:
    """The main agent, offered only the category tools, answers `prompt`."""
    run, started = Run(), time.perf_counter()
    counter.take()

    async def step(event: AgentStep) -> None:
        if isinstance(event, CategoryCalled) and event.call.name != ANY_CATEGORY:
            run.categories.append(event.call.name)
        if isinstance(event, CategoryReturned) and event.result is not None:
            if event.call.name == ANY_CATEGORY:
                first = (event.result.declined or [event.result.category])[0]
                run.categories.append(meta.get_category(first).slug)
            _took(run, event.result)

    try:
        run.answer = await MainAgent(counter, meta).ask(prompt, on_step=step)
    except ModelError as exc:
        run.error = str(exc)
    return await _measured(counter, run, started)


async def ask_category(
    counter: CountingModel, meta: MetaManager, routes: Sequence[tuple[str, str, str]]
) -> Run:
    """The right categories, called directly with the right objective and input."""
    run, started = Run(), time.perf_counter()
    counter.take()
    parts = []
    for category, objective, exact_input in routes:
        result = await meta.call_tool(
            category, {"objective": objective, "exact_input": exact_input}
        )
        _took(run, result)
        parts.append(result.question or result.summary)
        if result.status == "failed":
            run.error = result.summary
    run.answer = "\n".join(parts)
    return await _measured(counter, run, started)


async def ask_flat(
    counter: CountingModel,
    tools: Sequence[BaseTool],
    prompt: str,
    *,
    max_rounds: int = 6,
    tool_timeout_s: float = 30.0,
    guards: Guards | None = None,
) -> Run:
    """One agent offered `tools` directly answers `prompt` (the flat and retrieval sides),
    with the reply-stage guards of `guards` (`meta_tools.rounds`), as the main agent has."""
    guards = guards or Guards()
    run, started = Run(), time.perf_counter()
    counter.take()
    pack = ToolPack(list(tools), name="flat")
    offered = [tool_definition(t) for t in pack.list_tools()]
    messages = [
        Message(role="system", content=FLAT_INSTRUCTIONS),
        Message(role="user", content=prompt),
    ]
    counts = GuardCounts()
    try:
        for _ in range(max_rounds):
            request = ChatRequest(messages=list(messages), tools=offered)
            turn = await read_reply(await counter.complete(request), request, guards)
            retry = reply_note(turn, guards, counts, empty_counts=False)
            if retry is not None:
                # As the main agent does: a call it could not read is answered, not taken as the answer.
                messages.extend(retry)
                continue
            if not turn.tool_calls:
                run.answer = (turn.text or "").strip()
                break
            messages.append(turn.as_message())
            outcomes = await pack.call_tools(turn.tool_calls, timeout=tool_timeout_s)
            for outcome in outcomes:
                arguments = json.dumps(outcome.call.arguments, ensure_ascii=False)
                run.calls.append(f"{outcome.call.name}({arguments})")
                if outcome.ok:
                    run.ran.append(outcome.call.name)
                text = render_value(outcome.value) if outcome.ok else f"error: {outcome.error}"
                messages.append(
                    Message(
                        role="tool",
                        tool_call_id=outcome.call.id,
                        name=outcome.call.name,
                        content=text,
                    )
                )
        else:
            messages.append(Message(role="user", content="Answer now with what you have."))
            turn = await counter.complete(ChatRequest(messages=messages))
            run.answer = (turn.text or "").strip()
    except ModelError as exc:
        run.error = str(exc)
    return await _measured(counter, run, started)


def schema_tokens(tools: Sequence[BaseTool]) -> int:
    """A rough token count of the tools' schemas (about 3.5 characters per token for JSON)."""
    return int(len(json.dumps([t.openai_schema() for t in tools], ensure_ascii=False)) / 3.5)
