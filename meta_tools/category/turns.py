"""The category LLM's side of a run: its control tools and what its turns mean.

Besides the category's tools (`tool_definition`), the LLM is offered two *control tools*,
`request_input` and `decline`, so that "I need more input" and "no tool
fits" are structured answers rather than guesses from prose. `classify_turn`
reads a turn as one of four outcomes, over which the loop is a `match`. How
results reach the model is `fence`'s job, the task's wording `task`'s.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from ..guards.note import Note
from ..llm.types import (
    DECLINE,
    REQUEST_INPUT,
    RESERVED_TOOL_NAMES,
    AssistantTurn,
    ToolCall,
    ToolDefinition,
)
from ..support.json_text import loads
from ..tools.base import BaseTool

__all__ = [
    "CONTROL_TOOLS",
    "Answered",
    "Calls",
    "Declined",
    "Outcome",
    "Requested",
    "classify_turn",
    "tool_definition",
]

CONTROL_TOOLS: list[ToolDefinition] = [
    # Short on purpose: both schemas go with every LLM call of a run, and the
    # selection prompt already says when to call them.
    ToolDefinition(
        name=REQUEST_INPUT,
        description="Ask for values the task needs but does not give.",
        parameters={
            "type": "object",
            "properties": {
                "missing": {"type": "array", "items": {"type": "string"}},
                "question": {"type": "string"},
            },
            "required": ["missing", "question"],
        },
    ),
    ToolDefinition(
        name=DECLINE,
        description="Say that no tool can do this task.",
        parameters={
            "type": "object",
            "properties": {"reason": {"type": "string"}, "suggestion": {"type": "string"}},
            "required": ["reason"],
        },
    ),
]
#: No tool may take a control call's name (`tools.schema` owns the names).
_CONTROL_NAMES = RESERVED_TOOL_NAMES


def tool_definition(tool: BaseTool) -> ToolDefinition:
    """`tool` as the LLM is offered it."""
    return ToolDefinition(
        name=tool.name, description=tool.description, parameters=tool.parameters_schema
    )


# The outcomes of one LLM turn: the loop is a `match` over these.
@dataclass(frozen=True, slots=True)
class Requested:
    """The LLM called `request_input`: the main agent must supply more."""

    missing: list[str]
    question: str


@dataclass(frozen=True, slots=True)
class Declined:
    """The LLM called `decline`: no tool of the category fits."""

    reason: str
    suggestion: str


@dataclass(frozen=True, slots=True)
class Answered:
    """The LLM wrote text and called no tool."""

    text: str


@dataclass(frozen=True, slots=True)
class Calls:
    """The LLM called tools of the category.

    `rejected` are control calls of the same turn that are not acted on, each
    with the error the LLM is answered with (they lack required fields, or came
    together with real calls, which run instead). `calls` may then be empty.
    """

    calls: list[ToolCall]
    rejected: list[tuple[ToolCall, str]] = field(default_factory=list)


Outcome = Requested | Declined | Answered | Calls


_NO_NOTE = Note()


def classify_turn(turn: AssistantTurn, note: Note = _NO_NOTE, copied: str = "") -> Outcome:
    """What `turn` means, as a reply to `note` (the loop's last message of its own).

    A valid control call ends the run (`Requested`, `Declined`), even beside other
    calls. A control call without its question or reason is invalid, and so is a
    question that copies `note` (`Note.quoted_in`, guard `echoed_note`, whose text
    `copied` is): it is answered with an error (`Calls.rejected`) and the real calls
    of the turn run.
    """
    rejected: list[tuple[ToolCall, str]] = []
    for call in turn.tool_calls:
        if call.name not in _CONTROL_NAMES:
            continue
        args = _control_arguments(call)
        problem = _control_problem(call.name, args, note, copied)
        if problem is not None:
            rejected.append((call, problem))
        elif call.name == REQUEST_INPUT:
            missing = args.get("missing", [])
            missing = [str(m) for m in missing] if isinstance(missing, list) else [str(missing)]
            return Requested(missing, str(args["question"]))
        else:
            return Declined(str(args["reason"]), str(args.get("suggestion", "")))
    real = [call for call in turn.tool_calls if call.name not in _CONTROL_NAMES]
    if real or rejected:
        return Calls(real, rejected)
    return Answered((turn.text or "").strip())


#: The field without which a control call means nothing.
_ESSENTIAL = {REQUEST_INPUT: "question", DECLINE: "reason"}


def _control_problem(name: str, args: dict[str, Any], note: Note, copied: str) -> str | None:
    """Why a control call cannot be acted on, else None: its question or reason is
    missing, or its question is `note` copied back (answered with `copied`)."""
    essential = _ESSENTIAL[name]
    given = str(args.get(essential) or "")
    if name == REQUEST_INPUT and copied and note.quoted_in(given):
        return copied
    if given.strip():
        return None
    return (
        f"{name} is invalid: `{essential}` is missing or empty. Call {name} again with"
        f" `{essential}` filled in, or call the tool that does the task."
    )


def _control_arguments(call: ToolCall) -> dict[str, Any]:
    """A control call's arguments; plain text that is no JSON counts as the question or reason."""
    args: Any = call.arguments
    if isinstance(args, str):
        try:
            args = loads(args)
        except ValueError:
            args = {"question": args, "reason": args}
    return args if isinstance(args, dict) else {}
