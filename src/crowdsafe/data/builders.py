"""Builders for common generalization hierarchies.

Each builder takes the *domain* (the leaf values) and a data-independent rule, and returns a
:class:`~crowdsafe.data.hierarchy.Hierarchy`. Because the rule does not look at the data, a
hierarchy built here can serve a *strongly safe* recoding (Li, Qardaji and Su 2012): which
generalized value a record gets depends on that record alone.

- :func:`intervals`: numbers to nested intervals, from widths or cut points, with bottom/top coding;
- :func:`ordered_groups`: consecutive runs of ordered values (fixed fan-out or named groups);
- :func:`grouping`: named groups of labels, level by level (categorical attributes);
- :func:`masking`: trailing characters replaced by ``*`` (ZIP codes and the like);
- :func:`dates`: day -> month -> year (and quarter / decade);
- :func:`flat`: value -> ``*`` (suppression only).

Every builder ends with the single root ``*`` (added unless the last level given is already
``*``), so a hierarchy's height never depends on which values happen to be present.
"""

from __future__ import annotations

import datetime as dt
from collections.abc import Iterable, Mapping, Sequence
from decimal import Decimal
from typing import Any

import numpy as np
import polars as pl

from crowdsafe.data.builder_checks import (
    DATE_LEVELS,
    MAX_MASK_LEVELS,
    check_cut_order,
    check_date_levels,
    check_declaration,
    check_finite,
    check_levels_of_cuts,
    check_widths,
    mask_depth,
)
from crowdsafe.data.decimal_bands import band_bounds, decimal_of, decimal_text, grid_texts, number_text
from crowdsafe.data.hierarchy import MISSING_LABEL, ROOT_LABEL, Hierarchy, ObservedHierarchy
from crowdsafe.errors import HierarchyError

ROOT = ROOT_LABEL


def _with_root(levels: list[list[Any]], names: list[str], n: int) -> tuple[list[list[Any]], list[str]]:
    if not levels or set(levels[-1]) != {ROOT}:
        levels.append([ROOT] * n)
        names.append(ROOT)
    return levels, names


def _number(x: float) -> str:
    """A schema number as its exact decimal, shortest (``0.1``, ``1234567.25``; integers as integers)."""
    return number_text(x)


def intervals(
    name: str,
    values: Iterable[float],
    *,
    widths: Sequence[float] | None = None,
    cuts: Sequence[Sequence[float]] | None = None,
    bottom: float | None = None,
    top: float | None = None,
    origin: float = 0.0,
    dtype: pl.DataType | None = None,
) -> Hierarchy:
    """Nested intervals over numeric ``values`` (the leaves, e.g. ``range(17, 91)``).

    Give either ``widths`` (one per level, e.g. ``[5, 10, 20]``: bands ``[origin + m*w,
    origin + (m+1)*w)``) or ``cuts`` (one sorted list of cut points per level). ``bottom`` and
    ``top`` code the tails: values below ``bottom`` become ``<bottom`` and values at or above
    ``top`` become ``>=top`` at every interval level. Levels must nest: every cut point of a
    coarser level must be a cut point of the finer one (so each width must be a whole multiple of
    the one before, exactly as decimals), else :class:`HierarchyError` names the offending cut or
    width. Labels read ``[20, 25)``. Bands are exact in the decimals written (the numbers given and
    each value's shortest text: 6.6 lies in ``[6.6, 6.7)`` at width 0.1), and labels write each
    bound as its exact decimal (:mod:`crowdsafe.data.decimal_bands`). Each value's band is computed
    from the value alone (the rule never looks at the other values, so an outlier costs nothing and
    a band never depends on what is present).
    ``dtype``: the column's type, which the leaves take (Int64 for integers, else Float64); without
    it the leaves are integers when every value given is whole.
    """
    leaves = np.asarray(sorted(set(values)), dtype=float)
    if len(leaves) == 0:
        raise HierarchyError(f"hierarchy '{name}': no values given")
    if np.isnan(leaves).any():
        raise HierarchyError(f"hierarchy '{name}': NaN is not a valid leaf value")
    if (widths is None) == (cuts is None):
        raise HierarchyError(f"hierarchy '{name}': give exactly one of widths or cuts")
    check_levels_of_cuts(name, cuts)
    check_finite(name, widths=widths, cuts=cuts, bottom=bottom, top=top, origin=origin)
    if cuts is not None:
        check_cut_order(name, cuts)
    if bottom is not None and top is not None and bottom >= top:
        raise HierarchyError(f"hierarchy '{name}': bottom {bottom} must lie below top {top}")
    if widths is not None:
        check_widths(name, widths)
        levels = _band_labels(leaves, widths, origin, bottom, top)
        names = [f"width {_number(w)}" for w in widths]
    else:
        cut_levels = _checked_cuts(name, cuts or (), bottom, top)
        levels = [_cut_labels(leaves, np.asarray(level, dtype=float)) for level in cut_levels]
        names = [f"intervals {i + 1}" for i in range(len(cut_levels))]
    if dtype is not None:  # the column's type (declared integer or real), never the values'
        leaf_series = pl.Series(name, leaves).cast(pl.Int64 if dtype.is_integer() else pl.Float64)
    else:  # values given in code (a bundled hierarchy's public range): integers when all are whole
        integral = bool(np.all(np.equal(np.mod(leaves, 1), 0)))
        leaf_series = pl.Series(name, leaves.astype(np.int64) if integral else leaves)
    levels, names = _with_root(levels, names, len(leaves))
    return Hierarchy.from_columns(name, leaf_series, levels, ["value", *names])


