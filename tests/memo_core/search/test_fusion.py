"""Score fusion, as plain functions."""

from __future__ import annotations

import pytest

from memo_core.search.fusion import fuse, minmax, rank


@pytest.mark.parametrize(
    ("scores", "expected"),
    [
        ([], {}),
        ([(1, 5.0)], {1: 1.0}),
        ([(1, 2.0), (2, 2.0)], {1: 1.0, 2: 1.0}),
        ([(1, 10.0), (2, 5.0), (3, 0.0)], {1: 1.0, 2: 0.5, 3: 0.0}),
        ([(1, -1.0), (2, -3.0)], {1: 1.0, 2: 0.0}),
    ],
)
def test_minmax(scores, expected) -> None:
    assert minmax(scores) == pytest.approx(expected)


def test_fuse_weights_and_one_sided_hits() -> None:
    lex = [(1, 9.0), (2, 5.0), (3, 1.0)]
    vec = [(2, 0.9), (4, 0.8), (1, 0.1)]
    fused = fuse(lex, vec, dense_weight=0.3)
    got = {cid: (score, sides) for cid, score, sides in fused}
    assert got[1] == (pytest.approx(0.7), ("lex", "vec"))
    assert got[2][0] == pytest.approx(0.7 * 0.5 + 0.3) and got[2][1] == ("lex", "vec")
    assert got[4] == (pytest.approx(0.3 * 0.875), ("vec",))
    assert got[3] == (pytest.approx(0.0), ("lex",))
    assert [cid for cid, _, _ in fused] == [1, 2, 4, 3]


def test_fuse_with_one_side_empty_keeps_the_other_order() -> None:
    assert [c for c, _, _ in fuse([], [(5, 0.2), (6, 0.9)], 0.2)] == [6, 5]
    assert [c for c, _, _ in fuse([(5, 1.0), (6, 3.0)], [], 0.2)] == [6, 5]


def test_rank_pools_candidates_of_several_collections() -> None:
    # (collection, chunk) keys: each collection's best is not 1.0 by itself, the pool's is.
    lex = [(("a", 1), 9.0), (("b", 1), 3.0), (("a", 2), 1.0), (("b", 2), 2.0)]
    vec = [(("b", 1), 0.5), (("a", 1), 0.4)]
    assert [key for key, _, _ in rank(lex, vec, "lex", 3, 0.2)] == [("a", 1), ("b", 1), ("b", 2)]
    assert [key for key, _, _ in rank(lex, vec, "vec", 5, 0.2)] == [("b", 1), ("a", 1)]
    hybrid = rank(lex, vec, "hybrid", 2, 0.2)
    assert [key for key, _, _ in hybrid] == [("a", 1), ("b", 1)]
    assert hybrid[0][2] == ("lex", "vec")


@pytest.mark.parametrize(
    ("policy", "strength", "weight"),
    [
        ({}, 0.0, 1.0),  # the engine's: vectors alone where no word matches
        ({}, 2.0, 0.1),
        ({"dense_top": 0.7, "dense_weight": 0.05}, 0.0, 0.7),  # stray words still count
        ({"dense_top": 0.7, "dense_weight": 0.05}, 9.0, 0.05),
        (
            {
                "dense_top": 0.7,
                "dense_weight": 0.05,
                "lex_full_strength": 1.5,
                "lex_strength_power": 2.0,
            },
            0.75,
            0.05 + 0.65 * 0.75,
        ),  # fmt: skip
    ],
)
def test_the_vectors_weight_runs_from_dense_top_to_dense_weight(policy, strength, weight) -> None:
    from memo_core.search.fusion import weight_at
    from memo_core.tuning import Tuning

    assert weight_at(strength, Tuning().with_fusion(policy)) == pytest.approx(weight)


@pytest.mark.parametrize("bad", [{"dense_top": 1.5}, {"dense_weight": 0.8, "dense_top": 0.5}])
def test_a_dense_top_below_the_weight_or_above_1_is_refused(bad) -> None:
    from memo_core.tuning import Tuning

    with pytest.raises(ValueError, match="dense_top"):
        Tuning().with_fusion(bad)
