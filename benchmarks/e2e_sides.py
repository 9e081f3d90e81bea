"""The sides the end-to-end benchmark compares, and the bookkeeping they share.

- hierarchy: `MainAgent`, which sees only the category tools;
- category call: the right category (or categories) called directly;
- flat / retrieval: one agent offered concrete tools (all of them, or the BM25 top-k).

Every side runs on a `CountingModel`, so LLM calls and tokens of the main agent
and of the categories are added up the same way, and each call is told apart by
where it went (`llm_call_place`). `judge_calls` and `tool_use` score precision and
completion beside "a gold tool ran".
"""

from __future__ import annotations

import json
import time
from collections import Counter
from collections.abc import Collection, Mapping, Sequence
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any

from meta_tools.agent import AgentStep, CategoryCalled, CategoryReturned, MainAgent
from meta_tools.category.fence import render_value
from meta_tools.category.result import CategoryResult, RunUsage
from meta_tools.category.turns import tool_definition
from meta_tools.exceptions import ModelError
from meta_tools.guards import AfterRound, GuardCounts, Guards, ReplySeen, ResultsSeen, Route
from meta_tools.kernel import (
    OUT_OF_ROUNDS,
    Again,
    Batch,
    Finish,
    Step,
    call_key,
    once,
    run_rounds,
)
from meta_tools.llm.base import ChatModel
from meta_tools.llm.owned import close_model
from meta_tools.llm.types import AssistantTurn, ChatRequest, Message
from meta_tools.router.manager import ANY_CATEGORY, MetaManager
from meta_tools.tools.base import BaseTool
from meta_tools.tools.pack import ToolPack

from .report import table

__all__ = [
    "FLAT_INSTRUCTIONS",
    "Asked",
    "CountingModel",
    "Run",
    "ask_category",
    "ask_flat",
    "ask_hierarchy",
    "attempts_of",
    "judge_calls",
    "llm_call_place",
    "show_precision",
    "tool_use",
]

FLAT_INSTRUCTIONS = """You are Friday, a helpful assistant.
Use the tools to do what the user asks.
Take argument values from the user's message. Never invent values.
A required value is missing: ask the user for it, and call no tool.
No tool can do it: say so, and call no tool.
Once the results answer the user, reply briefly in plain text."""


@dataclass(frozen=True)
class Asked:
    """The shape of one request to the model: enough to tell where it went."""

    offered: frozenset[str]
    """The names of the tools it offered."""
    system: str
    """Its first message when that is a system message ("" otherwise)."""
    last_role: str
    """The role of its last message (`tool`: it carries results)."""
    replied_before: bool
    """Whether it holds an assistant message (not the opening request of a conversation)."""

    @classmethod
    def of(cls, request: ChatRequest) -> Asked:
        messages = request.messages
        first = messages[0] if messages else None
        return cls(
            offered=frozenset(t.name for t in request.tools),
            system=first.content or "" if first is not None and first.role == "system" else "",
            last_role=messages[-1].role if messages else "",
            replied_before=any(m.role == "assistant" for m in messages),
        )


def llm_call_place(asked: Sequence[Asked], main_tools: Collection[str] = ()) -> dict[str, int]:
    """Where the LLM calls of one run went: `<who>/<round>` -> count.

    `who`: `main` (the request offered a tool of `main_tools`, the main agent's category
    tools, or had the system prompt of such a request), `category` (any other request
    while `main_tools` is given), `agent` (no `main_tools`: the one agent of the flat and
    retrieval sides). `round`: `first` (no reply before it: a conversation's or a category
    run's opening request), `after_results` (it carries tool or category results: a next
    step or the answer round), `nudge` (after a reply, with a note instead of results: a
    retry of an unreadable or empty reply, a push to answer).
    """
    main = set(main_tools)
    main_systems = {a.system for a in asked if a.offered & main}
    counts: Counter[str] = Counter()
    for a in asked:
        if not main:
            who = "agent"
        elif a.offered & main or (a.system and a.system in main_systems):
            who = "main"
        else:
            who = "category"
        step = (
            "first"
            if not a.replied_before
            else "after_results"
            if a.last_role == "tool"
            else "nudge"
        )
        counts[f"{who}/{step}"] += 1
    return dict(sorted(counts.items()))


