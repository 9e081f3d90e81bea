"""The grounding check replayed on the demo runs recorded in `benchmarks/results/`."""

from benchmarks.grounding_replay import replay_demo


def test_no_right_demo_run_would_have_been_held_back_and_some_wrong_ones_would() -> None:
    counts = replay_demo()
    right = sum(n for (correct, _), n in counts.items() if correct)
    assert right > 100  # the recorded runs were read
    assert counts[True, True] == 0
    assert counts[False, True] >= 1  # `calculate("2 * 3600")` to book a flight
    # a made-up date for "What weekday was my birthday?": the tool shares one word with it
    assert counts[False, True] > 6
