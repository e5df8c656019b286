"""Reading the distinct cells of many release columns at once, with column operations.

:meth:`AttributeDomain.cover <crowdsafe.data.generalized.AttributeDomain.cover>` resolves one cell at a time in
Python; for an attack that reads every quasi-identifier column of a release, that step per
distinct cell was the cost. :class:`CellReader` gives the same answer as
``AttributeDomain.cover(cells, strict=False)`` — the same resolution order (module
:mod:`crowdsafe.data.generalized`: an original value, ``*``, the same number, a hierarchy
label, a range, a set), the same kinds and covered codes — for the distinct cells of all
columns together, in one Polars pass of string expressions and joins plus NumPy look-ups:

- original values and hierarchy labels: joins with each domain's text tables;
- numbers (``25.0``, ``1.5K``): a regular expression and a cast, then binary search in the
  domain's sorted numbers; ranges and top/bottom coding the same way, for both bounds;
- ``*``: every code of the domain; sets: members split with ``str.split`` and read by the
  same reader (a set with a quoted member, :mod:`crowdsafe.data.set_cells`, is split in Python,
  its quoted members read by the one-cell reader's ``quoted_codes``, the others by this one).

Cells outside that plain syntax go to the one-cell reader, so the two agree by construction
there: characters other than printable ASCII and ASCII white space (Python and Polars differ
on Unicode digits and white space), ISO dates, in a numeric domain anything Python's
``float`` reads that the number pattern does not (``inf``, ``nan``, ``1_000``), and the sets of
a column whose values or labels themselves hold ", " (their members are split by the longest
known run, which needs the domain one member at a time).

:func:`canonical_texts` is the column-operation twin of
:func:`~crowdsafe.data.generalized.canonical_cells` (syntax only, no domain).
"""

from __future__ import annotations

import functools
from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np
import polars as pl

from crowdsafe.data.arrays import segments, sorted_unique, stable_argsort, unique_inverse
from crowdsafe.data.generalized import ANY, AttributeDomain, CellKind, parse_cell
from crowdsafe.data.generalized import _as_text as _float_text
from crowdsafe.data.set_cells import QUOTE, quote_members, split_set
from crowdsafe.errors import InputError

_KINDS = (CellKind.VALUE, CellKind.RANGE, CellKind.SET, CellKind.NODE, CellKind.ANY, CellKind.MISSING)
VALUE, RANGE, SET, NODE, EVERYTHING, MISSING = range(len(_KINDS))

_NUMBER = r"[-+]?(?:[0-9]+(?:\.[0-9]*)?|\.[0-9]+)(?:[eE][-+]?[0-9]+)?[kKmMbB]?"
_RANGE = rf"^\s*(?P<opening>[\[(\]])\s*(?P<low>{_NUMBER})\s*[,;]\s*(?P<high>{_NUMBER})\s*(?P<closing>[\])\[])\s*$"
_OPEN_END = rf"^\s*(?P<operator>>=|<=|>|<)\s*(?P<bound>{_NUMBER})\s*$"
_MASK = r"^(?P<kept>[^*\[\](){}<>]+)(?P<stars>\*+)$"  # generalized.MASK_PATTERN, its groups named
_BAND = r"^(?P<low>-?[0-9]+(?:\.[0-9]+)?)\s*(?:-\s*(?P<high>-?[0-9]+(?:\.[0-9]+)?)|(?P<plus>\+))$"  # BAND_PATTERN
_MANTISSA = r"^(?P<mantissa>[-+]?(?:[0-9]+(?:\.[0-9]*)?|\.[0-9]+)(?:[eE][-+]?[0-9]+)?)(?P<suffix>[kKmMbB]?)$"
# what the one-cell reader reads: anything but printable ASCII and ASCII white space; ISO dates
_UNPLAIN = r"[^\t\n\x0B\x0C\r\x20-\x7E]|[0-9]{4}-[0-9]{2}-[0-9]{2}"
_FLOAT_WORDS = r"(?i)inf|nan|_"  # float() reads 'inf', 'nan' and '1_000'; the number pattern does not
# cells canonical as written: nothing that makes '*', a range, a bound or a set (not even a leading ']',
# which may open a range); '*' alone; a range spaced canonically
_UNCHANGED = rf"^(?:\s*(?:[^*\[({{<>\]\s][^*\[({{<>]*)?|\*|[\[(]{_NUMBER}, {_NUMBER}[\])])$"


