"""The neighbouring-input comparator of the privacy boundary (docs/privacy-boundary.md).

A run's public artifacts are turned into one JSON-like tree (dicts, lists, scalars). Two runs on
neighbouring tables (D and D minus one row, same seed, fresh ledgers) are compared field by
field. A field may differ only if its JSON path matches a declared pattern:

- a **DP output** (the release's rows and what is computed from them alone, noisy answers, the
  scheme an ε1-DP mechanism chose), or
- a **custodian-only** field, which must sit inside a part explicitly labelled custodian-only
  (a key whose name contains ``custodian``, e.g. ``for_custodian_only``; a printed line that says
  "for the custodian only").

Everything else must be identical, so a new data-dependent field fails the test. Separately, no
field may look like a hash of the data: a hex string of 32 or more characters that equals a plain
digest of the input (anywhere), or that differs between the runs (outside a custodian-only part,
where the ledger's keyed identity of the dataset may appear).

Paths are written ``a.b[3].c``; patterns use ``*`` for one key or index and ``**`` for any
suffix (``releases[*].rows_published``, ``for_custodian_only.**``).
"""

from __future__ import annotations

import dataclasses
import functools
import hashlib
import math
import re
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from typing import Any

# 12 or more: a digest cut short (a message once printed 16 characters of a keyed identity) is one too
HEX = re.compile(r"(?<![0-9a-fA-F])[0-9a-fA-F]{12,}(?![0-9a-fA-F])")
CUSTODIAN_KEY = re.compile(r"custodian", re.IGNORECASE)
CUSTODIAN_LINE = re.compile(r"for the custodian only", re.IGNORECASE)
LINE = re.compile(r"^(?:.*\.)?(?:stdout|stderr)\[\d+\]$")


@dataclass(frozen=True)
class Difference:
    path: str
    left: Any
    right: Any
    why: str

    def __str__(self) -> str:
        return f"{self.path}: {self.why} ({_short(self.left)} vs {_short(self.right)})"


def _short(value: Any) -> str:
    text = repr(value)
    return text if len(text) <= 80 else text[:77] + "..."


@functools.cache  # a pure function of the text, asked for the same few patterns at every path
def _pattern(pattern: str) -> re.Pattern[str]:
    """A path pattern as a regular expression: ``*`` one key or index, ``**`` anything after."""
    out = []
    i = 0
    while i < len(pattern):
        if pattern.startswith("**", i):
            out.append(r".*")
            i += 2
        elif pattern[i] == "*":
            out.append(r"[^.\[\]]*")
            i += 1
        else:
            out.append(re.escape(pattern[i]))
            i += 1
    return re.compile("".join(out) + r"$")


def matches(path: str, patterns: Iterable[str]) -> bool:
    return any(_pattern(p).match(path) for p in patterns)


def in_custodian_part(path: str) -> bool:
    """True when a key on the path is labelled custodian-only."""
    keys = re.split(r"[.\[]", path)
    return any(CUSTODIAN_KEY.search(k) for k in keys)


def _join(path: str, key: Any) -> str:
    if isinstance(key, int):
        return f"{path}[{key}]"
    return f"{path}.{key}" if path else str(key)


def _equal(a: Any, b: Any) -> bool:
    if isinstance(a, float) and isinstance(b, float) and math.isnan(a) and math.isnan(b):
        return True
    return type(a) is type(b) and a == b or (isinstance(a, (int, float)) and isinstance(b, (int, float))
                                            and not isinstance(a, bool) and not isinstance(b, bool) and a == b)


def differences(left: Any, right: Any, path: str = "") -> list[Difference]:
    """Every leaf path where ``left`` and ``right`` differ (a missing key or a length change is
    reported at the container's path)."""
    if isinstance(left, Mapping) and isinstance(right, Mapping):
        out: list[Difference] = []
        for key in sorted(set(left) | set(right), key=str):
            where = _join(path, key)
            if key not in left or key not in right:
                out.append(Difference(where, left.get(key, "<absent>"), right.get(key, "<absent>"),
                                      "present on one side only"))
            else:
                out.extend(differences(left[key], right[key], where))
        return out
    if isinstance(left, (list, tuple)) and isinstance(right, (list, tuple)):
        if len(left) != len(right):
            return [Difference(path, f"{len(left)} items", f"{len(right)} items", "length differs")]
        out = []
        for i, (a, b) in enumerate(zip(left, right)):
            out.extend(differences(a, b, _join(path, i)))
        return out
    if _equal(left, right):
        return []
    return [Difference(path, left, right, "value differs")]


