"""The limits of a category's runs, with their defaults in one place.

`CategoryManager`, `Shortlist` and the grouping check take their defaults from
`LIMITS`; the config's `defaults` section derives its own from it, and level 3
merges a category's overrides over that section
(`meta_tools.router.from_config.category_limits`).
"""

from __future__ import annotations

from dataclasses import dataclass

__all__ = ["LIMITS", "Limits"]


@dataclass(frozen=True, slots=True)
class Limits:
    """How far one category's runs may go.

    Attributes:
        max_iterations: rounds of tool calls before a forced summary.
        tool_timeout_s: timeout of each tool call.
        max_tools_per_prompt: above this many tools, each call is offered a shortlist.
        max_calls_per_round: tool calls run from one LLM turn.
        max_tool_chars_per_prompt: above this many characters of tool definitions, too
            (None: no such limit).
        abstain_below: the shortlist declines when the best tools cover less than this
            share of the objective's words (None: never).
        max_result_chars: longer tool outputs are truncated with a marker.
        category_memory: past runs (objective + summary) remembered per session.
    """

    max_iterations: int = 5
    tool_timeout_s: float = 30.0
    max_tools_per_prompt: int = 20
    max_calls_per_round: int = 16
    max_tool_chars_per_prompt: int | None = 12_000
    abstain_below: float | None = None
    max_result_chars: int = 4000
    category_memory: int = 10


LIMITS = Limits()
"""The defaults."""