def _number(text: pl.Expr) -> pl.Expr:
    """The number a matched number text stands for (K/M/B suffixes scale it), as parse_number."""
    parts = text.str.extract_groups(_MANTISSA)
    suffix = parts.struct.field("suffix").str.to_lowercase()
    scale = pl.when(suffix == "k").then(1e3).when(suffix == "m").then(1e6).when(suffix == "b").then(1e9).otherwise(1.0)
    return parts.struct.field("mantissa").cast(pl.Float64, strict=False) * scale


def _set_members(stripped: pl.Expr) -> pl.Expr:
    """The members of a set cell ``{a, b}``: split at ', ', stripped, empty ones dropped."""
    inner = stripped.str.slice(1, stripped.str.len_chars() - 2)
    return (inner.str.split(", ").list.eval(pl.element().str.strip_chars())
            .list.filter(pl.element().str.len_chars() > 0))


def canonical_texts(cells: pl.Series) -> pl.Series:
    """Cells rewritten in canonical syntax, as :func:`~crowdsafe.data.generalized.canonical_cells`
    (ranges re-spaced, set members sorted, a one-member set as its member, ``*`` stripped,
    anything else as written), for text ``cells``, with column operations. Cells that cannot
    change (no ``*[({<>`` at all, ``*`` alone, or a range already written ``[low, high]``) are
    kept as they are without being parsed."""
    kept = cells.str.contains(_UNCHANGED).fill_null(True).to_numpy()
    if kept.all():
        return cells
    if kept.any():
        rewrite = np.flatnonzero(~kept)
        return cells.clone().scatter(rewrite, _canonical_texts(cells.gather(rewrite)))
    return _canonical_texts(cells)


@functools.cache
def _canonical_stages() -> tuple[list[pl.Expr], list[pl.Expr], list[pl.Expr]]:
    """The expressions of :func:`_canonical_texts`, built once: each pattern is matched once
    per cell (a stage of its own), the final expression only reads their columns."""
    text = pl.col("cell")
    stripped = pl.col("__stripped")
    ranged, open_end, members, is_set = pl.col("__range"), pl.col("__open"), pl.col("__members"), pl.col("__set")
    canonical = (
        pl.when(text.is_null()).then(pl.lit(None, dtype=pl.String))
        .when(stripped == ANY).then(pl.lit(ANY))
        .when(ranged.struct.field("opening").is_not_null()).then(pl.concat_str(
            ranged.struct.field("opening").replace("]", "("), ranged.struct.field("low"), pl.lit(", "),
            ranged.struct.field("high"), ranged.struct.field("closing").replace("[", ")")))
        .when(open_end.struct.field("operator").is_not_null()).then(pl.concat_str(
            open_end.struct.field("operator"), open_end.struct.field("bound")))
        .when(is_set & (members.list.len() == 1)).then(members.list.first())
        .when(is_set).then(pl.concat_str(pl.lit("{"), members.list.eval(quote_members(pl.element())).list.join(", "),
                                         pl.lit("}")))
        .otherwise(text)
    )
    return ([text.str.strip_chars().alias("__stripped")],
            [stripped.str.extract_groups(_RANGE).alias("__range"),
             stripped.str.extract_groups(_OPEN_END).alias("__open"),
             (stripped.str.starts_with("{") & stripped.str.ends_with("}")
              & (stripped.str.len_chars() >= 2)).alias("__set"),
             _set_members(stripped).list.sort().alias("__members")],
            [canonical.alias("canonical"),
             (text.str.contains(_UNPLAIN) | is_set & stripped.str.contains(QUOTE, literal=True))  # quoted members
             .fill_null(False).alias("unplain")])


