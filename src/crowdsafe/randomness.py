"""The one source of randomness that every sampling and noise step draws from.

By default, draws come from ChaCha20 (20 rounds, a cryptographically secure stream cipher) keyed
with 256 bits from the operating system's CSPRNG (``os.urandom``): an attacker who sees outputs
cannot predict or reconstruct other draws. The stream is exposed as a NumPy ``Generator`` so every
draw is vectorised.

Bernoulli masks (:meth:`Randomness.bernoulli`) are exact for the float probability given: a
row's uniform is compared with the probability's binary expansion, 64 bits from the stream at a
time, and the rare rows tied on those bits read their next bits from a second stream of the same
key, far along ChaCha20's 128-bit counter (:func:`crowdsafe.mechanisms.exact.bernoulli_float`).

A seed makes a run reproducible for tests and experiments. A seeded run is *not fit for release*:
anyone who learns the seed can undo the noise or the sampling. Certificates read
:meth:`Randomness.describe` and say so.
"""

from __future__ import annotations

import os
from dataclasses import dataclass, field

import numpy as np
from randomgen import ChaCha

from crowdsafe.errors import ParameterError
from crowdsafe.mechanisms.exact import bernoulli_float

_CHACHA_ROUNDS = 20
#: Where the tie stream starts on ChaCha20's 128-bit counter: the main stream, starting at 0,
#: would have to draw 2^127 outputs to reach it.
_TIE_COUNTER = 1 << 127


def _secure_key() -> int:
    return int.from_bytes(os.urandom(32), "little")


@dataclass
class Randomness:
    """A random stream: secure by default, reproducible when given a ``seed``.

    Pass one ``Randomness`` down through a whole job; use :meth:`spawn` for independent streams
    (for example one per partition).
    """

    seed: int | None = None
    generator: np.random.Generator = field(init=False, repr=False)
    _seed_sequence: np.random.SeedSequence | None = field(init=False, repr=False, default=None)
    _tie_generator: np.random.Generator | None = field(init=False, repr=False, default=None)

    def __post_init__(self) -> None:
        if self.seed is None:
            self.generator = np.random.Generator(ChaCha(key=_secure_key(), rounds=_CHACHA_ROUNDS))
        else:
            if isinstance(self.seed, bool) or not isinstance(self.seed, (int, np.integer)):
                raise ParameterError(f"seed must be a whole number, got {_seed_text(self.seed)}", parameter="seed")
            if self.seed < 0:
                raise ParameterError(f"seed must be non-negative, got {self.seed}", parameter="seed")
            self._seed_sequence = np.random.SeedSequence(int(self.seed))
            self.generator = np.random.Generator(
                ChaCha(seed=self._seed_sequence, rounds=_CHACHA_ROUNDS)
            )

    @classmethod
    def from_seed_sequence(cls, seed: int, sequence: np.random.SeedSequence) -> Randomness:
        """A seeded stream driven by ``sequence`` (used by :meth:`spawn`)."""
        obj = cls.__new__(cls)
        obj.seed = seed
        obj._seed_sequence = sequence
        obj._tie_generator = None
        obj.generator = np.random.Generator(ChaCha(seed=sequence, rounds=_CHACHA_ROUNDS))
        return obj

    @property
    def seeded(self) -> bool:
        """True when the stream is reproducible from a seed (tests, experiments)."""
        return self.seed is not None

    @property
    def fit_for_release(self) -> bool:
        """Only unseeded, OS-keyed streams may produce a release."""
        return self.seed is None

    def spawn(self, n: int) -> list[Randomness]:
        """Return ``n`` independent streams: fresh OS keys, or children of the seed."""
        if self.seed is None:
            return [Randomness() for _ in range(n)]
        assert self._seed_sequence is not None
        return [Randomness.from_seed_sequence(self.seed, s) for s in self._seed_sequence.spawn(n)]

    def bernoulli(self, n: int, p: float) -> np.ndarray:
        """A boolean mask of length ``n`` whose entries are True independently with probability
        exactly p (the float's value): :func:`~crowdsafe.mechanisms.exact.bernoulli_float`, one
        64-bit word of :attr:`generator` per row (none when p = 1), rows tied on it continued
        from :meth:`ties`. Drawing n rows in batches gives the mask of one draw of n rows."""
        return bernoulli_float(self.generator, self.ties, n, p)

    def ties(self) -> np.random.Generator:
        """The stream that continues :meth:`bernoulli`'s tied rows, made on first use: seeded, the
        same key as :attr:`generator` with ChaCha20's counter started at 2^127 (so it does not
        depend on when it is made, nor shift the main stream or :meth:`spawn`); unseeded, a fresh
        OS key."""
        if self._tie_generator is None:
            if self._seed_sequence is None:
                bits = ChaCha(key=_secure_key(), rounds=_CHACHA_ROUNDS)
            else:
                bits = ChaCha(seed=self._seed_sequence, counter=_TIE_COUNTER, rounds=_CHACHA_ROUNDS)
            self._tie_generator = np.random.Generator(bits)
        return self._tie_generator

    def describe(self) -> dict[str, object]:
        """What a certificate records about the randomness that ran."""
        return {
            "source": "ChaCha20 keyed from the OS CSPRNG" if self.seed is None else "ChaCha20, seeded",
            "seeded": self.seeded,
            "reproducible": self.seeded,
            "fit_for_release": self.fit_for_release,
        }