def _band_labels(leaves: np.ndarray, widths: Sequence[float], origin: float, bottom: float | None,
                 top: float | None) -> list[list[str]]:
    """The label of each leaf's band at each of ``widths`` on the grid through ``origin``, tails
    coded: bands exact in the decimals declared and read (:mod:`crowdsafe.data.decimal_bands`),
    so the value 6.6 lies in ``[6.6, 6.7)`` and nested widths nest exactly."""
    finite = np.isfinite(leaves)
    code = np.zeros(len(leaves), dtype=np.int8)  # 0: a band, 1: below bottom, 2: at or above top, 3/4: -inf/inf
    code[~finite] = np.where(leaves[~finite] < 0, 3, 4)
    if bottom is not None:
        code[leaves < bottom] = 1
    if top is not None:
        code[leaves >= top] = 2
    low_end = None if bottom is None else decimal_of(bottom)
    high_end = None if top is None else decimal_of(top)
    tails = {1: f"<{_number(bottom)}" if bottom is not None else "", 2: f">={_number(top)}" if top is not None else "",
             3: "[-inf, -inf)", 4: "[inf, inf)"}
    k, lows, grid_widths = band_bounds(leaves[finite], origin, widths)
    out = []
    for grid_low, grid_width in zip(lows, grid_widths):
        low = np.zeros(len(leaves), dtype=grid_low.dtype)
        low[finite] = grid_low
        low[code != 0] = 0
        # the leaves are sorted and a band grows with its value: a new label where the band changes
        change = np.ones(len(leaves), dtype=bool)
        change[1:] = (code[1:] != code[:-1]) | (low[1:] != low[:-1])
        first = np.flatnonzero(change)
        band_low = low[first]
        ends = zip(grid_texts(band_low, k), grid_texts(band_low + grid_width, k))
        text = np.asarray([f"[{a}, {b})" for a, b in ends], dtype=object)
        banded = np.flatnonzero(code[first] == 0)
        for at in {*banded[:1].tolist(), *banded[-1:].tolist()}:  # only the first and last band meet a tail
            a, b = Decimal(f"{int(band_low[at])}e-{k}"), Decimal(f"{int(band_low[at]) + grid_width}e-{k}")
            a = a if low_end is None else max(a, low_end)
            b = b if high_end is None else min(b, high_end)
            text[at] = f"[{decimal_text(a)}, {decimal_text(b)})"
        for at in np.flatnonzero(code[first] != 0).tolist():
            text[at] = tails[int(code[first[at]])]
        out.append(text[np.cumsum(change) - 1].tolist())
    return out