class CountingModel:
    """A `ChatModel` that adds up the calls and tokens of the model it wraps.

    With `log`, every turn (its text and calls) is appended to that JSON-lines
    file, to read what the model did.
    """

    def __init__(self, model: ChatModel, *, log: Path | None = None) -> None:
        self.model = model
        self.counted = RunUsage()
        self.asked: list[Asked] = []
        """The shape of every request since the last `take`."""
        self.log = log

    @property
    def inner(self) -> ChatModel:
        """The model counted (`meta_tools.llm.wrapper.ModelWrapper`): its name chooses the
        guard profile when none is given."""
        return self.model

    async def complete(self, request: ChatRequest) -> AssistantTurn:
        turn = await self.model.complete(request)
        self.asked.append(Asked.of(request))
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
        await close_model(self.model)

    def take(self) -> RunUsage:
        """What was counted since the last `take`."""
        counted, self.counted = self.counted, RunUsage()
        self.asked = []
        return counted


@dataclass
class Run:
    """One task on one side: the answer, what ran, and what it cost."""

    answer: str = ""
    ran: list[str] = field(default_factory=list)
    """Tools that ran without error, in order."""
    calls: list[str] = field(default_factory=list)
    """Every concrete call with its arguments, for reading what the model did."""
    attempts: list[tuple[str, bool]] = field(default_factory=list)
    """Every concrete call in order: the tool's name and whether it ran."""
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
    llm_calls_by: dict[str, int] = field(default_factory=dict)
    """Where the LLM calls went (`llm_call_place`), with `category_calls` (the main
    agent's) and `declined` (category runs that declined and were retried elsewhere)."""

    def record(self) -> dict[str, Any]:
        return asdict(self)


async def _measured(
    counter: CountingModel, run: Run, started: float, main_tools: Collection[str] = ()
) -> Run:
    run.llm_calls_by = llm_call_place(counter.asked, main_tools) | run.llm_calls_by
    counted = counter.take()
    run.llm_calls, run.prompt_tokens = counted.llm_calls, counted.prompt_tokens
    run.completion_tokens, run.recovered_calls = counted.completion_tokens, counted.recovered_calls
    run.wall_s = round(time.perf_counter() - started, 2)
    return run


def _took(run: Run, result: CategoryResult) -> None:
    run.statuses.append(result.status)
    run.ran.extend(e.tool for e in result.executions if e.ok)
    run.attempts.extend((e.tool, e.ok) for e in result.executions)
    run.calls.extend(
        f"{e.tool}({json.dumps(e.arguments, ensure_ascii=False)})" for e in result.executions
    )


async def ask_hierarchy(
    counter: CountingModel, meta: MetaManager, prompt: str, agent: MainAgent | None = None
) -> Run:
    """The main agent, offered only the category tools, answers `prompt`: a new one, or
    `agent` with the questions it answered before (one conversation, as a chat holds it)."""
    run, started = Run(), time.perf_counter()
    counter.take()

    places = {"category_calls": 0, "declined": 0}
    run.llm_calls_by = places

    async def step(event: AgentStep) -> None:
        if isinstance(event, CategoryCalled):
            places["category_calls"] += 1
        if isinstance(event, CategoryCalled) and event.call.name != ANY_CATEGORY:
            run.categories.append(event.call.name)
        if isinstance(event, CategoryReturned) and event.result is not None:
            places["declined"] += len(event.result.declined or ())
            if event.call.name == ANY_CATEGORY:
                first = (event.result.declined or [event.result.category])[0]
                run.categories.append(meta.get_category(first).slug)
            _took(run, event.result)

    try:
        run.answer = await (agent or MainAgent(counter, meta)).ask(prompt, on_step=step)
    except ModelError as exc:
        run.error = str(exc)
    main_tools = {m.slug for m in meta.categories} | {ANY_CATEGORY}
    return await _measured(counter, run, started, main_tools)


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
    return await _measured(counter, run, started, {route[0] for route in routes})


