"""BFCL's entries as meta-tools objects: questions, simulated tools, names mapped back.

The data comes from the `bfcl-eval` package (the optional `bfcl` extra), read with
BFCL's own loaders, so every function description carries the language hint BFCL
adds before it sends one. `bfcl_eval` is imported only inside the functions that
read it: the rest of this module (type mapping, tools, names) needs nothing else.
"""

from __future__ import annotations

import json
import random
import re
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from functools import cached_property
from typing import Any

from meta_tools.exceptions import ToolArgumentsError
from meta_tools.llm.types import RESERVED_TOOL_NAMES
from meta_tools.tools.base import BaseTool, ToolContext, ToolParameter
from meta_tools.tools.schema import type_word

__all__ = [
    "CATEGORIES",
    "HELD_OUT",
    "LIVE",
    "POOLED_QUESTIONS",
    "RAN",
    "BfclTool",
    "Entry",
    "Ledger",
    "Sample",
    "answer_fits",
    "first_answer",
    "json_schema",
    "load_entries",
    "pooled_tools",
    "sample",
    "tool_names",
    "tools_for",
]

CATEGORIES: dict[str, str] = {
    "simple": "simple_python",
    "multiple": "multiple",
    "parallel": "parallel",
    "irrelevance": "irrelevance",
    "live_simple": "live_simple",
    "live_multiple": "live_multiple",
    "live_irrelevance": "live_irrelevance",
}
"""Our name of each category run -> BFCL's test category (its file and its checker's branch)."""

LIVE = (
    "live_simple",
    "live_multiple",
    "live_parallel",
    "live_parallel_multiple",
    "live_irrelevance",
    "live_relevance",
)
"""BFCL's live categories: every function of these goes into the pooled catalog."""

POOLED_QUESTIONS = ("live_simple", "live_multiple")
"""The questions asked over the pooled catalog."""

RAN = "Done: the request was carried out."
"""What every simulated function returns once its arguments validate."""

_TYPES: dict[str, str | None] = {
    "dict": "object",
    "object": "object",
    "float": "number",
    "number": "number",
    "integer": "integer",
    "string": "string",
    "boolean": "boolean",
    "bool": "boolean",
    "array": "array",
    "list": "array",
    "tuple": "array",
    "any": None,
}
"""BFCL's type names (Python's, mostly) -> JSON Schema's; None: any value."""


def json_schema(schema: Mapping[str, Any]) -> dict[str, Any]:
    """One BFCL property (or parameter block) in JSON Schema: `dict` -> `object`, and so on.

    Nested `items` and `properties` are mapped too; every other key (`description`,
    `enum`, `default`, ...) is kept as written. A type name JSON Schema does not know
    (`any`, or one we have no word for) leaves the property untyped: any value passes.
    """
    out = {k: v for k, v in schema.items() if k not in ("type", "items", "properties")}
    declared = schema.get("type")
    mapped = _TYPES.get(declared) if isinstance(declared, str) else None
    if mapped is not None:
        out = {"type": mapped, **out}
    items = schema.get("items")
    if isinstance(items, Mapping):
        out["items"] = json_schema(items)
    properties = schema.get("properties")
    if isinstance(properties, Mapping):
        out["properties"] = {
            key: json_schema(value) if isinstance(value, Mapping) else value
            for key, value in properties.items()
        }
    return out


@dataclass(frozen=True)
class Entry:
    """One BFCL question: its messages, its functions (as BFCL wrote them) and its answer."""

    id: str
    category: str
    """BFCL's test category (`simple_python`, `live_multiple`, ...)."""
    messages: tuple[Mapping[str, str], ...]
    functions: tuple[Mapping[str, Any], ...]
    answer: tuple[Mapping[str, Any], ...] | None
    """BFCL's possible answers; None for an irrelevance entry (right: no call)."""

    @property
    def irrelevance(self) -> bool:
        return "irrelevance" in self.category

    @property
    def request(self) -> str:
        """The last user message: the objective a category is given."""
        users = [m["content"] for m in self.messages if m["role"] == "user"]
        return users[-1] if users else ""

    @property
    def prompt(self) -> str:
        """The question as one text (earlier messages, a system prompt, named by role)."""
        if len(self.messages) == 1:
            return self.messages[0]["content"]
        return "\n\n".join(f"{m['role']}: {m['content']}" for m in self.messages)