def _canonical_texts(cells: pl.Series) -> pl.Series:
    first, second, final = _canonical_stages()
    frame = cells.rename("cell").to_frame().lazy().with_columns(first).with_columns(second).select(final).collect()
    out = frame.get_column("canonical")
    unplain = np.flatnonzero(frame.get_column("unplain").to_numpy())
    if len(unplain):  # the one-cell reader, for what the patterns above do not cover
        texts = cells.gather(unplain).to_list()
        fixed = [c.members[0] if c.kind is CellKind.SET and len(c.members) == 1 else c.text
                 for c in map(parse_cell, texts)]
        out = out.scatter(unplain, pl.Series(fixed, dtype=pl.String))
    return out.alias(cells.name)


@functools.cache
def _fact_stages() -> tuple[list[pl.Expr], list[pl.Expr], list[pl.Expr], list[pl.Expr]]:
    """The expressions of the reading query (:meth:`CellReader._read`), built once, in stages
    so that every pattern is matched once per cell."""
    text = pl.col("text")
    stripped = pl.col("stripped")
    ranged, open_end = pl.col("__range"), pl.col("__open")
    operator, bound = pl.col("__operator"), pl.col("__bound")
    first = [text.str.strip_chars().alias("stripped")]
    second = [stripped.str.extract_groups(_RANGE).alias("__range"),
              stripped.str.extract_groups(_OPEN_END).alias("__open"),
              stripped.str.extract_groups(_MASK).alias("__mask"),
              stripped.str.extract_groups(_BAND).alias("__band")]
    third = [open_end.struct.field("operator").alias("__operator"),
             _number(open_end.struct.field("bound")).alias("__bound"),
             _number(ranged.struct.field("low")).alias("__low"),
             _number(ranged.struct.field("high")).alias("__high"),
             _number(stripped).alias("number")]
    final = [
        text.is_null().alias("missing"),
        text.str.contains(_UNPLAIN).fill_null(False).alias("unplain"),
        stripped.str.contains(_FLOAT_WORDS).fill_null(False).alias("float_word"),
        (stripped == ANY).fill_null(False).alias("star"),
        pl.col("value_code").fill_null(-1), pl.col("node").fill_null(-1),
        pl.col("number"),
        pl.coalesce(pl.col("__low"),
                    pl.when(operator.str.starts_with(">")).then(bound)
                    .when(operator.is_not_null()).then(-np.inf)).alias("low"),
        pl.coalesce(pl.col("__high"),
                    pl.when(operator.str.starts_with("<")).then(bound)
                    .when(operator.is_not_null()).then(np.inf)).alias("high"),
        pl.coalesce(ranged.struct.field("opening") == "[", operator != ">", True).alias("low_closed"),
        pl.coalesce(ranged.struct.field("closing") == "]", operator != "<", True).alias("high_closed"),
        (stripped.str.starts_with("{") & stripped.str.ends_with("}") & (stripped.str.len_chars() >= 2))
        .fill_null(False).alias("set"),
        pl.col("__mask").struct.field("kept").alias("mask_kept"),
        (pl.col("__mask").struct.field("kept").str.len_chars() + pl.col("__mask").struct.field("stars").str.len_chars())
        .cast(pl.Int64).alias("mask_width"),
        pl.col("__band").struct.field("low").cast(pl.Float64).alias("band_low"),
        pl.when(pl.col("__band").struct.field("plus").is_not_null()).then(np.inf)
        .otherwise(pl.col("__band").struct.field("high").cast(pl.Float64)).alias("band_high"),
    ]
    return first, second, third, final


@dataclass(frozen=True)
class CellCovers:
    """What each distinct cell of one column covers: cell ``j`` (of ``labels``) covers the
    domain codes ``indices[indptr[j]:indptr[j + 1]]`` (sorted, distinct); ``kind[j]`` is its
    syntax (a :class:`~crowdsafe.data.generalized.CellKind` value); codes lie in
    ``[0, domain_size)``."""

    labels: pl.Series
    kind: np.ndarray
    indptr: np.ndarray
    indices: np.ndarray
    domain_size: int

    @property
    def size(self) -> np.ndarray:
        return np.diff(self.indptr)

    def pairs(self) -> tuple[np.ndarray, np.ndarray]:
        """``(cell, code)`` pairs, one per covered code."""
        return np.repeat(np.arange(len(self.labels), dtype=np.int64), self.size), self.indices


