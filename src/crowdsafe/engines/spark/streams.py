"""One independent random stream per Spark partition.

A :class:`PartitionStreams` is a small, picklable recipe shipped to the executors. In release
mode (unseeded) it carries no key at all: every partition keys its own ChaCha20 stream from the
executor's OS CSPRNG, so no seed is shared across executors. In seeded mode (tests,
experiments) partition ``i`` gets the child ``i`` of a seed sequence spawned from the driver's
seed, so a run is reproducible for a fixed partitioning and still marked not fit for release.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import cast

import numpy as np

from crowdsafe.randomness import Randomness


@dataclass(frozen=True)
class PartitionStreams:
    seed: int | None
    entropy: int | None = None
    spawn_key: tuple[int, ...] = ()

    @classmethod
    def from_randomness(cls, randomness: Randomness) -> PartitionStreams:
        """A recipe derived from (and consuming one child of) the driver's stream."""
        if not randomness.seeded:
            return cls(seed=None)
        sequence = randomness._seed_sequence
        assert sequence is not None
        child = sequence.spawn(1)[0]
        return cls(seed=randomness.seed, entropy=int(cast(int, child.entropy)), spawn_key=tuple(child.spawn_key))

    @property
    def fit_for_release(self) -> bool:
        return self.seed is None

    def for_partition(self, index: int) -> Randomness:
        """The stream of partition ``index`` (call on the executor)."""
        if self.seed is None:
            return Randomness()
        sequence = np.random.SeedSequence(self.entropy, spawn_key=self.spawn_key + (int(index),))
        return Randomness.from_seed_sequence(self.seed, sequence)
