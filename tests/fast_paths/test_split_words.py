"""mechanisms/words: many raw words of a ChaCha generator drawn in two threads are the words of
one draw, and leave the generator where one draw leaves it (so the Bernoulli sample and every
later draw are byte for byte the same)."""

from __future__ import annotations

import numpy as np
import pytest

from crowdsafe.mechanisms import words as words_module
from crowdsafe.randomness import Randomness


@pytest.mark.parametrize("before", [0, 1, 3, 7, 8, 15, 16, 17])
@pytest.mark.parametrize("n", [2, 3, 17, 33, 100, 1001])
def test_two_threads_draw_the_words_of_one(monkeypatch, before, n):
    monkeypatch.setattr(words_module, "SPLIT_FROM", 0)
    split, single = Randomness(11).generator, Randomness(11).generator
    split.integers(0, 1 << 64, size=before, dtype=np.uint64)
    single.integers(0, 1 << 64, size=before, dtype=np.uint64)
    got = words_module.words(split, n)
    assert got.dtype == np.uint64
    assert got.tolist() == single.integers(0, 1 << 64, size=n, dtype=np.uint64).tolist()
    # the state left behind, read by the next draws
    assert split.integers(0, 1 << 64, size=40, dtype=np.uint64).tolist() == \
        single.integers(0, 1 << 64, size=40, dtype=np.uint64).tolist()
    assert split.random(5).tolist() == single.random(5).tolist()


def test_an_odd_counter_is_one_draw(monkeypatch):
    monkeypatch.setattr(words_module, "SPLIT_FROM", 0)
    split, single = Randomness(2).generator, Randomness(2).generator
    for g in (split, single):
        g.integers(0, 1 << 32, size=1, dtype=np.uint32)  # one 32-bit output: the counter is odd
    assert words_module._split(split, 100) is None
    assert words_module.words(split, 100).tolist() == single.integers(0, 1 << 64, size=100, dtype=np.uint64).tolist()


def test_other_generators_and_few_words_are_one_draw():
    assert words_module._split(np.random.default_rng(1), 1 << 22) is None
    assert words_module._split(Randomness(1).generator, 10) is None
    assert words_module._split(Randomness(1).generator, 1 << 22) is not None


def test_the_bernoulli_sample_is_unchanged(monkeypatch):
    masks = []
    for split_from in (0, 1 << 40):
        monkeypatch.setattr(words_module, "SPLIT_FROM", split_from)
        stream = Randomness(5)
        masks.append((stream.bernoulli(999, 0.3).tolist(), stream.bernoulli(77, 0.6).tolist()))
    assert masks[0] == masks[1]