@dataclass(frozen=True)
class _Read:
    """Resolved rows of one read: ``kind`` per row, covered ``(row, code)`` pairs."""

    kind: np.ndarray
    row: np.ndarray
    code: np.ndarray


class CellReader:
    """Reads release cells against a fixed list of domains (one per column); build it once
    and read the distinct cells of every release with it (:meth:`read`)."""

    def __init__(self, domains: Sequence[AttributeDomain]) -> None:
        self.domains = list(domains)
        self.sizes = np.array([d.size for d in self.domains], dtype=np.int64)
        # the domains' own look-up tables (AttributeDomain._code_of_text, AttributeDomain._node_of_text) as frames;
        # hierarchy nodes get one id over every (column, level, node), their leaves a CSR
        node_starts, node_codes = [np.zeros(1, dtype=np.int64)], []
        value_codes: list[int]
        value_column, value_texts, value_codes = [], [], []
        label_column, label_texts_all, label_nodes = [], [], []
        self._comma_known = np.zeros(len(self.domains), dtype=bool)
        self._numeric = np.array([d.numbers is not None for d in self.domains], dtype=bool)
        self._sorted: list[tuple[np.ndarray, np.ndarray] | None] = []
        self._null_code = np.array([-1 if d._null_code is None else d._null_code for d in self.domains],
                                   dtype=np.int64)
        n_nodes = n_codes = 0
        for j, domain in enumerate(self.domains):
            texts = list(domain._code_of_text)
            value_column.append(np.full(len(texts), j, dtype=np.uint32))
            value_texts.extend(texts)
            value_codes.extend(domain._code_of_text.values())
            label_texts = list(domain._node_of_text)
            if label_texts:
                level_node = np.array(list(domain._node_of_text.values()), dtype=np.int64).reshape(-1, 2)
                hierarchy = domain.hierarchy
                assert hierarchy is not None  # node labels come from the domain's hierarchy
                first_node = np.cumsum([0] + [hierarchy.size(level) for level in range(hierarchy.height + 1)])
                label_column.append(np.full(len(label_texts), j, dtype=np.uint32))
                label_texts_all.extend(label_texts)
                label_nodes.append(n_nodes + first_node[level_node[:, 0]] + level_node[:, 1])
                for level in range(hierarchy.height + 1):  # leaves sorted by node, codes ascending within
                    order, starts = domain._node_leaves[level]
                    node_starts.append(n_codes + np.asarray(starts[1:], dtype=np.int64))
                    node_codes.append(order.astype(np.int64))
                    n_codes += len(order)
                n_nodes += int(first_node[-1])
            self._comma_known[j] = any(", " in t for t in texts) or any(", " in t for t in label_texts)
            if domain.numbers is None:
                self._sorted.append(None)
            else:
                valid = np.flatnonzero(~np.isnan(domain.numbers))
                order = np.argsort(domain.numbers[valid], kind="stable")
                self._sorted.append((domain.numbers[valid][order], valid[order].astype(np.int64)))
        empty = np.zeros(0, dtype=np.uint32)
        self._values = pl.DataFrame({"column": np.concatenate(value_column) if value_column else empty,
                                     "stripped": pl.Series(value_texts, dtype=pl.String),
                                     "value_code": pl.Series(value_codes, dtype=pl.Int64)})
        self._labels = pl.DataFrame({"column": np.concatenate(label_column) if label_column else empty,
                                     "stripped": pl.Series(label_texts_all, dtype=pl.String),
                                     "node": (np.concatenate(label_nodes) if label_nodes
                                              else np.zeros(0, dtype=np.int64))})
        self._node_indptr = np.concatenate(node_starts)
        self._node_codes = np.concatenate(node_codes) if node_codes else np.zeros(0, dtype=np.int64)

    def read(self, cells: Sequence[pl.Series], domains: Sequence[int] | None = None) -> list[CellCovers]:
        """What every cell of ``cells[j]`` (distinct cells of one column, any dtype, read as
        text) covers in domain ``domains[j]`` (by default domain j): the answer of
        ``AttributeDomain.cover(cells[j], strict=False)``. Read many columns (of many releases) in one
        call: the reading is one query whatever the number of columns."""
        texts = [cell_text(c) for c in cells]
        domain_of = np.arange(len(texts), dtype=np.int64) if domains is None else np.asarray(domains, dtype=np.int64)
        lengths = np.array([len(t) for t in texts], dtype=np.int64)
        columns = np.repeat(domain_of, lengths)
        every = pl.concat(texts) if texts else pl.Series("cell", [], dtype=pl.String)
        read = self._read_distinct(columns, every)
        starts = np.concatenate([[0], np.cumsum(lengths)])
        # one CSR per column, codes sorted and distinct within each cell
        key = sorted_unique(read.row * (int(self.sizes.max(initial=0)) + 1) + read.code)
        row, code = np.divmod(key, int(self.sizes.max(initial=0)) + 1)
        # every row's offset into ``code``, then one slice of it per column
        offsets = np.concatenate([[0], np.cumsum(np.bincount(row, minlength=int(starts[-1])))]).astype(np.int64)
        kind = np.array(_KINDS, dtype=object)[read.kind]
        return [CellCovers(labels, kind[starts[j]: starts[j + 1]],
                           offsets[starts[j]: starts[j + 1] + 1] - offsets[starts[j]],
                           code[offsets[starts[j]]: offsets[starts[j + 1]]], int(self.sizes[domain_of[j]]))
                for j, labels in enumerate(texts)]

    def _read_distinct(self, columns: np.ndarray, texts: pl.Series) -> _Read:
        """:meth:`_read` of the rows (column index, text), each distinct row read once (the
        columns of several releases share most of their cells)."""
        n = len(texts)
        ids = categorical_ids(texts) + 1
        span = int(ids.max(initial=0)) + 1
        distinct, inverse = unique_inverse(columns * span + ids, (int(columns.max(initial=0)) + 1) * span)
        if len(distinct) == n:
            return self._read(columns, texts, member=False)
        first = np.empty(len(distinct), dtype=np.int64)
        first[inverse] = np.arange(n, dtype=np.int64)
        read = self._read(columns[first], texts.gather(first), member=False)
        # every row gets its distinct row's codes
        by_row = stable_argsort(read.row, len(distinct))
        counts = np.bincount(read.row, minlength=len(distinct))
        fan = counts[inverse]
        code = read.code[by_row][segments((np.cumsum(counts) - counts)[inverse], fan)]
        return _Read(read.kind[inverse], np.repeat(np.arange(n, dtype=np.int64), fan), code)

    def _read(self, columns: np.ndarray, texts: pl.Series, *, member: bool) -> _Read:
        """Resolve rows (column index, text). ``member``: the rows are members of sets, read as
        AttributeDomain._resolve does (``*`` before an original value), else as AttributeDomain.cover does."""
        n = len(texts)
        if n == 0:
            return _Read(np.zeros(0, dtype=np.int8), np.zeros(0, dtype=np.int64), np.zeros(0, dtype=np.int64))
        first, second, third, final = _fact_stages()
        facts = (
            pl.DataFrame({"column": pl.Series(columns, dtype=pl.UInt32), "text": texts.alias("text")}).lazy()
            .with_columns(first)
            .join(self._values.lazy(), on=["column", "stripped"], how="left", maintain_order="left")
            .join(self._labels.lazy(), on=["column", "stripped"], how="left", maintain_order="left")
            .with_columns(second).with_columns(third).select(final)
            .collect()
        )
        kind = np.full(n, VALUE, dtype=np.int8)
        pending = np.ones(n, dtype=bool)
        rows: list[np.ndarray] = []
        codes: list[np.ndarray] = []

        def claim(mask: np.ndarray, as_kind: int) -> np.ndarray:
            chosen = np.flatnonzero(pending & mask)
            kind[chosen] = as_kind
            pending[chosen] = False
            return chosen

        def emit(row: np.ndarray, code: np.ndarray) -> None:
            rows.append(row.astype(np.int64, copy=False))
            codes.append(code.astype(np.int64, copy=False))

        missing = claim(facts.get_column("missing").to_numpy(), MISSING)
        null_code = self._null_code[columns[missing]]
        emit(missing[null_code >= 0], null_code[null_code >= 0])
        numeric_row = self._numeric[columns]
        unplain = facts.get_column("unplain").to_numpy() | (numeric_row & facts.get_column("float_word").to_numpy())
        self._read_one_by_one(claim(unplain, VALUE), columns, texts, member, kind, emit)
        star = facts.get_column("star").to_numpy()
        value_code = facts.get_column("value_code").to_numpy()
        is_value = value_code >= 0
        order = ((star, EVERYTHING), (is_value, VALUE)) if member else ((is_value, VALUE), (star, EVERYTHING))
        for mask, as_kind in order:
            chosen = claim(mask, as_kind)
            if as_kind == VALUE:
                emit(chosen, value_code[chosen])
            else:
                sizes = self.sizes[columns[chosen]]
                emit(np.repeat(chosen, sizes), segments(np.zeros(len(chosen), dtype=np.int64), sizes))
        number = facts.get_column("number").to_numpy()
        low, high = facts.get_column("low").to_numpy(), facts.get_column("high").to_numpy()
        low_closed = facts.get_column("low_closed").to_numpy()
        high_closed = facts.get_column("high_closed").to_numpy()
        # the same number as an original value (the first code holding it)
        candidates = np.flatnonzero(pending & numeric_row & ~np.isnan(number))
        for j in np.unique(columns[candidates]):
            here = candidates[columns[candidates] == j]
            values, value_codes = self._sorted[j]
            at = np.searchsorted(values, number[here], side="left")
            hit = at < len(values)
            hit[hit] = values[at[hit]] == number[here][hit]
            chosen = here[hit]
            kind[chosen] = VALUE
            pending[chosen] = False
            emit(chosen, value_codes[at[hit]])
        node = facts.get_column("node").to_numpy()
        chosen = claim(node >= 0, NODE)
        node_of = node[chosen]
        sizes = np.diff(self._node_indptr)[node_of]
        emit(np.repeat(chosen, sizes), self._node_codes[segments(self._node_indptr[node_of], sizes)])
        chosen = claim(~np.isnan(low), RANGE)
        if len(chosen) and not numeric_row[chosen].all():
            bad = chosen[~numeric_row[chosen]][0]
            raise InputError(f"column '{self.domains[columns[bad]].name}' holds the range {texts[int(bad)]!r}, "
                             "but the original values are not numbers")
        for j in np.unique(columns[chosen]):
            here = chosen[columns[chosen] == j]
            values, value_codes = self._sorted[j]
            start = np.where(low_closed[here], np.searchsorted(values, low[here], side="left"),
                             np.searchsorted(values, low[here], side="right"))
            stop = np.where(high_closed[here], np.searchsorted(values, high[here], side="right"),
                            np.searchsorted(values, high[here], side="left"))
            counts = np.maximum(stop - start, 0)
            emit(np.repeat(here, counts), value_codes[segments(start, counts)])
        chosen = claim(facts.get_column("set").to_numpy(), SET)
        if len(chosen):
            self._read_sets(chosen, columns, texts, emit)
        kept = facts.get_column("mask_kept")
        chosen = claim(kept.is_not_null().to_numpy(), SET)  # a masked value: the set of values it may mask
        width = facts.get_column("mask_width").to_numpy()
        for j in np.unique(columns[chosen]):
            here = chosen[columns[chosen] == j]
            cell, code = self.domains[j].masked_codes(kept.gather(here).to_list(), width[here])
            emit(here[cell], code)
        band_low, band_high = facts.get_column("band_low").to_numpy(), facts.get_column("band_high").to_numpy()
        with np.errstate(invalid="ignore"):
            chosen = claim(numeric_row & (band_low <= band_high), RANGE)  # NaN (no band) compares False
        for j in np.unique(columns[chosen]):
            here = chosen[columns[chosen] == j]
            values, value_codes = self._sorted[j]
            start = np.searchsorted(values, band_low[here], side="left")
            counts = np.maximum(np.searchsorted(values, band_high[here], side="right") - start, 0)
            emit(np.repeat(here, counts), value_codes[segments(start, counts)])
        # whatever is left names nothing in its domain: a VALUE covering nothing
        return _Read(kind, np.concatenate(rows), np.concatenate(codes))

    def _read_sets(self, chosen: np.ndarray, columns: np.ndarray, texts: pl.Series, emit) -> None:
        """Members of the set cells ``chosen``, read as set members, covered codes unioned.
        Sets with quoted members are split in Python (:func:`~crowdsafe.data.set_cells.split_set`),
        their quoted members read as the one-cell reader reads them, the others with the rest."""
        quoted = texts.gather(chosen).str.contains(QUOTE, literal=True).to_numpy()
        parents: list[np.ndarray] = []
        members: list[pl.Series] = []
        old_form: list[int] = []  # no quote that closes: read as before quoting
        for row in chosen[quoted].tolist():
            domain = self.domains[columns[row]]
            pieces = split_set(texts[row].strip()[1:-1])
            if pieces is None:
                old_form.append(row)
                continue
            for piece in pieces:
                if piece.quoted:
                    covered = domain.quoted_codes(piece.text, piece.raw, strict=False).astype(np.int64)
                    emit(np.full(len(covered), row, dtype=np.int64), covered)
                else:
                    found = domain._split_members(piece.text)
                    parents.append(np.full(len(found), row, dtype=np.int64))
                    members.append(pl.Series(found, dtype=pl.String))
        chosen = np.concatenate([chosen[~quoted], np.array(old_form, dtype=chosen.dtype)])
        split_here = chosen[~self._comma_known[columns[chosen]]]
        if len(split_here):
            lists = (texts.gather(split_here).rename("text").to_frame()
                     .select(_set_members(pl.col("text").str.strip_chars()).alias("members"))
                     .with_columns(pl.Series("parent", split_here)).explode("members")
                     .drop_nulls("members"))
            parents.append(lists.get_column("parent").to_numpy())
            members.append(lists.get_column("members"))
        by_run = chosen[self._comma_known[columns[chosen]]]  # labels hold ', ': split by the longest known run
        for row in by_run.tolist():
            inner = texts[row].strip()[1:-1]
            found = self.domains[columns[row]]._split_members(inner)
            parents.append(np.full(len(found), row, dtype=np.int64))
            members.append(pl.Series(found, dtype=pl.String))
        parent = np.concatenate(parents) if parents else np.zeros(0, dtype=np.int64)
        if len(parent) == 0:
            return
        inner = self._read(columns[parent], pl.concat(members), member=True)
        emit(parent[inner.row], inner.code)

    def _read_one_by_one(self, chosen: np.ndarray, columns: np.ndarray, texts: pl.Series, member: bool,
                         kind: np.ndarray, emit) -> None:
        """The one-cell reader (as AttributeDomain.cover, or AttributeDomain._resolve for set members)."""
        for row in chosen.tolist():
            domain = self.domains[columns[row]]
            text = texts[row]
            code = domain._code_of_text.get(text.strip()) if not member and text is not None else None
            if code is not None:
                cell_kind, covered = CellKind.VALUE, np.array([code])
            else:
                cell_kind, covered = domain._resolve(text, strict=False)
            kind[row] = _KINDS.index(cell_kind)
            emit(np.full(len(covered), row, dtype=np.int64), np.asarray(covered, dtype=np.int64))


def cell_text(cells: pl.Series) -> pl.Series:
    """Cells as text, integral floats without '.0' (as the one-cell reader writes them)."""
    if cells.dtype == pl.String:
        return cells.alias("cell")
    if cells.dtype.is_float():
        return _float_text(cells).alias("cell")
    return cells.cast(pl.String).alias("cell")


def categorical_ids(values: pl.Series) -> np.ndarray:
    """Polars categorical ids of ``values`` (equal values, equal ids; the missing value -1),
    read in NumPy rather than by further Polars calls (each costs more than these arrays)."""
    ids = values.cast(pl.Categorical).to_physical().to_numpy()
    if values.null_count():
        ids = np.where(np.isnan(ids), -1, ids)
    return ids.astype(np.int64, copy=False)
