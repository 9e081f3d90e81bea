"""Names, descriptions and usage notes written by a model, a few groups per call.

The model is shown each group's draft (written from the tools' own words) and
up to `tools_shown` of its tools, and answers through one function call,
`name_categories`. Calls are bounded: `batch` groups per call, at most
`max_calls` calls; a group the model did not answer for (a failed call, a
missing or malformed entry, a group past the last call) keeps its draft.
"""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from dataclasses import replace

from pydantic import BaseModel, Field, ValidationError

from ..exceptions import ModelError
from ..llm.base import ChatModel
from ..llm.types import AssistantTurn, ChatRequest, Message, ToolDefinition
from ..support.json_text import loads
from ..tools.base import BaseTool
from .name import Draft, unique_names

__all__ = ["NAME_FUNCTION", "name_with_model"]


class _Named(BaseModel):
    id: int
    name: str = Field(min_length=1, max_length=60)
    description: str = Field(min_length=1, max_length=300)
    usage_notes: str = Field("", max_length=600)


class _Answer(BaseModel):
    categories: list[_Named]


NAME_FUNCTION = ToolDefinition(
    name="name_categories",
    description="Give each group of tools a category name, description and usage notes.",
    parameters=_Answer.model_json_schema(),
)

_SYSTEM = (
    "You name categories of tools for a tool router. A main agent sees only each category's "
    "name and description and must pick the right category for a task, so make the categories "
    "easy to tell apart. For each group: a short name (2 to 4 words), a one-sentence "
    "description of what its tools do, and usage notes (one or two sentences) for the agent "
    "that runs the tools. Answer by calling name_categories once, with every group's id."
)


def _request(
    drafts: Sequence[tuple[int, Draft]], tools: Mapping[str, BaseTool], shown: int
) -> ChatRequest:
    groups = []
    for number, draft in drafts:
        listed = [
            f"{name}: {' '.join(tools[name].description.split())[:120]}"
            for name in draft.tools[:shown]
        ]
        groups.append(
            {
                "id": number,
                "draft_name": draft.name,
                "size": len(draft.tools),
                "tools": listed,
            }
        )
    return ChatRequest(
        messages=[
            Message(role="system", content=_SYSTEM),
            Message(role="user", content=json.dumps({"groups": groups}, ensure_ascii=False)),
        ],
        tools=[NAME_FUNCTION],
    )


def _parse(turn: AssistantTurn) -> list[_Named]:
    """The named groups in the model's answer: the function call, else JSON in the text."""
    candidates: list[object] = [c.arguments for c in turn.tool_calls]
    if turn.text:
        text = turn.text.strip().removeprefix("```json").removeprefix("```").removesuffix("```")
        candidates.append(text)
    for candidate in candidates:
        try:
            data = loads(candidate) if isinstance(candidate, str) else candidate
            return _Answer.model_validate(data).categories
        except (ValueError, ValidationError):
            continue
    return []


async def name_with_model(
    model: ChatModel,
    drafts: Sequence[Draft],
    tools: Mapping[str, BaseTool],
    *,
    batch: int = 8,
    max_calls: int = 6,
    tools_shown: int = 12,
) -> tuple[list[Draft], list[str]]:
    """The drafts renamed by the model where it answered well; and notes on what it did not do."""
    named = list(drafts)
    notes: list[str] = []
    numbered = list(enumerate(drafts))
    chunks = [numbered[i : i + batch] for i in range(0, len(numbered), batch)]
    if len(chunks) > max_calls:
        notes.append(
            f"the model named {max_calls * batch} of {len(drafts)} categories"
            f" ({max_calls} calls); the rest keep names from the tools' words"
        )
    for chunk in chunks[:max_calls]:
        try:
            turn = await model.complete(_request(chunk, tools, tools_shown))
        except ModelError as exc:
            notes.append(f"the model failed ({exc}); {len(chunk)} categories keep their drafts")
            continue
        answers = {a.id: a for a in _parse(turn)}
        missing = [number for number, _ in chunk if number not in answers]
        if missing:
            notes.append(
                f"the model gave no usable name for {len(missing)} categories; they keep their drafts"
            )
        for number, draft in chunk:
            if (answer := answers.get(number)) is not None:
                named[number] = replace(
                    draft,
                    name=" ".join(answer.name.split()),
                    description=" ".join(answer.description.split()),
                    tool_usage_notes=" ".join(answer.usage_notes.split()) or draft.tool_usage_notes,
                )
    names = unique_names([d.name for d in named])
    return [replace(d, name=n) for d, n in zip(named, names, strict=True)], notes
