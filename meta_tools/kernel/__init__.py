"""The one round loop every agent here runs: the category's, the main agent's and a flat one's.

A round goes request → reply → names → calls → execute → results → answer
(`loop.run_rounds`). What differs between the loops (what a call is, how a
batch runs, how a turn is classified, how the loop ends) is a `loop.RoundSpec`;
what they share (reading the reply, answering one the model did not mean, a
batch's copies and repeats, the end of a loop that keeps repeating) is here.
"""

from .batch import call_key, once, only_repeats
from .loop import OUT_OF_ROUNDS, Again, Batch, Finish, RoundSpec, Step, Verdict, run_rounds
from .reply import read_reply, repeat_verdict, reply_note

__all__ = [
    "OUT_OF_ROUNDS",
    "Again",
    "Batch",
    "Finish",
    "RoundSpec",
    "Step",
    "Verdict",
    "call_key",
    "once",
    "only_repeats",
    "read_reply",
    "repeat_verdict",
    "reply_note",
    "run_rounds",
]
