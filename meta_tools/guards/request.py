"""Guards of the request stage: what the model is offered before it replies."""

from __future__ import annotations

from typing import ClassVar

from .base import Guard, Loop, Stage

__all__ = ["FewTools", "RequestGuard"]


class RequestGuard(Guard):
    """A guard of the request stage: read by the loop as it builds its request."""

    stage: ClassVar[Stage] = "request"


class FewTools(RequestGuard):
    """Seen with the 1.5B on the tuning part of the StableToolBench split (3531772), over
    categories of up to 200 tools offered 8 a call, best first: its calls to the first two
    tools offered were the gold tool 20 times in 26, to the fifth to eighth 1 time in 7 (a
    neighbouring service: `BMI_v2` for `Body_Mass_Index_BMI_Calc`). A gold tool is among
    the first 5 for 0.91 of query-category pairs, against 0.94 among 8."""

    name = "few_tools"
    loops: ClassVar[frozenset[Loop]] = frozenset({"category"})
    does = (
        "Offers a category's model at most 5 tools a call, the shortlist's best for the"
        " task, when the task's words reach at least that many: a small model's choice"
        " among more goes to a neighbour of the tool it needs."
    )
    tools_a_call: ClassVar[int] = 5
