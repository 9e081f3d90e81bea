"""The held-out split of the StableToolBench queries: drawn once, seeded, committed."""

from __future__ import annotations

import pytest

from benchmarks.catalog import load_split, make_split, split_queries
from benchmarks.recall import clauses, taking_turns


def queries() -> list[dict[str, str]]:
    return [{"qid": f"{s}:{i}", "subset": s} for s in ("A", "B") for i in range(6)]


def test_a_third_of_each_subset_is_drawn_for_test_from_the_unseen_queries_only() -> None:
    seen = {"A:0", "A:1", "B:5"}

    split = make_split(queries(), seed=7, seen=seen)

    assert len(split["test"]) == 4
    assert {q.split(":")[0] for q in split["test"]} == {"A", "B"}
    assert not seen & set(split["test"])
    assert sorted(split["tune"] + split["test"]) == sorted(q["qid"] for q in queries())
    assert make_split(queries(), seed=7, seen=seen) == split  # seeded: the same again


def test_a_subset_without_enough_unseen_queries_cannot_be_split() -> None:
    seen = {f"B:{i}" for i in range(5)}

    with pytest.raises(ValueError, match=r"'B' has 1 unseen of the 2 test queries"):
        make_split(queries(), seed=7, seen=seen)


def test_queries_are_taken_from_one_part_and_a_query_in_none_is_refused() -> None:
    split = {"tune": ["A:0", "A:1"], "test": ["A:2"]}
    asked = [{"qid": "A:2"}, {"qid": "A:0"}, {"qid": "A:1"}]

    assert split_queries(asked, "test", split) == [{"qid": "A:2"}]
    assert split_queries(asked, "tune", split) == [{"qid": "A:0"}, {"qid": "A:1"}]
    assert split_queries(asked, "all", split) == asked
    with pytest.raises(ValueError, match=r"1 queries are in no part of the split"):
        split_queries([*asked, {"qid": "B:9"}], "test", split)


def test_the_committed_split_holds_a_third_or_more_for_test_apart_from_tuning() -> None:
    split = load_split()

    tune, test = set(split["tune"]), set(split["test"])
    assert (split["seed"], len(tune), len(test)) == (49, 255, 130)
    assert not tune & test
    assert len(test) >= (len(tune) + len(test)) / 3
    assert not set(split["seen_before_split"]) & test


def test_rankings_take_turns_by_weight_each_item_once() -> None:
    assert taking_turns([1, 2, 3, 4], [4, 3, 2, 1], (1, 1)) == [1, 4, 2, 3]
    assert taking_turns([1, 2, 3, 4], [4, 3, 2, 1], (2, 1)) == [1, 2, 4, 3]
    assert taking_turns([1, 2, 3, 4], [4, 3, 2, 1], (-1, 1)) == [4, 1, 3, 2]
    assert taking_turns([1, 2, 3, 4], [4, 3, 2, 1], (0, 1)) == [4, 3, 2, 1]


def test_a_request_is_cut_into_sentences_and_also_clauses() -> None:
    request = "Get the rates for EUR. Also, convert 5 USD and then show the news"

    assert clauses(request) == ["Get the rates for EUR.", "Also, convert 5 USD", "show the news"]
