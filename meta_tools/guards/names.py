"""Guards of the names stage: what the task and the calls name, read as what they mean."""

from __future__ import annotations

from collections.abc import Iterable
from typing import ClassVar

from .base import Action, Guard, Hold, Loop, Replace, Stage
from .findings import objective_in_words
from .main_checks import QUOTED_CALL, quoted_call
from .spread import spread_turn
from .stages import CallsSeen, NamesSeen

__all__ = ["NamesGuard", "ObjectiveAsName", "SpreadLists", "ToolNameRoute"]


class NamesGuard(Guard):
    """A guard of the names stage."""

    stage: ClassVar[Stage] = "names"

    def on_task(self, objective: str, tools: Iterable[str]) -> str:
        """The objective a category run starts with (before its first request)."""
        return objective

    def on_names(self, seen: NamesSeen) -> Action:
        return None

    def on_calls(self, seen: CallsSeen) -> Action:
        return None


class ObjectiveAsName(NamesGuard):
    name = "objective_as_name"
    loops: ClassVar[frozenset[Loop]] = frozenset({"category"})
    does = "Reads an objective written as a name no tool has (`count_words`) in words."

    def on_task(self, objective: str, tools: Iterable[str]) -> str:
        return objective_in_words(objective, tools)


class ToolNameRoute(NamesGuard):
    name = "tool_name_route"
    loops: ClassVar[frozenset[Loop]] = frozenset({"main"})
    does = (
        "Sends a main-agent call to a tool's name to the category holding it, and one"
        " to an unknown name to the best-ranked category."
    )

    def on_names(self, seen: NamesSeen) -> Action:
        route = seen.as_category_call
        calls = seen.reply.tool_calls
        if route is None or not calls:
            return None
        routed = [route(call) for call in calls]
        return Replace(calls=routed) if routed != calls else None

    def on_calls(self, seen: CallsSeen) -> Action:
        """A call to a tool's name is routed by that name: never one a page wrote."""
        quotes, is_category = seen.quotes, seen.is_category
        if quotes is None or is_category is None:
            return None
        held = {
            c.id: QUOTED_CALL
            for c in seen.calls
            if not is_category(c.name) and quoted_call(c, quotes)
        }
        return Hold(held) if held else None


class SpreadLists(NamesGuard):
    name = "spread_lists"
    loops: ClassVar[frozenset[Loop]] = frozenset({"category"})
    does = "Runs a call that gives lists where its tool takes single values as one call per value."

    def on_names(self, seen: NamesSeen) -> Action:
        spread = spread_turn(seen.reply, seen.tools, seen.limit)
        return Replace(reply=spread) if spread is not seen.reply else None
