"""Guards: the rules that second-guess a model, as hooks at the stages of a round.

A *guard* (`base.Guard`, one class per rule) holds a call, replaces an answer,
asks again, routes, or stops a run; it returns that action and the loop carries
it out. `ALL` lists every guard in the order each stage asks them; a *profile*
is the list of guards in force (`capable`: none; `small`: all), and `Guards`
holds it with its budgets and texts. The stage modules hold the guards:
`reply`, `names`, `calls`, `results`, `answer`; `findings`, `grounding`,
`spread`, `note` and `main_checks` what they read.
"""

from .base import (
    Action,
    AskAgain,
    Guard,
    GuardCounts,
    Hold,
    Leg,
    Loop,
    Replace,
    Route,
    Stage,
    Stop,
)
from .profile import ALL, GUARDS, PROFILES, AfterRound, Guards, ProfileName, guard_table
from .stages import AnswerSeen, CallsSeen, NamesSeen, ReplySeen, ResultsSeen

__all__ = [
    "ALL",
    "GUARDS",
    "PROFILES",
    "Action",
    "AfterRound",
    "AnswerSeen",
    "AskAgain",
    "CallsSeen",
    "Guard",
    "GuardCounts",
    "Guards",
    "Hold",
    "Leg",
    "Loop",
    "NamesSeen",
    "ProfileName",
    "Replace",
    "ReplySeen",
    "ResultsSeen",
    "Route",
    "Stage",
    "Stop",
    "guard_table",
]
