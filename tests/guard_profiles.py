"""Guard profiles for tests of one guard at a time."""

from __future__ import annotations

from meta_tools.guards import Guards

#: The guards that answer with results instead of a model call restating them.
HAND_UPS = ("hand_up_result", "results_as_answer")

SMALL_EVERY_TURN = Guards("small", disable=HAND_UPS)
"""The small profile with every model turn kept: for the tests of the other guards, whose
scripts answer after the results (the hand-ups have their own tests,
`tests/category/test_hand_up.py`, and their price is in `tests/capable`)."""
