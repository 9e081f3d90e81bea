"""The sides of the BFCL benchmark: what each one asks, and which calls it is scored on.

Direct (BFCL's own setting: an entry's functions and nothing else):

- `plain`: one chat request with the functions as tools, as BFCL's FC mode sends
  it; the calls of that one reply are scored (the model must not read calls back
  from text: run it on a model with `recover_text_calls` off);
- `read`: the same reply, with the calls it wrote as text read back by meta-tools'
  recovery and no loop (as BFCL's prompt mode reads calls from text); no model call
  of its own, so that it parts what reading does from what the loop does;
- `category`: the functions form one category, called directly with the question;
  the loop may recover text calls, `decline` or `request_input`; scored on the
  distinct calls that ran (validated) over all its rounds.

Pooled (the router's setting: every function of BFCL's live categories in one catalog):

- `hierarchy`: `MainAgent` over categories that `meta_tools.grouping` made (as
  `meta-tools group --by topic` does), with the router's ranking;
- `retrieval`: one agent offered the BM25 top-k of the whole catalog.
"""

from __future__ import annotations

import json
import time
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from meta_tools.category.manager import CategoryManager
from meta_tools.category.shortlist import Shortlist
from meta_tools.category.turns import tool_definition
from meta_tools.exceptions import ModelError
from meta_tools.grouping.plan import draft_categories
from meta_tools.llm.base import ChatModel
from meta_tools.llm.recovery import recover_turn
from meta_tools.llm.types import AssistantTurn, ChatRequest, Message
from meta_tools.router.manager import MetaManager
from meta_tools.tools.base import BaseTool

from .bfcl_data import BfclTool, Entry, Ledger, pooled_tools
from .e2e_catalog import plain_bm25
from .e2e_sides import CountingModel, Run, ask_category, ask_flat, ask_hierarchy

__all__ = [
    "DIRECT_CATEGORY",
    "Answered",
    "PooledCatalog",
    "ask_category_call",
    "ask_plain",
    "ask_pooled",
    "direct_category",
    "read_back",
]

DIRECT_CATEGORY = ("functions", "The functions that come with this request.")
"""Name and description of the one category of the direct setting (called directly)."""
MAX_ITERATIONS = 3
"""Rounds of a category loop (as the e2e large catalog)."""


@dataclass
class Answered:
    """One entry on one side: what it cost (`run`) and the calls it is scored on."""

    run: Run
    calls: list[tuple[str, Any]] = field(default_factory=list)
    """BFCL's function names with the arguments the model sent."""


def _measure(counter: CountingModel, run: Run, started: float) -> Run:
    counted = counter.take()
    run.llm_calls, run.prompt_tokens = counted.llm_calls, counted.prompt_tokens
    run.completion_tokens, run.recovered_calls = counted.completion_tokens, counted.recovered_calls
    run.wall_s = round(time.perf_counter() - started, 2)
    return run


def _shown(calls: Sequence[tuple[str, Any]]) -> list[str]:
    return [f"{name}({json.dumps(arguments, ensure_ascii=False)})" for name, arguments in calls]


def _plain_request(entry: Entry, tools: Sequence[BfclTool]) -> ChatRequest:
    messages = [Message(role=m["role"], content=m["content"]) for m in entry.messages]
    return ChatRequest(messages=messages, tools=[tool_definition(t) for t in tools])


async def ask_plain(counter: CountingModel, entry: Entry, tools: Sequence[BfclTool]) -> Answered:
    """One request, the entry's messages as they are and its functions as tools."""
    run, started = Run(), time.perf_counter()
    counter.take()
    bfcl_name = {t.name: t.bfcl_name for t in tools}
    calls: list[tuple[str, Any]] = []
    try:
        turn = await counter.complete(_plain_request(entry, tools))
    except ModelError as exc:
        run.error = str(exc)
    else:
        run.answer = (turn.text or "").strip()
        calls = [(bfcl_name.get(c.name, c.name), c.arguments) for c in turn.tool_calls]
        run.calls = _shown(calls)
    return Answered(_measure(counter, run, started), calls)


def read_back(entry: Entry, tools: Sequence[BfclTool], plain: Mapping[str, Any]) -> Answered:
    """The `plain` side's reply (its row) with the calls written as text read back.

    A reply with native calls, or an error, is taken as it is. The model is not asked
    again: what it cost is on the `plain` row.
    """
    run = Run(answer=plain["answer"], error=plain["error"])
    calls = [(name, arguments) for name, arguments in plain["bfcl_calls"]]
    if not calls and run.error is None:
        bfcl_name = {t.name: t.bfcl_name for t in tools}
        turn = recover_turn(AssistantTurn(text=run.answer), _plain_request(entry, tools))
        calls = [(bfcl_name.get(c.name, c.name), c.arguments) for c in turn.tool_calls]
        run.recovered_calls = turn.recovered
    run.calls = _shown(calls)
    return Answered(run, calls)


