"""Where a main-agent call goes: a category call in the shape the model wrote it.

A small model calls a category by a tool's name, with a tool's own arguments, or
names a category that does not exist, and writes some calls as text to names no
category has. These functions turn such calls into category calls (guard
`tool_name_route`), or say which category a name means.
"""

from __future__ import annotations

import json
from collections.abc import Callable

from ..exceptions import CategoryNotFoundError
from ..guards.main_checks import as_text
from ..llm.recovery import offered_name
from ..llm.types import ChatRequest, ToolCall
from ..router.manager import ANY_CATEGORY, MetaManager

__all__ = ["as_category_call", "category_named", "is_category"]


def is_category(meta: MetaManager, name: str) -> bool:
    """Whether `name` is one of `meta`'s category tools (or `any_category`)."""
    try:
        meta.get_category(name)
    except CategoryNotFoundError:
        return name == ANY_CATEGORY
    return True


def as_category_call(meta: MetaManager, call: ToolCall, text: str) -> ToolCall:
    """`call` as a category call, when the model wrote one in another shape.

    Seen with the 1.5B over 2,009 tools: it calls a tool it read of in a
    category's description by the tool's name, or a category with a tool's
    own arguments, or a category that does not exist. A call naming a tool
    goes to the category holding it, any other unknown name to `any_category`
    (the best-ranked category for it); arguments other than `objective` and
    `exact_input` become `exact_input` (JSON), and a missing `objective` is the
    user's message (`text`). The tool message still answers the call by its id.
    """
    if not isinstance(call.arguments, dict):
        return call
    arguments = dict(call.arguments)
    named = ""  # the name the model wrote when it is no category: kept in the input
    if call.name == ANY_CATEGORY:
        slug = ANY_CATEGORY
    else:
        try:
            slug = meta.get_category(call.name).slug
        except CategoryNotFoundError:
            holder = meta.tool_holder(call.name)
            slug, named = (ANY_CATEGORY if holder is None else holder.slug), call.name
    objective = arguments.pop("objective", None)
    exact_input = arguments.pop("exact_input", None)
    if isinstance(objective, str) and isinstance(exact_input, str) and not arguments:
        return call if slug == call.name else call.model_copy(update={"name": slug})
    if not isinstance(objective, str) or not objective.strip():
        objective = text
    parts = [] if exact_input is None else [as_text(exact_input)]
    if arguments:
        parts.append(f"{named} {json.dumps(arguments, ensure_ascii=False)}".lstrip())
    elif named:
        parts.insert(0, named)
    arguments = {"objective": objective, "exact_input": "\n".join(parts) or text}
    return call.model_copy(update={"name": slug, "arguments": arguments})


def category_named(meta: MetaManager, request: ChatRequest) -> Callable[[str], str | None]:
    """The category a name means: one `request` offers, or the one holding a tool."""
    offered = [t.name for t in request.tools]

    def category_for(name: str) -> str | None:
        found = offered_name(name, offered)
        if found is not None:
            return found
        holder = meta.tool_holder(name)
        return None if holder is None else holder.slug

    return category_for