def leaves(tree: Any, path: str = "") -> Iterable[tuple[str, Any]]:
    if isinstance(tree, Mapping):
        for key, value in tree.items():
            yield from leaves(value, _join(path, key))
    elif isinstance(tree, (list, tuple)):
        for i, value in enumerate(tree):
            yield from leaves(value, _join(path, i))
    else:
        yield path, tree


@dataclass(frozen=True)
class Classification:
    """What may differ between neighbouring runs of one command, declared for review.

    ``dp_outputs``: path patterns of DP outputs (charged) and of what is computed from them
    alone. ``custodian_only``: path patterns of fields that must lie in a part labelled
    custodian-only (the label is checked, not assumed). ``dp_lines``: regular expressions of
    printed lines (``stdout[i]``) that show only DP outputs; a printed line labelled "for the
    custodian only" is custodian-only. A random id drawn before the data is read needs no
    declaration: with one seed it is the same on both tables."""

    dp_outputs: tuple[str, ...] = ()
    custodian_only: tuple[str, ...] = ()
    dp_lines: tuple[str, ...] = ()


@dataclass
class Verdict:
    leaks: list[Difference] = field(default_factory=list)
    allowed: list[Difference] = field(default_factory=list)

    def report(self) -> str:
        return "\n".join(f"  {d}" for d in self.leaks)


def judge(left: Any, right: Any, classification: Classification,
          digests: Iterable[str] = ()) -> Verdict:
    """Compare two runs' artifacts under ``classification``; return the leaks found.

    A difference is allowed if its path is a declared DP output, or a declared custodian-only
    field inside a labelled custodian-only part. Then every hex string of 32+ characters in
    either tree is a leak if it differs between the runs (even at an allowed path: a DP output is
    never a digest), or equals one of ``digests`` (digests of the inputs)."""
    verdict = Verdict()
    for diff in differences(left, right):
        if LINE.match(diff.path) and isinstance(diff.left, str) and isinstance(diff.right, str):
            if all(any(re.search(r, line) for r in classification.dp_lines) for line in (diff.left, diff.right)):
                verdict.allowed.append(diff)
            elif all(CUSTODIAN_LINE.search(line) for line in (diff.left, diff.right)):
                verdict.allowed.append(diff)
            else:
                verdict.leaks.append(diff)
        elif matches(diff.path, classification.dp_outputs):
            verdict.allowed.append(diff)
        elif matches(diff.path, classification.custodian_only):
            if in_custodian_part(diff.path):
                verdict.allowed.append(diff)
            else:
                verdict.leaks.append(dataclasses.replace(
                    diff, why=diff.why + "; declared custodian-only but not in a part labelled custodian-only"))
        else:
            verdict.leaks.append(diff)
    known = {d.lower() for d in digests}
    right_leaves = dict(leaves(right))
    for path, value in leaves(left):
        if not isinstance(value, str):
            continue
        for hexa in HEX.findall(value):
            other = right_leaves.get(path)
            if any(hexa.lower() in digest for digest in known):
                verdict.leaks.append(Difference(path, hexa, other, "a digest of the input data"))
            elif (not isinstance(other, str) or hexa not in other) and not in_custodian_part(path):
                verdict.leaks.append(Difference(path, hexa, other, "a hex string (12+ chars) that depends on the data"))
    return verdict


def digests_of(dataset: Any, raw_files: Iterable[bytes] = ()) -> list[str]:
    """Digests an attacker could compute from a candidate table: the dataset's unkeyed
    fingerprint and plain hashes of its file bytes."""
    out = [dataset.fingerprint()]
    for raw in raw_files:
        for name in ("sha256", "sha1", "md5", "blake2b", "blake2s", "sha512"):
            out.append(hashlib.new(name, raw).hexdigest())
    return out


def normalized(tree: Any, replacements: Mapping[str, str]) -> Any:
    """``tree`` with every occurrence of each key string (e.g. a run's working directory)
    replaced by its value, so paths that differ only by where a run happened compare equal."""
    if isinstance(tree, Mapping):
        return {str(k): normalized(v, replacements) for k, v in tree.items()}
    if isinstance(tree, (list, tuple)):
        return [normalized(v, replacements) for v in tree]
    if isinstance(tree, str):
        for old, new in replacements.items():
            tree = tree.replace(old, new)
        return tree
    return tree
