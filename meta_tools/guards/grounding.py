"""Calls that nothing ties to their task: every value made up, and at most a word shared with it.

Offered only tools that do not fit, a small model still calls one, with values
of its own. Seen with the 1.5B on BFCL's irrelevance entries: "Can you list some
horror movies?" became `calculate_investment_value(principal=1000, ...)`, and on
the demo "Book a flight from Paris to Rome" became `calculate("2 * 3600")`.

Both conditions must hold. Made-up values alone are common in right calls to a
related tool when a task is vague ("a short URL for the party invitation" gives
`shorten(longUrl="http://www.yourparty.com")`), and an unrelated-looking tool is
often right when the task gives its values. One word in common ("day", "time",
"weekday") is as often chance as fit: on the recorded real-model calls, every
right call whose values were all made up shared at least two words with its task,
while "What weekday was my birthday?" became `describe_date(date="2023-04-15")`. A
value counts as given when the task, the session's past runs or this run's earlier
calls and results hold it (a word of it, or its number); values the model chose from
the schema (an enum member, the default, a boolean) count as neither.
"""

from __future__ import annotations

import json
from collections.abc import Iterator, Sequence
from dataclasses import dataclass
from typing import Any

from ..llm.types import ToolCall
from ..support.numbers import is_held, number_values, read_numbers
from ..support.terms import analyze
from ..tools.base import BaseTool, tool_document
from .base import RunView
from .findings import leaves

__all__ = ["Grounds", "guessed_calls", "guessed_values", "shown", "unfounded_numbers"]

_CHANCE_OVERLAP = 1
"""Words a tool may share with a task by chance (see the module's docstring)."""


def guessed_calls(
    calls: Sequence[ToolCall], run: RunView, tools: Sequence[BaseTool], told: str = ""
) -> dict[str, list[Any]]:
    """The calls whose values are all made up, to a tool that shares at most one word
    with the task (call id -> those values). `told`: what else the model was told (the
    category's description and usage notes), which counts as given like the task."""
    task = f"{run.objective}\n{run.exact_input}\n{run.request}\n{told}"
    seen = "\n".join(
        [json.dumps(r, ensure_ascii=False) for r in run.past_runs]
        + [
            f"{json.dumps(e.arguments, ensure_ascii=False)} {e.result or e.error or ''}"
            for e in run.executions
        ]
    )
    grounds = Grounds.of(task, seen)
    by_name = {t.name: t for t in tools}
    return {
        c.id: values
        for c in calls
        if c.name in by_name and (values := guessed_values(c, by_name[c.name], grounds))
    }


def shown(values: list[Any]) -> str:
    """Made-up values as a note quotes them."""
    return json.dumps(values, ensure_ascii=False, default=str)[:200]


@dataclass(frozen=True, slots=True)
class Grounds:
    """What a round's calls may draw on, analysed once for all of them."""

    task_terms: frozenset[str]
    known: str
    """The task and what the run has read, case-folded."""
    known_terms: frozenset[str]
    known_numbers: frozenset[float]

    @classmethod
    def of(cls, task: str, seen: str) -> Grounds:
        known = f"{task}\n{seen}"
        return cls(
            frozenset(analyze(task)),
            known.casefold(),
            frozenset(analyze(known)),
            number_values(known),
        )


def guessed_values(call: ToolCall, tool: BaseTool, grounds: Grounds) -> list[Any]:
    """The values of `call` when it is unfounded, else an empty list.

    Unfounded: it has values of its own choosing, none of them is in the task or
    in what the run has read (`grounds`), and `tool` shares at most one word with the task.
    """
    if not isinstance(call.arguments, dict):
        return []  # unreadable arguments are the tool layer's to answer
    values = list(_chosen_values(call.arguments, tool.parameters_schema.get("properties", {})))
    if not values or any(_given(v, grounds) for v in values):
        return []
    if len(grounds.task_terms.intersection(analyze(tool_document(tool)))) > _CHANCE_OVERLAP:
        return []
    return values


def _chosen_values(arguments: dict[str, Any], properties: dict[str, Any]) -> Iterator[Any]:
    """The argument values the model had to choose: not a boolean, an enum member or the default."""
    for name, value in arguments.items():
        schema = properties.get(name)
        schema = schema if isinstance(schema, dict) else {}
        enum = schema.get("enum")
        if (isinstance(enum, list) and value in enum) or value == schema.get("default", ...):
            continue
        yield from leaves(value)


def unfounded_numbers(text: str, known: str) -> list[str]:
    """The numbers `text` writes when it writes some and `known` holds none of them, else none.

    For an input someone passed on: a main agent's `exact_input` against what the user
    and the tools said. Seen with the 1.5B main agent on the demo: "Convert this
    temperature to Fahrenheit" became `exact_input: "25°C"`, "What weekday was my
    birthday?" `"2023-04-15"`. One number the user gave is enough to pass ("0.15 * 80"
    for "15% of 80"): working with the user's values is the main agent's job. Numbers
    are read as people write them (`_numbers`): `3.5kg`, `1,234.56`, `848,55`.
    """
    written = read_numbers(text)
    if not written:
        return []  # most inputs: the conversation is not read at all
    numbers = frozenset(abs(n) for n in number_values(known))
    if any(is_held(n, numbers) for n in written):
        return []
    return [n.text for n in written]


def _given(value: Any, grounds: Grounds) -> bool:
    """Whether the text the run has read holds `value`: its number (or percent), or a word of it."""
    numbers = grounds.known_numbers
    if isinstance(value, int | float):
        return any(abs(abs(value) - n) < 1e-9 or abs(value * 100 - n) < 1e-6 for n in numbers)
    text = str(value).strip()
    if text.casefold() in grounds.known:
        return True
    words = analyze(text)
    if words:
        return any(w in grounds.known_terms for w in words)
    values = number_values(text)
    return not values or bool(values & numbers)  # punctuation only: no claim