def direct_category(tools: Sequence[BfclTool], model: ChatModel) -> MetaManager:
    """The entry's functions as one category, every one of them offered on every call."""
    name, description = DIRECT_CATEGORY
    category = CategoryManager(
        name,
        description,
        list(tools),
        model,
        max_iterations=MAX_ITERATIONS,
        max_tools_per_prompt=max(64, len(tools)),
        max_tool_chars_per_prompt=None,
    )
    return MetaManager([category])


async def ask_category_call(
    counter: CountingModel, entry: Entry, tools: Sequence[BfclTool], ledger: Ledger
) -> Answered:
    """The category loop over the entry's functions, given the question as objective and input."""
    ledger.take()
    meta = direct_category(tools, counter)
    route = (meta.categories[0].slug, entry.request, entry.prompt)
    run = await ask_category(counter, meta, [route])
    return Answered(run, ledger.take())


class PooledCatalog:
    """Every function of the live categories, grouped by topic, and a BM25 index over all of them."""

    def __init__(
        self,
        entries: Sequence[Entry],
        model: ChatModel,
        *,
        tools_per_call: int = 10,
        top_k: int = 10,
    ) -> None:
        self.ledger = Ledger()
        self.tools = pooled_tools(entries, self.ledger)
        self.drafts = draft_categories(self.tools, [""] * len(self.tools), by="topic")
        by_name = {t.name: t for t in self.tools}
        managers = [
            CategoryManager(
                draft.name,
                draft.description,
                [by_name[n] for n in draft.tools],
                model,
                tool_usage_notes=draft.tool_usage_notes,
                max_tools_per_prompt=tools_per_call,
                max_iterations=MAX_ITERATIONS,
            )
            for draft in self.drafts
        ]
        self.meta = MetaManager(managers)
        self.category_of = {
            t.name: m.slug for m in self.meta.categories for t in m.tools.list_tools()
        }
        self.shortlist = Shortlist(self.tools, max_tools=top_k, index=plain_bm25(self.tools))
        self.bfcl_name = {t.name: t.bfcl_name for t in self.tools}
        """Offered name -> BFCL's name."""

    def retrieve(self, text: str) -> list[BaseTool]:
        """The top-k functions of the whole catalog for `text`, by BM25 (as RAG-MCP does)."""
        return self.shortlist.select(text, "").tools

    def reach(self, entry: Entry) -> tuple[int | None, bool]:
        """Without a model: the ranking's place (0: first) of the best category holding a
        function of the name the answer calls (None: none does), and whether retrieval's
        top-k holds one."""
        categories = self.gold_categories(entry)
        ranked = [r.category.slug for r in self.meta.rank(entry.prompt)]
        place = next((i for i, slug in enumerate(ranked) if slug in categories), None)
        wanted = _answer_names(entry)
        return place, any(t.bfcl_name in wanted for t in self.retrieve(entry.prompt))

    def gold_categories(self, entry: Entry) -> set[str]:
        """The categories holding a function of the name the answer calls.

        By name, as BFCL's checker scores: another entry's function of that name,
        called with the answer's arguments, is right too.
        """
        wanted = _answer_names(entry)
        return {self.category_of[t.name] for t in self.tools if t.bfcl_name in wanted}


def _answer_names(entry: Entry) -> set[str]:
    """BFCL's names of the functions the entry's answer calls."""
    return {name for answer in entry.answer or () for name in answer}


async def ask_pooled(
    counter: CountingModel, catalog: PooledCatalog, entry: Entry, side: str
) -> Answered:
    """One question through the hierarchy (`MainAgent`) or through retrieval (top-k, one agent)."""
    catalog.ledger.take()
    if side == "hierarchy":
        run = await ask_hierarchy(counter, catalog.meta, entry.prompt)
    else:
        run = await ask_flat(counter, catalog.retrieve(entry.prompt), entry.prompt)
    # Scored by BFCL's names, as the checker is: a same-named function of another entry is right.
    run.attempts = [(catalog.bfcl_name.get(name, name), ok) for name, ok in run.attempts]
    return Answered(run, catalog.ledger.take())
