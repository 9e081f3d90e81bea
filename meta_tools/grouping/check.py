"""The grouping check: does a grouping of tools into categories route well?

Five findings, each a warning (a grouping that triggers them still works):

- `confusable`: two categories whose names and descriptions overlap so much
  (TF-IDF cosine at least `CONFUSABLE`) that a main agent may pick the wrong one;
- `misplaced`: a tool whose text is closer to another category's profile than
  to its own (by `MISPLACED_MARGIN`). A profile is the category's name and
  description plus its tools' text; the tool itself is left out of its own.
  A tool may be listed in several categories (each can chain it with its own
  tools): it is compared with the categories that do not list it;
- `too_large`: more than `LARGE_FACTOR` × `max_tools_per_prompt` tools, so
  the shortlist drops most tools before the category's LLM sees any;
- `too_small`: a single tool: the main agent pays a category tool for it;
- `uninformative`: a description that adds fewer than two words to its
  category's name and tool names.
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Literal

from ..category.limits import LIMITS
from ..category.shortlist import analyze
from ..tools.base import BaseTool
from .features import TermSpace, tool_terms

__all__ = ["CategoryView", "Finding", "check_grouping"]

CONFUSABLE = 0.5
MISPLACED_MARGIN = 0.1
LARGE_FACTOR = 2
_FILLER = frozenset(
    analyze(
        "tool tools use used using various helper helpers utility utilities function functions"
        " such more"
    )
)

Kind = Literal["confusable", "misplaced", "too_large", "too_small", "uninformative"]


@dataclass(frozen=True)
class CategoryView:
    """What the check needs of a category."""

    name: str
    description: str
    tools: Sequence[BaseTool] = field(default_factory=tuple)
    max_tools_per_prompt: int = LIMITS.max_tools_per_prompt


@dataclass(frozen=True)
class Finding:
    kind: Kind
    category: str
    message: str

    def __str__(self) -> str:
        return f"grouping: {self.message}"


def check_grouping(categories: Sequence[CategoryView]) -> list[Finding]:
    """Every finding on these categories, category by category in their order."""
    findings = _confusable(categories) + _misplaced(categories)
    for category in categories:
        findings += _size(category, categories) + _uninformative(category)
    order = {c.name: i for i, c in enumerate(categories)}
    return sorted(findings, key=lambda f: order.get(f.category, len(order)))


def _label(category: CategoryView) -> list[str]:
    """The words a main agent tells the category by (filler words left out)."""
    return [t for t in analyze(f"{category.name}. {category.description}") if t not in _FILLER]


def _confusable(categories: Sequence[CategoryView]) -> list[Finding]:
    import numpy as np

    if len(categories) < 2:
        return []
    labels = [_label(c) for c in categories]
    space = TermSpace.fit(labels, max_terms=5000, min_documents=1)
    rows = space.vectors(labels)
    similarity = rows @ rows.T
    found = []
    # Only the pairs above the bar are visited (thousands of categories make millions of pairs).
    for i, j in np.argwhere(np.triu(similarity >= CONFUSABLE, k=1)).tolist():
        a, b = categories[i].name, categories[j].name
        found.append(
            Finding(
                "confusable",
                a,
                f"categories {a!r} and {b!r} are described alike (overlap"
                f" {similarity[i, j]:.2f}): a main agent may confuse them; say what"
                " sets each apart",
            )
        )
    return found


def _misplaced(categories: Sequence[CategoryView]) -> list[Finding]:
    """Tools closer to another category's profile than to their own (left out of their own)."""
    import numpy as np

    if len(categories) < 2:
        return []
    tools = [(c, t) for c, category in enumerate(categories) for t in category.tools]
    if not tools:
        return []
    documents = [tool_terms(t) for _, t in tools] + [_label(c) for c in categories]
    space = TermSpace.fit(documents, max_terms=5000)
    rows = space.vectors(documents)
    tool_rows, label_rows = rows[: len(tools)], rows[len(tools) :]
    owner = np.asarray([c for c, _ in tools])
    sums = label_rows * 2.0  # the name and description weigh as two tools
    np.add.at(sums, owner, tool_rows)
    # Cosines with every profile at once; the own profile without the tool, from its norms.
    dots = tool_rows @ sums.T
    norms = np.linalg.norm(sums, axis=1)
    norms[norms == 0] = 1.0
    scores = dots / norms
    positions = np.arange(len(tools))
    self_dot = (tool_rows * tool_rows).sum(axis=1)
    own_dot = dots[positions, owner] - self_dot
    own_norm = np.sqrt(
        np.clip(norms[owner] ** 2 - 2 * dots[positions, owner] + self_dot, 1e-12, None)
    )
    own_score = own_dot / own_norm
    scores[positions, owner] = -np.inf
    # A tool listed in several categories belongs in each: none of them is "elsewhere".
    holders: dict[str, list[int]] = defaultdict(list)
    for c, found in tools:
        holders[found.name].append(c)
    shared = [(p, c) for p, (_, t) in enumerate(tools) for c in holders[t.name]]
    if len(shared) > len(tools):
        rows_at, columns = zip(*shared, strict=True)
        scores[list(rows_at), list(columns)] = -np.inf
    best = scores.argmax(axis=1)
    moved: dict[tuple[int, int], list[str]] = defaultdict(list)
    for position, (own, found) in enumerate(tools):
        if not found.description.strip():
            continue
        if scores[position, best[position]] >= own_score[position] + MISPLACED_MARGIN:
            moved[(own, int(best[position]))].append(found.name)
    findings = []
    for (own, best), names in moved.items():
        shown = ", ".join(map(repr, names[:5])) + (
            f" and {len(names) - 5} more" if len(names) > 5 else ""
        )
        a, b = categories[own].name, categories[best].name
        findings.append(
            Finding(
                "misplaced",
                a,
                f"{len(names)} tool{'s' if len(names) != 1 else ''} of {a!r} read more like"
                f" {b!r}: {shown}; move {'them' if len(names) != 1 else 'it'} or say in the"
                " descriptions what sets the categories apart",
            )
        )
    return findings


def _size(category: CategoryView, categories: Sequence[CategoryView]) -> list[Finding]:
    count, limit = len(category.tools), category.max_tools_per_prompt
    if count > LARGE_FACTOR * limit:
        return [
            Finding(
                "too_large",
                category.name,
                f"{category.name!r} has {count} tools and offers {limit} per call: the"
                " shortlist drops most of them before the LLM chooses; split it",
            )
        ]
    if count == 1 and len(categories) > 1:
        return [
            Finding(
                "too_small",
                category.name,
                f"{category.name!r} has a single tool: the main agent pays a category tool"
                " for it; merge it into a related category",
            )
        ]
    return []


def _uninformative(category: CategoryView) -> list[Finding]:
    said = set(analyze(category.description)) - _FILLER
    known = set(analyze(category.name))
    for found in category.tools:
        known.update(analyze(found.name))
    new = said - known
    if len(new) >= 2 or not category.tools:
        return []
    return [
        Finding(
            "uninformative",
            category.name,
            f"the description of {category.name!r} says little that its name and tool names"
            " do not: say what the tools are for and when to pick this category",
        )
    ]