async def ask_flat(
    counter: CountingModel,
    tools: Sequence[BaseTool],
    prompt: str,
    *,
    max_rounds: int = 6,
    tool_timeout_s: float = 30.0,
    guards: Guards | None = None,
) -> Run:
    """One agent offered `tools` directly answers `prompt` (the flat and retrieval sides):
    `kernel.run_rounds` over `FlatRound`, with the guards of `guards` that serve a flat
    agent (`text_calls` and `unread_call`, as the main agent has them)."""
    run, started = Run(), time.perf_counter()
    counter.take()
    flat = FlatRound(counter, tools, prompt, run, max_rounds, tool_timeout_s, guards or Guards())
    try:
        run.answer = await run_rounds(flat)
    except ModelError as exc:
        run.error = str(exc)
    return await _measured(counter, run, started)


class FlatRound:
    """A flat agent's round: every ask counts against `max_rounds`; a call is a tool
    call, run as the category's are (the same call twice in a reply runs once); a reply
    without calls is the answer; out of rounds, it is asked to answer without tools."""

    def __init__(
        self,
        model: ChatModel,
        tools: Sequence[BaseTool],
        prompt: str,
        run: Run,
        max_rounds: int,
        tool_timeout_s: float,
        guards: Guards,
    ) -> None:
        self.model, self.run = model, run
        self.pack = ToolPack(list(tools), name="flat")
        self.offered = [tool_definition(t) for t in self.pack.list_tools()]
        self.messages = [
            Message(role="system", content=FLAT_INSTRUCTIONS),
            Message(role="user", content=prompt),
        ]
        self.guards = guards
        self.counts = GuardCounts()
        self.max_rounds, self.tool_timeout_s = max_rounds, tool_timeout_s
        self._asked = 0

    async def opening(self) -> None:
        return None  # no router: the model is asked first

    def may_ask(self) -> bool:
        return self._asked < self.max_rounds

    def request(self) -> ChatRequest:
        self._asked += 1
        return ChatRequest(messages=list(self.messages), tools=self.offered)

    async def complete(self, request: ChatRequest) -> AssistantTurn:
        return await self.model.complete(request)

    def reply_seen(self, reply: AssistantTurn, request: ChatRequest) -> ReplySeen:
        return ReplySeen("flat", reply, request, self.counts)

    async def replied(self, reply: AssistantTurn, request: ChatRequest) -> None:
        return None

    def add(self, messages: Sequence[Message]) -> None:
        self.messages.extend(messages)

    async def route(self, route: Route) -> Again | None:
        return None

    async def decide(self, reply: AssistantTurn, request: ChatRequest) -> Step[str]:
        if not reply.tool_calls:
            return Finish((reply.text or "").strip())
        return Batch(reply.as_message(), list(reply.tool_calls))

    def may_run(self) -> bool:
        return True

    async def execute(self, batch: Batch) -> bool:
        run = self.run
        copies = once(batch.calls, lambda c: call_key(c.name, c.arguments))
        unique = [call for call, first in copies if call is first]
        ran = await self.pack.call_tools(unique, timeout=self.tool_timeout_s)
        by_id = {outcome.call.id: outcome for outcome in ran}
        for call, first in copies:
            outcome = by_id[first.id]
            arguments = json.dumps(call.arguments, ensure_ascii=False)
            run.calls.append(f"{call.name}({arguments})")
            run.attempts.append((call.name, outcome.ok))
            if outcome.ok:
                run.ran.append(call.name)
            text = render_value(outcome.value) if outcome.ok else f"error: {outcome.error}"
            self.messages.append(
                Message(role="tool", tool_call_id=call.id, name=call.name, content=text)
            )
        return False  # the flat agent runs no guard of the results stage

    def results_seen(self, batch: Batch, only_repeats: bool) -> ResultsSeen:
        return ResultsSeen("flat", self.counts, only_repeats)

    async def after_round(self, batch: Batch, after: AfterRound) -> str | None:
        return None

    async def out_of_rounds(self) -> str:
        self.messages.append(Message(role="user", content=OUT_OF_ROUNDS))
        turn = await self.model.complete(ChatRequest(messages=self.messages))
        return (turn.text or "").strip()


def schema_tokens(tools: Sequence[BaseTool]) -> int:
    """A rough token count of the tools' schemas (about 3.5 characters per token for JSON)."""
    return int(len(json.dumps([t.openai_schema() for t in tools], ensure_ascii=False)) / 3.5)