class Ledger:
    """The calls that ran (validated), as (BFCL's function name, arguments as the model sent them)."""

    def __init__(self) -> None:
        self.calls: list[tuple[str, Any]] = []

    def record(self, name: str, arguments: Any) -> None:
        self.calls.append((name, arguments))

    def take(self) -> list[tuple[str, Any]]:
        """The calls since the last `take`, each distinct call once, in order."""
        seen: set[str] = set()
        out: list[tuple[str, Any]] = []
        for name, arguments in self.calls:
            key = json.dumps([name, arguments], sort_keys=True, ensure_ascii=False, default=str)
            if key not in seen:
                seen.add(key)
                out.append((name, arguments))
        self.calls = []
        return out


def _raw(arguments: Mapping[str, Any] | str | None) -> Any:
    """The arguments as the model sent them, parsed when they came as a JSON string."""
    if arguments is None:
        return {}
    if isinstance(arguments, str):
        try:
            return json.loads(arguments)
        except ValueError:
            return arguments
    return dict(arguments)


class BfclTool(BaseTool):
    """A BFCL function as a tool: its real schema, a fixed text once a call validates.

    `name` is the name offered to the model (valid and unique); `function["name"]`
    is BFCL's, the one its checker expects. A call that ran is written to `ledger`
    with the arguments the model sent (before coercion: BFCL checks types strictly).
    """

    def __init__(self, function: Mapping[str, Any], name: str, ledger: Ledger) -> None:
        self.function = function
        self._name = name
        self.ledger = ledger

    @property
    def name(self) -> str:
        return self._name

    @property
    def bfcl_name(self) -> str:
        return str(self.function["name"])

    @property
    def description(self) -> str:
        return str(self.function.get("description") or "")

    @cached_property
    def args(self) -> dict[str, ToolParameter]:
        parameters = self.function.get("parameters") or {}
        required = set(parameters.get("required") or [])
        out: dict[str, ToolParameter] = {}
        for key, prop in (parameters.get("properties") or {}).items():
            schema = json_schema(prop if isinstance(prop, Mapping) else {})
            out[key] = ToolParameter(
                name=key,
                type=type_word(schema),
                description=str(schema.get("description") or ""),
                required=key in required,
                json_schema=schema,
            )
        return out

    @property
    def is_async(self) -> bool:
        return True

    async def async_execute(self, *args: Any, **kwargs: Any) -> Any:
        return RAN

    async def call(
        self, arguments: Mapping[str, Any] | str | None, *, context: ToolContext | None = None
    ) -> Any:
        value = await super().call(arguments, context=context)
        self.ledger.record(self.bfcl_name, _raw(arguments))
        return value


def tool_names(names: Sequence[str]) -> list[str]:
    """Valid, distinct tool names for BFCL's names, in order.

    `math.factorial` is offered as `math_factorial` (as BFCL's FC mode does); a name
    taken already (a second function of that name, or the category loop's own
    `decline` / `request_input`) gets `_2`, `_3`, ...
    """
    taken = set(RESERVED_TOOL_NAMES)
    out = []
    for name in names:
        base = re.sub(r"[^A-Za-z0-9_-]+", "_", name).strip("_")[:64] or "function"
        candidate, number = base, 2
        while candidate in taken:
            suffix = f"_{number}"
            candidate, number = base[: 64 - len(suffix)] + suffix, number + 1
        taken.add(candidate)
        out.append(candidate)
    return out


def tools_for(functions: Sequence[Mapping[str, Any]], ledger: Ledger) -> list[BfclTool]:
    """One entry's functions as tools with valid names."""
    names = tool_names([str(f["name"]) for f in functions])
    return [BfclTool(f, n, ledger) for f, n in zip(functions, names, strict=True)]


