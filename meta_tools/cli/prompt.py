"""`meta-tools prompt`: what a category's LLM would be sent for a task, without a model.

The category runs for real (its config, templates, tools and shortlist) up to
its first LLM call, which a `PromptCapture` records instead of sending; no tool
runs. The two later templates are rendered as they would read after one round
in which every call worked, and at the round limit.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from typing import Any

from ..category.manager import CategoryManager
from ..category.prompts import PromptVariables
from ..exceptions import ModelError
from ..llm.openai_tools import openai_tool
from ..llm.types import AssistantTurn, ChatRequest
from ..router.manager import MetaManager

__all__ = ["PromptCapture", "PromptPreview", "preview_prompts", "preview_text"]


class PromptCapture:
    """A model that records the request it is sent and answers none (nothing runs)."""

    def __init__(self) -> None:
        self.requests: list[ChatRequest] = []

    async def complete(self, request: ChatRequest) -> AssistantTurn:
        self.requests.append(request)
        raise ModelError("meta-tools prompt sends nothing to a model")


@dataclass(frozen=True)
class PromptPreview:
    """The first request of a category run, and the later templates as they would read.

    `request` is None when the category would answer without its model (no tool
    matches the task well enough: `answer` says so).
    """

    category: str
    slug: str
    request: ChatRequest | None
    evaluation: str = ""
    summary: str = ""
    answer: str = ""

    def as_dict(self) -> dict[str, Any]:
        """The preview as JSON-ready data (`--json`)."""
        request = self.request
        return {
            "category": self.category,
            "name": self.slug,
            "messages": [] if request is None else [m.model_dump() for m in request.messages],
            "tools": [] if request is None else [openai_tool(t) for t in request.tools],
            "tool_result_evaluation": self.evaluation,
            "max_iteration_summary": self.summary,
            "answer_without_model": self.answer or None,
        }


async def preview_prompts(
    meta: MetaManager, capture: PromptCapture, category: str, objective: str, exact_input: str
) -> PromptPreview:
    """Run `category` of `meta` (built with `capture` as its model) up to its first LLM call."""
    manager = meta.get_category(category)
    result = await manager.run(objective, exact_input)
    if not capture.requests:
        return PromptPreview(manager.name, manager.slug, None, answer=result.summary)
    request = capture.requests[0]
    tools = [
        {"name": t.name, "description": t.description}
        for t in request.tools
        if t.name in manager.tools
    ]
    later = _after_one_round(manager, objective, exact_input, tools)
    return PromptPreview(
        manager.name,
        manager.slug,
        request,
        evaluation=manager.prompts.tool_result_evaluation.render(later),
        summary=manager.prompts.max_iteration_summary.render(
            {**later, "iteration": manager.max_iterations}
        ),
    )


def _after_one_round(
    manager: CategoryManager, objective: str, exact_input: str, tools: list[dict[str, str]]
) -> PromptVariables:
    """The template variables after a first round in which every call worked."""
    return PromptVariables(
        category=manager.name,
        description=manager.description,
        tool_usage_notes=manager.tool_usage_notes,
        tools=tools,
        objective=objective,
        exact_input=exact_input,
        iteration=1,
        max_iterations=manager.max_iterations,
        withdrawn=[],
        failed=[],
        has_results=True,
        found_nothing=[],
        past_runs=[],
        repeated=False,
    )


def preview_text(preview: PromptPreview) -> str:
    """The preview as plain text for a terminal (printed through the terminal filter)."""
    head = f"{preview.category} ({preview.slug})"
    if preview.request is None:
        return f"{head}: its model would not be called.\n{preview.answer}"
    request = preview.request
    lines = [f"{head}: the first LLM call, as it would be sent", ""]
    for message in request.messages:
        what = "the tool_selection template" if message.role == "system" else "the task"
        lines += [f"── {message.role} ({what}) ──", message.content, ""]
    lines.append(f"── offered tools ({len(request.tools)}) ──")
    for tool in request.tools:
        parameters = json.dumps(tool.parameters, ensure_ascii=False)
        lines.append(f"{tool.name}: {tool.description}")
        lines.append(f"    parameters: {parameters}")
    lines += [
        "",
        "── user, after a round in which every call worked (tool_result_evaluation) ──",
        preview.evaluation,
        "",
        "── user, at the round limit (max_iteration_summary) ──",
        preview.summary,
    ]
    return "\n".join(lines)
