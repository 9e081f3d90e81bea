"""One call per value: a call that gives a list where its tool takes a single value.

Seen with the 1.5B on BFCL's parallel entries: asked about two genes, it wrote one
call `get_protein_sequence(gene=["BRCA1", "BRCA2"], species=["Homo sapiens",
"Pan troglodytes"])` to a tool whose `gene` and `species` each take one string.
Answered with the validation error, it gave up. Such a call stands for one call
per position of its lists, and is run as those calls.

A call is spread only when that reading is the only one: every list it gives for
a single-valued parameter has the same length and holds single values; its other
arguments go unchanged into every call. Lists of different lengths are left as
written, and the tool's validation tells the model what is wrong.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from ..llm.types import AssistantTurn, ToolCall
from ..tools.base import BaseTool

__all__ = ["spread_turn"]

_SINGLE_TYPES = frozenset({"string", "integer", "number", "boolean", "null"})


def spread_turn(turn: AssistantTurn, tools: Sequence[BaseTool], limit: int) -> AssistantTurn:
    """`turn` with each call spread into one call per value (at most `limit` each)."""
    if not turn.tool_calls:
        return turn
    schemas = {tool.name: tool.parameters_schema for tool in tools}
    calls: list[ToolCall] = []
    for call in turn.tool_calls:
        schema = schemas.get(call.name)
        calls.extend(_spread(call, schema, limit) if schema is not None else [call])
    if calls == turn.tool_calls:
        return turn
    return turn.model_copy(update={"tool_calls": calls})


def _spread(call: ToolCall, schema: Mapping[str, Any], limit: int) -> list[ToolCall]:
    arguments = call.arguments
    properties = schema.get("properties")
    if not isinstance(arguments, dict) or not isinstance(properties, dict):
        return [call]
    lists = {
        key: value
        for key, value in arguments.items()
        if isinstance(value, list) and _takes_one_value(properties.get(key))
    }
    lengths = {len(value) for value in lists.values()}
    if len(lengths) != 1 or not 1 <= (count := lengths.pop()) <= limit:
        return [call]
    if any(isinstance(item, (list, dict)) for value in lists.values() for item in value):
        return [call]
    return [
        ToolCall(name=call.name, arguments=arguments | {k: v[i] for k, v in lists.items()})
        for i in range(count)
    ]


def _takes_one_value(spec: Any) -> bool:
    """Whether a parameter's schema admits single values only (no list, no object)."""
    if not isinstance(spec, dict):
        return False
    branches = spec.get("anyOf") or spec.get("oneOf")
    if isinstance(branches, list):
        return bool(branches) and all(_takes_one_value(branch) for branch in branches)
    kinds = spec.get("type")
    kinds = kinds if isinstance(kinds, list) else [kinds]
    return bool(kinds) and all(kind in _SINGLE_TYPES for kind in kinds)
