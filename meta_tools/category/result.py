"""`CategoryResult`: what one category call returns to the main agent (as compact JSON)."""

from __future__ import annotations

from typing import Any, Literal

from pydantic import BaseModel, Field

__all__ = ["CategoryResult", "Execution", "RunStatus", "RunUsage", "truncate"]

RunStatus = Literal["success", "insufficient_input", "no_suitable_tool", "max_iterations", "failed"]


def truncate(text: str, limit: int) -> str:
    """Cut `text` to `limit` characters with a visible marker saying how much was cut."""
    if len(text) <= limit:
        return text
    cut = len(text) - limit
    return f"{text[:limit]}…[truncated {cut} characters]"


class Execution(BaseModel):
    """One tool call of a run: what was called, and what came of it."""

    tool: str
    arguments: dict[str, Any] | str
    ok: bool
    result: str | None = None
    error: str | None = None
    round: int
    duration_s: float
    cached: bool = False


class RunUsage(BaseModel):
    llm_calls: int = 0
    prompt_tokens: int = 0
    completion_tokens: int = 0
    wall_s: float = 0.0
    cache_hits: int = 0
    cache_misses: int = 0


class CategoryResult(BaseModel):
    """The outcome of one category call.

    `missing`/`question` are set for `insufficient_input`; `suggestion` for
    `no_suitable_tool`.
    """

    category: str
    status: RunStatus
    summary: str
    executions: list[Execution] = Field(default_factory=list)
    iterations: int = 0
    usage: RunUsage = Field(default_factory=RunUsage)
    missing: list[str] | None = None
    question: str | None = None
    suggestion: str | None = None

    def to_json(self) -> str:
        """Compact JSON for the main agent (unset optional fields left out)."""
        return self.model_dump_json(exclude_none=True)
