"""Guards of the request stage: what the model is offered before it replies."""

from __future__ import annotations

from typing import ClassVar

from .base import Guard, Loop, Stage

__all__ = ["ClearRoute", "FewTools", "RequestGuard"]


class RequestGuard(Guard):
    """A guard of the request stage: read by the loop as it builds its request."""

    stage: ClassVar[Stage] = "request"


class FewTools(RequestGuard):
    """Seen with the 1.5B on the tuning part of the StableToolBench split, over categories
    of up to 200 tools offered best first:
    - offered 8 a call (3531772), its calls to the first two tools were the gold tool
      20 times in 26, to the fifth to eighth 1 time in 7 (`BMI_v2` for
      `Body_Mass_Index_BMI_Calc`);
    - offered 5 (6c0a365 and a2f83f0, two samples of 36 queries), its first calls to
      the first two were gold 39 times in 48, to the third to fifth 4 times in 22
      (`MotorsportApi__Categories` with no arguments for `CategoryFlag`, `getTeams`
      for `getTeam`).

    The first two are the shortlist's best for the user's request and its best for the
    category's part of it (`Shortlist.select`). Offered those two, it solved 28 and 24 of the
    36 against 24 and 22, with fewer wrong tool calls. A category of at most `whole` tools
    is offered whole: there the tools differ by what they do, not by a service's name.
    """

    name = "few_tools"
    loops: ClassVar[frozenset[Loop]] = frozenset({"category"})
    does = (
        "Offers a category of more than 5 tools 2 a call, the shortlist's best for the"
        " user's request and for the category's part of it, when the task's words reach"
        " at least that many: a small model's choice among more goes to a neighbour of"
        " the tool it needs."
    )
    tools_a_call: ClassVar[int] = 2
    whole: ClassVar[int] = 5
    """A category of at most this many tools is offered whole."""


class ClearRoute(RequestGuard):
    """Seen with the 1.5B over large catalogs, where the ranking offers the main agent the
    categories within 10% of the best score (`routing.min_score_ratio`), most messages
    get one category, and its call only passes the message on. On two StableToolBench
    tuning samples (36 queries each) the ranking's first category held a gold tool for 34
    and 34 queries, the model's first call for 33 and 32, never where the ranking's did
    not; on a BFCL pooled tuning sample (50 questions), 46 against 45. Its paraphrase
    loses values the category then copies ("Larkspur" for "Larkspur, CA"), and it answers
    itself where a tool was asked for ("5.0 + 3.0 is 8.0").

    Routed so, the seed-3 sample cost 1.36 LLM calls a query instead of 2.83, with as
    many solved (28) and 0.22 wrong tool calls a query instead of 0.36.

    Only a conversation's first message is routed: a later one may lean on earlier
    turns ("and in Paris?") that the message alone does not carry.
    """

    name = "clear_route"
    loops: ClassVar[frozenset[Loop]] = frozenset({"main"})
    does = (
        "Runs the one category the ranking offers a main agent for a conversation's first"
        " message (over more categories than `routing.max_categories`) with that message,"
        " without the model call that would pass it on; the model answers from the"
        " result, or calls more categories, unless the result is the answer."
    )
