"""Raw 64-bit words of a generator, drawn in two threads when there are many.

:func:`~crowdsafe.mechanisms.exact.bernoulli_float` reads one 64-bit word per row:
``generator.integers(0, 2**64, dtype=uint64)``, each word one raw output of the bit generator.
The secure source (:mod:`crowdsafe.randomness`) is ChaCha20, a stream cipher in counter mode: the
word at position i of the stream is a function of the key and i alone, so the words of rows
``[m, n)`` can be computed without those of rows ``[0, m)``. :func:`words` draws many words as two
halves at once, the second from a copy of the generator moved to where the first half ends;
NumPy draws without the GIL, so the halves run on two cores.

Why the words are the same (not just the same distribution): a ChaCha20 state is its key, its
counter ``ctr`` (how many 32-bit outputs were used; a 64-bit word is two) and the current block
of 16 outputs, which it makes again from the key and the counter when ``ctr`` reaches a multiple
of 16. The second half starts at ``ctr + 2m`` with m chosen so that this is a multiple of 16: its
first word is made from a fresh block, exactly the one the single draw reaches there, and
every later word follows from the key and the counter as in the single draw. After the draw, the
generator takes the second copy's state: it is where one draw of n words leaves it (the same
counter and block), so what is drawn next is unchanged too. Anything else (another bit
generator, an odd counter: a 32-bit output was used alone before, few words) is one draw, as
before. ``tests/fast_paths/test_split_words.py`` compares the words and the states left behind.
"""

from __future__ import annotations

import copy
from concurrent.futures import ThreadPoolExecutor

import numpy as np

#: From this many words on, :func:`words` draws them in two threads: at 1M words 8.6 ms against
#: 14.3 ms in one (the thread costs about 0.1 ms; at 100k words, 1.1 against 1.4 ms).
SPLIT_FROM = 1 << 17
_BLOCK = 16  # 32-bit outputs per ChaCha block
_MASK64 = (1 << 64) - 1


def words(generator: np.random.Generator, n: int) -> np.ndarray:
    """``generator.integers(0, 2**64, size=n, dtype=np.uint64)``, and the generator left where
    that draw leaves it; in two threads for at least :data:`SPLIT_FROM` words of a ChaCha
    generator (module docstring)."""
    first = _split(generator, n)
    if first is None:
        return generator.integers(0, 1 << 64, size=n, dtype=np.uint64)
    bits = generator.bit_generator
    later = copy.deepcopy(bits)
    state = later.state
    ctr = int(state["state"]["ctr"][0]) + (int(state["state"]["ctr"][1]) << 64) + 2 * first
    state["state"]["ctr"] = np.array([ctr & _MASK64, (ctr >> 64) & _MASK64], dtype=np.uint64)
    later.state = state
    out = np.empty(n, dtype=np.uint64)
    with ThreadPoolExecutor(max_workers=1) as pool:
        second = pool.submit(np.random.Generator(later).integers, 0, 1 << 64, size=n - first, dtype=np.uint64)
        out[:first] = generator.integers(0, 1 << 64, size=first, dtype=np.uint64)
        out[first:] = second.result()
    bits.state = later.state
    return out


def _split(generator: np.random.Generator, n: int) -> int | None:
    """How many words the first thread draws, or None for one draw."""
    if n < SPLIT_FROM:
        return None
    bits = generator.bit_generator
    if type(bits).__name__ != "ChaCha" or type(bits).__module__.split(".")[0] != "randomgen":
        return None
    state = bits.state.get("state", {})
    if "ctr" not in state or "block" not in state:
        return None
    ctr = int(state["ctr"][0])
    if ctr % 2:
        return None
    first = n // 2 + (-(ctr + 2 * (n // 2)) % _BLOCK) // 2
    return first if 0 < first < n else None


__all__ = ["SPLIT_FROM", "words"]
