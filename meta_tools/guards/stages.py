"""What each stage of a round shows its guards: one record per stage, built by the loop.

A loop builds a stage's record only when a guard of that stage is in force
(`Guards.acts_at`), so a profile without guards costs no work.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field

from ..llm.quotes import Quotes
from ..llm.types import AssistantTurn, ChatRequest, ToolCall, ToolDefinition
from ..tools.base import BaseTool
from .base import GuardCounts, Loop, Result, RunView
from .note import Note

__all__ = ["AnswerSeen", "CallsSeen", "NamesSeen", "ReplySeen", "ResultsSeen"]


@dataclass(slots=True)
class ReplySeen:
    """The reply stage: the model's reply to `request`, as read so far."""

    loop: Loop
    reply: AssistantTurn
    request: ChatRequest
    counts: GuardCounts
    empty_counts: bool = False
    """Whether an empty reply is answered with a note now (a category, before results)."""
    text: str = ""
    """The main agent's: the user's message."""
    called: bool = False
    """Whether a category was called for this question already (the main agent)."""
    category_for: Callable[[str], str | None] | None = None
    """The main agent's: the category a name means (offered, or holding a tool of that name)."""
    unoffered: Callable[[], Mapping[str, ToolDefinition]] | None = None
    """A category's: its tools not offered (nor withdrawn) by name, as the model would be
    offered them; asked only for a reply that writes a call no reading understood."""


@dataclass(slots=True)
class NamesSeen:
    """The names stage: the calls of a reply, as the model named them."""

    loop: Loop
    reply: AssistantTurn
    tools: Sequence[BaseTool] = ()
    """A category's tools offered."""
    limit: int = 0
    """A category's calls a round."""
    as_category_call: Callable[[ToolCall], ToolCall] | None = None
    """The main agent's: a call in another shape as the category call it means."""


@dataclass(slots=True)
class CallsSeen:
    """The calls stage: the calls of a reply, before they run."""

    loop: Loop
    calls: Sequence[ToolCall]
    counts: GuardCounts
    run: RunView | None = None
    """A category's run."""
    tools: Sequence[BaseTool] = ()
    told: str = ""
    """What else a category's model was told (its description and usage notes)."""
    heard: Callable[[], str] | None = None
    """The main agent's: what the conversation has heard (instructions, turns, results)."""
    quotes: Callable[[], Quotes] | None = None
    """The main agent's: the calls the messages it did not write hold."""
    is_category: Callable[[str], bool] | None = None


@dataclass(slots=True)
class ResultsSeen:
    """The results stage: what the round's calls returned."""

    loop: Loop
    counts: GuardCounts
    only_repeats: bool = False
    run: RunView | None = None
    """A category's run (its executions hold this round's)."""
    rejected: Sequence[tuple[ToolCall, str]] = ()
    """A category's calls answered instead of run this round."""
    text: str = ""
    """The main agent's: the user's message."""
    calls: Sequence[ToolCall] = ()
    held: Mapping[str, str] = field(default_factory=dict)
    over: Sequence[ToolCall] = ()
    returned: Mapping[str, Result] = field(default_factory=dict)
    """The main agent's: this round's category results, by call id."""
    first_round: bool = False
    new_results: int = 0
    best_other: Callable[[str, str], str | None] | None = None
    """The main agent's: the best-ranked category for a text other than the one named."""


@dataclass(slots=True)
class AnswerSeen:
    """The answer stage: the model's answer in words, before it ends the run or question."""

    loop: Loop
    answer: str
    run: RunView | None = None
    """A category's run, which has run calls (a run that ran none declined)."""
    note: Note = field(default_factory=Note)
    """A category's own last message, which the answer replies to."""
    found_nothing: Sequence[str] = ()
    """A category's tools whose calls found nothing, when none found anything (guard
    `found_nothing`, when in force)."""
    found: str = ""
    """The main agent's: what the category results hold, as text."""
