"""The merge step at scale: the pair a full search would pick, for about units² cosines."""

import itertools

import numpy as np
import pytest

from meta_tools.grouping.cluster import (
    Merging,
    automatic_k,
    default_max_size,
    dot_products,
    merge_units,
)


def merged_to_k(vectors: np.ndarray, k: int, max_size: int) -> Merging:
    merging = Merging(dot_products(vectors), np.ones(len(vectors)), max_size)
    while merging.alive_count > k and (pair := merging.closest_pair()) is not None:
        merging.merge(*pair)
    return merging


def full_search(merging: Merging) -> tuple[int, int] | None:
    """The closest pair that fits, every live pair looked at (ties: the earlier pair)."""
    best, found = -np.inf, None
    live = np.flatnonzero(merging.alive).tolist()
    for a, b in itertools.combinations(live, 2):
        if merging.sizes[a] + merging.sizes[b] > merging.max_size:
            continue
        cosine = merging.dots[a, b] / (merging.norms[a] * merging.norms[b])
        if cosine > best:
            best, found = cosine, (a, b)
    return found


@pytest.mark.parametrize("count", [400, 800])
def test_tools_that_all_read_alike_take_about_units_squared_cosines(count: int) -> None:
    # Every pair is a tie: a full search after each merge would take about units³ / 2.
    vectors = np.ones((count, 3), dtype=np.float32) / np.float32(np.sqrt(3))
    k = automatic_k(count)
    merging = merged_to_k(vectors, k, default_max_size(count, k))
    assert merging.alive_count == k
    assert merging.cosines <= 2 * count**2


@pytest.mark.parametrize("seed", range(6))
def test_each_merge_is_the_pair_a_full_search_picks(seed: int) -> None:
    # Few distinct small-integer vectors: many exact ties, as in catalogs with twin tools.
    rng = np.random.default_rng(seed)
    vectors = rng.integers(0, 3, size=(60, 4)).astype(np.float32)
    merging = Merging(dot_products(vectors), np.ones(60), 7)
    groups = {u: [u] for u in range(60)}
    while (expected := full_search(merging)) is not None:
        assert merging.closest_pair() == expected
        merging.merge(*expected)
        groups[expected[0]] += groups.pop(expected[1])
    assert merging.closest_pair() is None
    for a, b in itertools.combinations(groups, 2):  # the kept products are the groups' own
        product = vectors[groups[a]].sum(axis=0) @ vectors[groups[b]].sum(axis=0)
        assert merging.dots[a, b] == pytest.approx(product)


def test_the_products_are_those_of_float32_bit_for_bit() -> None:
    # Built in place to save memory, they must not change a single grouping.
    rng = np.random.default_rng(0)
    for count, terms in ((1, 1), (7, 5), (300, 40), (1000, 200)):
        vectors = rng.random((count, terms), dtype=np.float32)
        expected = (vectors @ vectors.T).astype(np.float64)
        assert np.array_equal(dot_products(vectors), expected)


def test_a_thousand_tools_that_read_alike_are_grouped_within_the_bound() -> None:
    vectors = np.ones((1000, 3), dtype=np.float32) / np.float32(np.sqrt(3))
    k = automatic_k(1000)
    bound = default_max_size(1000, k)
    labels = merge_units(vectors, [[i] for i in range(1000)], k, max_size=bound)
    sizes = np.bincount(labels)
    assert len(sizes) == k and sizes.max() <= bound and sizes.sum() == 1000
