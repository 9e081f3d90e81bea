"""`CategoryResult`: what one category call returns to the main agent (as compact JSON)."""

from __future__ import annotations

import json
from typing import TYPE_CHECKING, Annotated, Any, Literal

from pydantic import AfterValidator, BaseModel, ConfigDict, Field

from ..support.json_text import loads
from ..support.text import TRUNCATED, ValidText, truncate, valid_utf8_value

if TYPE_CHECKING:
    from ..llm.types import AssistantTurn

__all__ = ["TRUNCATED", "CategoryResult", "Execution", "RunStatus", "RunUsage", "truncate"]

RunStatus = Literal["success", "insufficient_input", "no_suitable_tool", "max_iterations", "failed"]


class _ValidText(BaseModel):
    """Every string in the model is valid UTF-8, also when assigned later (it goes out as JSON)."""

    model_config = ConfigDict(validate_assignment=True)


class Execution(_ValidText):
    """One tool call of a run: what was called, and what came of it."""

    tool: ValidText
    arguments: Annotated[dict[str, Any] | str, AfterValidator(valid_utf8_value)]
    ok: bool
    result: ValidText | None = None
    error: ValidText | None = None
    round: int
    duration_s: float
    cached: bool = False


class RunUsage(BaseModel):
    """What a run cost; `recovered_calls` counts tool calls the model wrote as text."""

    llm_calls: int = 0
    prompt_tokens: int = 0
    completion_tokens: int = 0
    wall_s: float = 0.0
    cache_hits: int = 0
    cache_misses: int = 0
    recovered_calls: int = 0

    def plus(self, other: RunUsage) -> RunUsage:
        """This usage and `other` added up (wall time too: the runs were one after the other)."""
        added = {name: getattr(self, name) + getattr(other, name) for name in RunUsage.model_fields}
        added["wall_s"] = round(added["wall_s"], 6)
        return RunUsage(**added)

    def count(self, turn: AssistantTurn) -> None:
        """Add one LLM call: its tokens and the calls recovered from its text."""
        self.llm_calls += 1
        self.recovered_calls += turn.recovered
        if turn.usage is not None:
            self.prompt_tokens += turn.usage.prompt_tokens
            self.completion_tokens += turn.usage.completion_tokens


class CategoryResult(_ValidText):
    """The outcome of one category call.

    `missing`/`question` are set for `insufficient_input`; `suggestion` for
    `no_suitable_tool`. `remainder` is the part of the objective that this
    category did its share of but could not finish (it declined the rest).
    `declined` names the categories that declined the same call before this one
    ran it (the router's retry in the next-ranked category).
    """

    category: ValidText
    status: RunStatus
    summary: ValidText
    executions: list[Execution] = Field(default_factory=list)
    iterations: int = 0
    usage: RunUsage = Field(default_factory=RunUsage)
    missing: list[ValidText] | None = None
    question: ValidText | None = None
    suggestion: ValidText | None = None
    remainder: ValidText | None = None
    declined: list[ValidText] | None = None

    def to_json(self) -> str:
        """The whole result as compact JSON (unset optional fields left out)."""
        return self.model_dump_json(exclude_none=True)

    def for_agent(self) -> str:
        """The result as a main agent's LLM reads it: JSON without timings, rounds or usage.

        Those are for programs (`to_json`); to the LLM they are tokens that say nothing
        about the task. A tool result that is JSON is nested as JSON, not as an escaped string.
        """
        fields = {"category", "status", "summary", "missing", "question", "suggestion"}
        fields |= {"remainder", "declined"}
        view = self.model_dump(include=fields, exclude_none=True)
        view["executions"] = [
            {"tool": e.tool, "arguments": e.arguments}
            | ({"result": _nested(e.result)} if e.ok else {"error": e.error})
            for e in self.executions
        ]
        return json.dumps(view, ensure_ascii=False, separators=(",", ":"))


def _nested(text: str | None) -> Any:
    """`text` parsed when it is a JSON object or array, else `text` itself."""
    if text is None or not text.lstrip().startswith(("{", "[")):
        return text
    try:
        return loads(text)
    except ValueError:  # also a result nested too deep to send back as JSON
        return text