def _checked_cuts(name: str, cuts: Sequence[Sequence[float]], bottom: float | None,
                  top: float | None) -> list[list[float]]:
    """The cut points of each level, the tails coded, checked to nest (from the cuts alone)."""
    cut_levels = [sorted(set(map(float, level))) for level in cuts]
    for i, level in enumerate(cut_levels):
        kept = [c for c in level if (bottom is None or c > bottom) and (top is None or c < top)]
        if bottom is not None:
            kept.insert(0, float(bottom))
        if top is not None:
            kept.append(float(top))
        cut_levels[i] = kept
    for i in range(1, len(cut_levels)):
        finer = set(cut_levels[i - 1])
        stray = [c for c in cut_levels[i] if c not in finer]
        if stray:
            raise HierarchyError(
                f"hierarchy '{name}' is not a tree: cut point {_number(stray[0])} of level {i + 1} "
                f"is not a cut point of level {i}"
            )
    return cut_levels


def _cut_labels(leaves: np.ndarray, edges: np.ndarray) -> list[str]:
    """The label of each leaf's interval between sorted cut points ``edges``."""
    position = np.searchsorted(edges, leaves, side="right")
    present, index = np.unique(position, return_inverse=True)
    text = [f"<{_number(edges[0])}" if p == 0 else f">={_number(edges[-1])}" if p == len(edges)
            else f"[{_number(edges[p - 1])}, {_number(edges[p])})" for p in present]
    return [text[i] for i in index.ravel()]


def ordered_groups(
    name: str,
    values: Sequence[Any],
    *,
    fanout: Sequence[int] | None = None,
    groups: Sequence[Sequence[tuple[str, int]]] | None = None,
) -> Hierarchy:
    """Group consecutive values of an ordered domain (``values`` in their order).

    ``fanout=[3, 2]``: level 1 joins every 3 consecutive values (labelled ``first-last``), level
    2 every 2 consecutive level-1 groups. ``groups``: per level a list of ``(label, size)``
    pairs, each taking the next ``size`` nodes of the level below; sizes must add up to the
    number of nodes below.
    """
    values = list(values)
    n = len(values)
    if (fanout is None) == (groups is None):
        raise HierarchyError(f"hierarchy '{name}': give exactly one of fanout or groups")
    # node index of each leaf at the current level, and the (first, last) leaf of each node
    node_of_leaf = np.arange(n)
    spans = [(i, i) for i in range(n)]
    levels: list[list[Any]] = []
    names: list[str] = []
    if fanout is not None and (isinstance(fanout, (str, bytes)) or not isinstance(fanout, Sequence)):
        raise HierarchyError(f"hierarchy '{name}': fanout must be a list of whole numbers >= 2, one per level "
                             f"(e.g. [3, 2]), got {fanout!r}")
    steps: Sequence[Any] = fanout if fanout is not None else (groups or ())
    labels: list[str | None]
    for depth, step in enumerate(steps, start=1):
        if fanout is not None:
            if isinstance(step, bool) or not isinstance(step, int) or step < 2:
                raise HierarchyError(f"hierarchy '{name}': fan-out must be a whole number >= 2, got {step}")
            sizes = [min(step, len(spans) - s) for s in range(0, len(spans), step)]
            labels = [None] * len(sizes)
        else:
            sizes = [int(size) for _, size in step]
            labels = [str(label) for label, _ in step]
            if sum(sizes) != len(spans) or min(sizes) < 1:
                raise HierarchyError(
                    f"hierarchy '{name}': the group sizes of level {depth} add up to {sum(sizes)}, "
                    f"but level {depth - 1} has {len(spans)} nodes"
                )
        parent = np.repeat(np.arange(len(sizes)), sizes)
        starts = np.cumsum([0, *sizes[:-1]])
        new_spans = [(spans[s][0], spans[s + k - 1][1]) for s, k in zip(starts, sizes)]
        labels = [
            label if label is not None
            else (str(values[a]) if a == b else f"{values[a]}-{values[b]}")
            for label, (a, b) in zip(labels, new_spans)
        ]
        node_of_leaf = parent[node_of_leaf]
        spans = new_spans
        levels.append([labels[j] for j in node_of_leaf])
        names.append(f"groups {depth}")
    if fanout is not None:  # the root is its own level whatever the values (a lone value '*' included)
        levels.append([ROOT] * n)
        names.append(ROOT)
    else:
        levels, names = _with_root(levels, names, n)
    made = Hierarchy.from_columns(name, pl.Series(name, values, strict=False), levels, ["value", *names])
    return made.check_labels() if groups is not None else made  # named groups: a label may repeat a value