def attempts_of(row: Mapping[str, Any]) -> list[tuple[str, bool]]:
    """A row's concrete calls in order, (tool, ran); for a row stored before `attempts`
    was recorded, read from its `calls` texts, a call counted as run when its tool ran."""
    if "attempts" in row:
        return [(str(name), bool(ok)) for name, ok in row["attempts"]]
    ran = set(row.get("ran") or ())
    names = [str(call).split("(", 1)[0] for call in row.get("calls") or ()]
    return [(name, name in ran) for name in names]


def judge_calls(gold: Collection[str], attempts: Sequence[tuple[str, bool]]) -> dict[str, Any]:
    """Precision and completion of one run's concrete calls against its gold tools.

    - `first_call_right`: its first call was to a gold tool, and ran;
    - `tool_calls`: how many calls it made (each attempt, run or refused);
    - `wrong_calls`: how many were to a tool that is not gold (a gold tool called with
      bad arguments is not a wrong tool);
    - `all_gold_ran`: every gold tool ran (a run with no gold tool: none did).
    """
    wanted = set(gold)
    ran = {name for name, ok in attempts if ok}
    return {
        "first_call_right": bool(attempts) and attempts[0][0] in wanted and attempts[0][1],
        "tool_calls": len(attempts),
        "wrong_calls": sum(name not in wanted for name, _ in attempts),
        "all_gold_ran": wanted <= ran if wanted else not attempts,
    }


def tool_use(rows: Sequence[Mapping[str, Any]]) -> dict[str, Any]:
    """Per side, over the rows that name their gold tools (`gold`): the share whose first
    call was right and whose every gold tool ran, wrong and all tool calls a query, and
    LLM calls a query by where they went (rows that record it)."""
    judged = [r for r in rows if "gold" in r]
    out: dict[str, Any] = {}
    if judged:
        verdicts = [judge_calls(r["gold"], attempts_of(r)) for r in judged]
        n = len(judged)
        out |= {
            "judged": n,
            "first_call_right": round(sum(v["first_call_right"] for v in verdicts) / n, 3),
            "wrong_calls": round(sum(v["wrong_calls"] for v in verdicts) / n, 2),
            "tool_calls": round(sum(v["tool_calls"] for v in verdicts) / n, 2),
            "all_gold_ran": round(sum(v["all_gold_ran"] for v in verdicts) / n, 3),
        }
    placed = [r["llm_calls_by"] for r in rows if r.get("llm_calls_by")]
    if placed:
        keys = sorted({k for p in placed for k in p})
        out["llm_calls_by"] = {
            k: round(sum(p.get(k, 0) for p in placed) / len(placed), 2) for k in keys
        }
    return out


def show_precision(sides: dict[str, dict[str, Any]]) -> str:
    """Precision, completion and cost a query per side (sides whose rows name their gold)."""
    judged = {side: s for side, s in sides.items() if s.get("judged")}
    if not judged:
        return ""
    rows = [
        [side, s["judged"], f"{s['accuracy']:.0%}", f"{s['first_call_right']:.0%}",
         f"{s['all_gold_ran']:.0%}", f"{s['wrong_calls']:.2f}", f"{s['tool_calls']:.2f}",
         f"{s['llm_calls'] / s['tasks']:.1f}", f"{s['prompt_tokens'] / s['tasks']:,.0f}",
         f"{s['wall_s'] / s['tasks']:.0f}"]
        for side, s in judged.items()
    ]  # fmt: skip
    headers = ["side", "queries", "solved (a gold tool ran)", "first call right",
               "every gold tool ran", "wrong tool calls a query", "tool calls a query",
               "LLM calls a query", "prompt tokens a query", "wall s a query"]  # fmt: skip
    out = table(headers, rows)
    places = {side: s["llm_calls_by"] for side, s in judged.items() if s.get("llm_calls_by")}
    if places:
        keys = sorted({k for p in places.values() for k in p})
        out += "\n\nLLM calls a query, by where they went:\n\n" + table(
            ["side", *keys], [[side, *(p.get(k, "") for k in keys)] for side, p in places.items()]
        )
    return out