def pooled_tools(entries: Iterable[Entry], ledger: Ledger) -> list[BfclTool]:
    """Every distinct function of `entries` (same name and same text: one tool), names made unique."""
    distinct: dict[str, Mapping[str, Any]] = {}
    for entry in entries:
        for function in entry.functions:
            distinct.setdefault(json.dumps(function, sort_keys=True), function)
    return tools_for(list(distinct.values()), ledger)


def _first(options: Any) -> Any:
    """The first value BFCL accepts (None: the parameter may be left out); dicts go deeper."""
    if not isinstance(options, list):
        return options
    value = next((o for o in options if o != ""), None)
    if isinstance(value, dict):
        return {k: _first(v) for k, v in value.items() if _first(v) is not None}
    return value


def first_answer(entry: Entry) -> list[tuple[str, dict[str, Any]]]:
    """BFCL's answer as calls: each parameter with its first accepted value, optional ones left out."""
    calls = []
    for answer in entry.answer or ():
        for name, parameters in answer.items():
            arguments = {k: _first(v) for k, v in parameters.items()}
            calls.append((name, {k: v for k, v in arguments.items() if v is not None}))
    return calls


def answer_fits(entry: Entry) -> bool | None:
    """Whether BFCL's first listed answer passes the simulated functions' validation.

    A few answers give a value of another type than the function's schema declares
    (a boolean for a string): BFCL's checker takes them, the category loop's
    validation refuses them. None for an entry without an answer.
    """
    if entry.answer is None:
        return None
    tools = {t.bfcl_name: t for t in tools_for(entry.functions, Ledger())}
    for name, arguments in first_answer(entry):
        if name not in tools:
            return False
        try:
            tools[name].validate_arguments(arguments)
        except ToolArgumentsError:
            return False
    return True


def load_entries(category: str) -> list[Entry]:
    """The entries of one BFCL test category, with their answers, read by BFCL's own loaders.

    Raises:
        SystemExit: `bfcl-eval` is not installed (the `bfcl` extra).
    """
    try:
        from bfcl_eval.utils import (  # type: ignore[import-not-found, unused-ignore]
            load_dataset_entry,
            load_ground_truth_entry,
        )
    except ImportError as exc:
        raise SystemExit(
            f"BFCL's data and checker come from the bfcl-eval package ({exc}); install the"
            " extra: pip install -e '.[bfcl]'"
        ) from None
    questions = load_dataset_entry(category)
    answers: dict[str, Any] = {}
    if "irrelevance" not in category and category != "live_relevance":
        answers = {a["id"]: a["ground_truth"] for a in load_ground_truth_entry(category)}
    return [
        Entry(
            id=q["id"],
            category=category,
            messages=tuple(q["question"][0]),
            functions=tuple(q["function"]),
            answer=tuple(answers[q["id"]]) if q["id"] in answers else None,
        )
        for q in questions
    ]


@dataclass
class Sample:
    """A fixed-seed sample of a category's entries, in file order."""

    entries: list[Entry]
    of: int
    seed: int | None = None
    """None: every entry."""


HELD_OUT = (50, 0)
"""The reported sample of each category: 50 entries drawn with seed 0. `--tune` draws
from the rest, so that a change is tried on questions the reported figures never see."""


def sample(entries: Sequence[Entry], limit: int | None, seed: int, *, tune: bool = False) -> Sample:
    """`limit` entries drawn with `seed` (all of them without a limit), in file order.

    `tune`: drawn from the entries outside the held-out sample (`HELD_OUT`) instead.
    """
    if tune:
        held = {e.id for e in sample(entries, *HELD_OUT).entries}
        entries = [e for e in entries if e.id not in held]
    if limit is None or limit >= len(entries):
        return Sample(list(entries), len(entries))
    picked = set(random.Random(seed).sample(range(len(entries)), limit))
    return Sample([e for i, e in enumerate(entries) if i in picked], len(entries), seed)