def grouping(
    name: str,
    levels: Sequence[Mapping[str, Sequence[Any]]],
    *,
    level_names: Sequence[str] | None = None,
) -> Hierarchy:
    """Named groups, level by level: ``levels[0]`` maps each level-1 label to its values,
    ``levels[1]`` each level-2 label to level-1 labels, and so on.

    A value or label listed under two groups is a :class:`HierarchyError` (not a tree), as is
    a label of one level that no group of the next level takes. ``None`` as a value stands for
    the missing value.
    """
    if not levels:
        raise HierarchyError(f"hierarchy '{name}': give at least one level of groups")
    leaves: list[Any] = []
    parent_of: list[dict[Any, str]] = []
    for depth, level in enumerate(levels, start=1):
        mapping: dict[Any, str] = {}
        for label, members in level.items():
            for member in members:
                if member in mapping:
                    raise HierarchyError(
                        f"hierarchy '{name}' is not a tree: {member!r} is in both "
                        f"'{mapping[member]}' and '{label}' at level {depth}"
                    )
                mapping[member] = str(label)
                if depth == 1:
                    leaves.append(member)
        if depth > 1:
            below = set(parent_of[-1].values())
            missing = sorted(below - set(mapping))
            if missing:
                raise HierarchyError(
                    f"hierarchy '{name}': group '{missing[0]}' of level {depth - 1} "
                    f"belongs to no group of level {depth}"
                )
        parent_of.append(mapping)
    columns: list[list[Any]] = []
    current = leaves
    for mapping in parent_of:
        current = [mapping[x] for x in current]
        columns.append(current)
    names = list(level_names[1:]) if level_names else [f"groups {i}" for i in range(1, len(columns) + 1)]
    columns, names = _with_root(columns, names, len(leaves))
    made = Hierarchy.from_columns(name, pl.Series(name, leaves, strict=False), columns, ["value", *names])
    return made.check_labels()


def masking(name: str, values: Iterable[str], *, levels: int | None = None, char: str = "*") -> Hierarchy:
    """Replace trailing characters by ``char``, one more per level (``02139 -> 0213* -> 021**``).

    ``levels`` defaults to the length of the longest value (everything masked): only for values
    given in code (public ones); a schema's ``mask`` must give it (:func:`mask_depth`).
    """
    leaves = sorted({str(v) for v in values})
    if not leaves:
        raise HierarchyError(f"hierarchy '{name}': no values given")
    if levels is None:
        depth = max(len(v) for v in leaves)
    elif isinstance(levels, bool) or not isinstance(levels, int) or not 1 <= levels <= MAX_MASK_LEVELS:
        raise HierarchyError(f"hierarchy '{name}': levels must be a whole number from 1 to {MAX_MASK_LEVELS}, "
                             f"got {levels!r}")
    else:
        depth = levels  # a value shorter than the depth is masked whole from its length on
    columns = []
    for i in range(1, depth + 1):
        columns.append([v[: max(len(v) - i, 0)] + char * min(i, len(v)) for v in leaves])
    # the root is always its own level: the height is depth + 1 whatever the values' lengths
    columns.append([ROOT] * len(leaves))
    names = [*(f"{i} masked" for i in range(1, depth + 1)), ROOT]
    return Hierarchy.from_columns(name, pl.Series(name, leaves, dtype=pl.String), columns, ["value", *names])


_DATE_LEVELS = {
    "month": lambda d: f"{d.year:04d}-{d.month:02d}",
    "quarter": lambda d: f"{d.year:04d}-Q{(d.month - 1) // 3 + 1}",
    "year": lambda d: f"{d.year:04d}",
    "decade": lambda d: f"{d.year // 10 * 10:04d}s",
}
assert tuple(_DATE_LEVELS) == DATE_LEVELS  # the levels builder_checks accepts, in its order


