"""`CategoryResult`: what one category call returns to the main agent (as compact JSON)."""

from __future__ import annotations

from typing import TYPE_CHECKING, Annotated, Any, Literal

from pydantic import AfterValidator, BaseModel, ConfigDict, Field

from .._text import ValidText, valid_utf8_value

if TYPE_CHECKING:
    from ..llm.types import AssistantTurn

__all__ = ["CategoryResult", "Execution", "RunStatus", "RunUsage", "truncate"]

RunStatus = Literal["success", "insufficient_input", "no_suitable_tool", "max_iterations", "failed"]


def truncate(text: str, limit: int) -> str:
    """Cut `text` to `limit` characters with a visible marker saying how much was cut."""
    if len(text) <= limit:
        return text
    cut = len(text) - limit
    return f"{text[:limit]}…[truncated {cut} characters]"


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
    `no_suitable_tool`.
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

    def to_json(self) -> str:
        """Compact JSON for the main agent (unset optional fields left out)."""
        return self.model_dump_json(exclude_none=True)
