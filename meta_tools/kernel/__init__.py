"""The one round loop every agent here runs: the category's, the main agent's and a flat one's.

A round goes request → reply → names → calls → execute → results → answer
(`loop.run_rounds`). What differs between the loops (what a call is, how a
batch runs, how a turn is classified, how the loop ends) is a `loop.RoundSpec`;
what they share (the stages in order, handed to the guards in force; a batch's
copies and repeats) is here.
"""

from .batch import call_key, once, only_repeats
from .loop import OUT_OF_ROUNDS, Again, Batch, Finish, RoundSpec, Step, run_rounds

__all__ = [
    "OUT_OF_ROUNDS",
    "Again",
    "Batch",
    "Finish",
    "RoundSpec",
    "Step",
    "call_key",
    "once",
    "only_repeats",
    "run_rounds",
]