def dates(
    name: str, values: Iterable[dt.date], *, levels: Sequence[str] = ("month", "year")
) -> Hierarchy:
    """Dates generalized day -> month -> year (any increasing subset of month, quarter, year,
    decade), then ``*``."""
    leaves = sorted({v for v in values if v is not None})
    if not leaves:
        raise HierarchyError(f"hierarchy '{name}': no dates given")
    check_date_levels(f"'{name}'", levels)
    columns = [[_DATE_LEVELS[lvl](d) for d in leaves] for lvl in levels]
    names = list(levels)
    columns, names = _with_root(columns, names, len(leaves))
    return Hierarchy.from_columns(name, pl.Series(name, leaves, dtype=pl.Date), columns, ["day", *names])


def flat(name: str, values: Iterable[Any]) -> Hierarchy:
    """The two-level hierarchy value -> ``*`` (an attribute can only be kept or suppressed). A
    Series of values keeps its type, even when it holds only the missing value."""
    listed = values.alias(name) if isinstance(values, pl.Series) else pl.Series(name, list(values), strict=False)
    leaves = listed.unique(maintain_order=True)
    return Hierarchy.from_columns(name, leaves, [[ROOT] * len(leaves)], ["value", ROOT])


def observed_flat(column: pl.Series) -> ObservedHierarchy:
    """The flat hierarchy (value -> ``*``) over the values observed in ``column`` (missing last):
    what a published column without a declared hierarchy gets. An :class:`ObservedHierarchy`:
    its height (1) is public, its leaves are not."""
    values = column.unique().sort(nulls_last=True)
    if not len(values):
        values = pl.Series(column.name, [None], dtype=column.dtype)
    return ObservedHierarchy.of(flat(column.name, values))


def from_spec(spec: Any, column: pl.Series, *, attribute: str) -> Hierarchy:
    """Build a hierarchy from a schema file's ``hierarchy`` entry for ``column``.

    A string is the path of an ARX-style CSV file; a table names a builder:
    ``{widths = [5, 10], bottom = 20, top = 80}`` or ``{cuts = [[...], [...]]}`` (intervals over
    the column's values), ``{mask = 3}`` (masking), ``{dates = ["month", "year"]}``,
    ``{fanout = [2, 2]}`` (ordered groups over the declared order or the sorted values),
    ``{groups = [{label = [values], ...}, ...]}`` (named groups, one table per level),
    ``{flat = true}`` (value -> *).
    """
    if isinstance(spec, str):
        return Hierarchy.from_csv(spec, name=attribute)
    if not isinstance(spec, Mapping):
        raise HierarchyError(f"the hierarchy of '{attribute}' must be a file name or a table, got {spec!r}")
    check_declaration(attribute, spec)  # every key of its type (done with the schema; here for callers in code)
    if is_declared_spec(spec):
        return _declared_spec(spec, attribute)  # the values are listed in the schema: declared
    return _observed_spec(spec, column, attribute)


def is_declared_spec(spec: Any) -> bool:
    """Whether a schema file's ``hierarchy`` entry fixes the leaves itself (a hierarchy file,
    ``groups``, ``fanout`` with an ``order``), so that :func:`from_spec` builds the same declared
    hierarchy whatever the column holds."""
    if isinstance(spec, str):
        return True
    keys = set(spec) if isinstance(spec, Mapping) else set()
    return keys == {"groups"} or (keys == {"fanout", "order"} and bool(spec.get("order")))


def _declared_spec(spec: Mapping[str, Any], attribute: str) -> Hierarchy:
    """A schema builder whose leaves the schema lists (``groups``, ``fanout`` with ``order``)."""
    if "fanout" in spec:
        return ordered_groups(attribute, spec["order"], fanout=spec["fanout"])
    levels = spec["groups"]
    if not isinstance(levels, Sequence) or not all(isinstance(level, Mapping) for level in levels):
        raise HierarchyError(
            f"hierarchy of '{attribute}': groups must be a list of tables, one per level "
            "(label = [values])"
        )
    return grouping(attribute, levels)