def _seed_text(value: object) -> str:
    """A seed that is not a whole number, for its refusal: a NumPy generator (which other
    libraries take as ``random_state``) is named with why it is not taken."""
    if type(value).__module__.startswith("numpy.random"):
        return (f"a numpy.random.{type(value).__name__}: crowdsafe draws every coin from its own ChaCha20 stream "
                "(None, the default: keyed from the operating system; an int seed: reproducible and NOT fit for "
                "release), never from a NumPy generator")
    return repr(value)


def as_randomness(value: Randomness | int | None) -> Randomness:
    """Accept a ``Randomness``, a seed, or None (secure) wherever an API takes randomness."""
    if isinstance(value, Randomness):
        return value
    return Randomness(seed=value)


#: Bits of a uniform's first cell: U = (i + V) / 2^53 with i uniform on 53 bits (see :func:`gumbel_cells`).
CELL_BITS = 53


def gumbel_cells(generator: np.random.Generator, size: int) -> np.ndarray:
    """The first 53 bits of ``size`` independent uniforms U on (0, 1), as int64 cells i: U lies in
    [i/2^53, (i + 1)/2^53). The remaining bits of each U are drawn only when needed (see
    :func:`gumbel_enclosure` and ``selection.mechanism``), so G = −log(−log U) is an exact
    standard Gumbel known to lie in an interval."""
    return generator.integers(0, 1 << CELL_BITS, size=size, dtype=np.int64)


#: Relative outward margin of :func:`gumbel_enclosure`: libm's log is accurate to a few ulp
#: (~1e-16 relative); 1e-9 is generous.
ENCLOSURE_MARGIN = 1e-9


def gumbel_enclosure(cells: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """(lo, hi) with lo ≤ −log(−log U) ≤ hi for every U in the cell [i/2^53, (i + 1)/2^53).

    G is increasing in U, so the ends are G at the cell's ends, computed in float64 (the ends are
    exact doubles) and widened outward by 1e-9·(1 + |G|), far more than any rounding of two logs.
    Cell 0 has lo = −inf and the last cell hi = +inf.
    """
    cells = np.asarray(cells, dtype=np.int64)
    with np.errstate(divide="ignore"):
        lo = -np.log(-np.log(cells.astype(np.float64) * 2.0**-CELL_BITS))
        hi = -np.log(-np.log((cells + 1).astype(np.float64) * 2.0**-CELL_BITS))
    lo -= ENCLOSURE_MARGIN * (1.0 + np.abs(lo))
    hi += ENCLOSURE_MARGIN * (1.0 + np.abs(hi))
    return lo, hi