def _observed_spec(spec: Mapping[str, Any], column: pl.Series, attribute: str) -> ObservedHierarchy:
    """A schema builder applied to the values observed in ``column``: an :class:`ObservedHierarchy`
    whose height is the specification's whatever the values (a column with no value gets the
    missing-value leaf alone, as high as the specification says)."""
    values = column.drop_nulls()
    if values.dtype.is_float():
        values = values.drop_nans()  # a NaN is outside every band: published as missing (Hierarchy.absorbing)
    values = values.unique().sort()
    if not len(values):
        return _missing_only(spec, column, attribute)
    keys = set(spec)
    if keys & {"widths", "cuts"}:
        extra = keys - {"widths", "cuts", "bottom", "top", "origin"}
        if extra:
            raise HierarchyError(f"hierarchy of '{attribute}': unknown key(s) {sorted(extra)}")
        if not column.dtype.is_numeric():
            raise HierarchyError(f"hierarchy of '{attribute}': intervals need a numeric column")
        return ObservedHierarchy.of(intervals(
            attribute, values.to_list(), widths=spec.get("widths"), cuts=spec.get("cuts"),
            bottom=spec.get("bottom"), top=spec.get("top"), origin=spec.get("origin", 0.0), dtype=column.dtype,
        ))
    if keys == {"mask"}:
        depth = mask_depth(attribute, spec["mask"])  # the schema's, never the longest value's
        return ObservedHierarchy.of(masking(attribute, values.cast(pl.String).to_list(), levels=depth))
    if keys == {"dates"}:
        if column.dtype != pl.Date:
            raise HierarchyError(f"hierarchy of '{attribute}': date levels need a date column")
        return ObservedHierarchy.of(dates(attribute, values.to_list(), levels=spec["dates"]))
    if keys <= {"fanout", "order"} and "fanout" in keys:
        # the groups join neighbours among the values present: the map itself depends on the data
        return ObservedHierarchy.of(ordered_groups(attribute, values.to_list(), fanout=spec["fanout"]),
                                    value_local=False)
    if keys == {"flat"}:
        return ObservedHierarchy.of(flat(attribute, values.to_list()))
    raise _unknown_spec(attribute, keys)


def _unknown_spec(attribute: str, keys: set[str]) -> HierarchyError:
    return HierarchyError(
        f"hierarchy of '{attribute}': unknown specification {sorted(keys)}; use a file name, "
        "widths/cuts, mask, dates, fanout, groups or flat"
    )


#: A value each observed builder accepts, used to check a specification when the column has no value.
_PROBES: dict[str, Any] = {"mask": "0", "dates": dt.date(2000, 1, 1), "fanout": "0", "flat": "0"}



def _missing_only(spec: Mapping[str, Any], column: pl.Series, attribute: str) -> ObservedHierarchy:
    """The observed hierarchy of a column without a value: the specification checked and sized
    on a probe value, then one missing-value leaf, ``?`` up to the root, as high as the
    specification's hierarchy (so its height does not depend on whether a value is present)."""
    keys = set(spec)
    kind = next((k for k in ("widths", "cuts", "mask", "dates", "fanout", "flat") if k in keys), None)
    if kind is None:
        raise _unknown_spec(attribute, keys)
    if kind in ("widths", "cuts"):
        if not column.dtype.is_numeric():
            raise HierarchyError(f"hierarchy of '{attribute}': intervals need a numeric column")
        probe = pl.Series(attribute, [float(spec.get("bottom", spec.get("origin", 0.0)) or 0.0)]).cast(column.dtype)
    elif kind == "dates" and column.dtype != pl.Date:
        raise HierarchyError(f"hierarchy of '{attribute}': date levels need a date column")
    else:
        probe = pl.Series(attribute, [_PROBES[kind]])
    shape = _observed_spec(spec, probe, attribute)
    labels = [[MISSING_LABEL]] * (shape.height - 1) + [[ROOT]] if shape.height else []
    leaves = pl.Series(attribute, [None], dtype=column.dtype)
    return ObservedHierarchy.of(Hierarchy.from_columns(attribute, leaves, labels, shape.level_names),
                                value_local=shape.value_local)
