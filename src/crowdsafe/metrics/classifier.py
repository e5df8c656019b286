"""Classifier utility: accuracy of a standard scikit-learn classifier trained on a release and
tested on held-out original rows, against the same classifier trained on the original.

Features are the columns the release shares with the original (minus the target), encoded the
same way for generalized and raw rows, so the model sees one feature space:

- numeric and date attributes: the midpoint of the values a cell covers (the value itself for
  a raw row), standardized on the training rows; a missing value gets the training median;
- other attributes: a "soft" one-hot vector over the original's values, 1/|g| on each value a
  cell g covers (a raw value is an ordinary one-hot; a test value the original never holds is
  all zeros).

Training runs on the distinct tuples with their counts as sample weights (the same fit as on
the rows, far cheaper). Accuracy on the test rows is reported with the majority-class rate of
the test rows as a floor.

The model ``"majority"`` needs no features at all (:func:`majority_lookup`): each generalized
tuple of the training table predicts the target value most of its rows hold, and a test row
is generalized by the training table's own cells. Trained on the original (every cell one
value) it is the per-tuple majority classifier.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np
import polars as pl

from crowdsafe.data import Dataset
from crowdsafe.data.column_names import spare_name
from crowdsafe.data.generalized import AttributeDomain, CellTable, Cover
from crowdsafe.data.schema import AttributeType
from crowdsafe.errors import ParameterError

MODELS = ("logistic", "tree", "forest", "majority")


def _model(name: str, seed: int):
    if name == "logistic":
        from sklearn.linear_model import LogisticRegression

        return LogisticRegression(max_iter=2000)
    if name == "tree":
        from sklearn.tree import DecisionTreeClassifier

        return DecisionTreeClassifier(min_samples_leaf=5, random_state=seed)
    if name == "forest":
        from sklearn.ensemble import RandomForestClassifier

        return RandomForestClassifier(n_estimators=100, min_samples_leaf=2, n_jobs=2, random_state=seed)
    if name == "majority":
        return None  # no scikit-learn model: majority_lookup
    raise ParameterError(f"unknown classifier {name!r}; use one of: {', '.join(MODELS)}")


def _is_numeric(original: Dataset, column: str, domain: AttributeDomain) -> bool:
    return domain.numbers is not None and original.schema[column].type in (AttributeType.NUMERIC, AttributeType.DATE)


def _cell_features(cover: Cover, numeric: bool) -> np.ndarray:
    """Feature block per cell: its midpoint (1 column) or its soft one-hot (domain columns)."""
    if numeric:
        return ((cover.low + cover.high) / 2.0)[:, None]
    cells, codes = cover.membership
    block = np.zeros((len(cover.labels), cover.domain.size))
    block[cells, codes] = 1.0 / cover.size[cells]
    return block


def _design(table: CellTable, features: Sequence[str], numeric: dict[str, bool]) -> np.ndarray:
    blocks = [_cell_features(table.covers[c], numeric[c])[table.cells[c]] for c in features]
    return np.hstack(blocks) if blocks else np.zeros((len(table.counts), 0))


def _test_table(test: Dataset, original: Dataset, columns: Sequence[str]) -> CellTable:
    """Test rows as cells of the original's domains (values the original lacks cover nothing)."""
    from crowdsafe.data import encode_series

    covers, cells = {}, {}
    frame = test.frame.select(columns)
    rows = spare_name(columns, "len")
    counted = frame.group_by(columns).agg(pl.len().alias(rows))
    for column in columns:
        codes, dictionary = encode_series(counted.get_column(column))
        covers[column] = AttributeDomain.of(original, column).cover(dictionary, strict=False)
        cells[column] = codes.astype(np.int64)
    return CellTable(list(columns), covers, cells, counted.get_column(rows).to_numpy().astype(np.int64))


@dataclass(frozen=True)
class ClassifierReport:
    target: str
    model: str
    features: list[str]
    accuracy_release: float
    accuracy_original: float
    majority_rate: float
    train_rows_release: int
    train_rows_original: int
    test_rows: int
    notes: list[str]

    @property
    def relative_accuracy(self) -> float:
        return self.accuracy_release / self.accuracy_original if self.accuracy_original else 0.0

    def to_dict(self) -> dict[str, Any]:
        return {**vars(self), "relative_accuracy": self.relative_accuracy}


def _target_codes(table: CellTable, target: str) -> np.ndarray:
    """The target's domain code of each tuple of a training table; a ParameterError when some
    tuple generalizes the target (a classifier needs its values)."""
    cover = table.covers[target]
    if (cover.size[table.cells[target]] != 1).any():
        raise ParameterError(f"the target '{target}' is generalized in the release; a classifier needs its values")
    return cover.indices[cover.indptr[table.cells[target]]].astype(np.int64)


def _test_target_codes(test: CellTable, target: str) -> np.ndarray:
    """The target's domain code of each test tuple, -1 for a value the original never holds."""
    cover = test.covers[target]
    known = cover.size[test.cells[target]] == 1
    at = np.minimum(cover.indptr[test.cells[target]], max(len(cover.indices) - 1, 0))
    return np.where(known, cover.indices[at] if len(cover.indices) else -1, -1).astype(np.int64)


#: What a model trained on no rows predicts (a release that suppressed everything teaches
#: nothing): no value, so every test row counts as wrong.
NO_PREDICTION = -2


def _majority_code(codes: np.ndarray, counts: np.ndarray) -> int:
    """The code held by most rows; a tie goes to the smaller code (argmax takes the first);
    :data:`NO_PREDICTION` when there are no rows."""
    if not len(codes):
        return NO_PREDICTION
    return int(np.argmax(np.bincount(codes, weights=counts)))


def _covering_cells(test_cover: Cover, train_cover: Cover) -> pl.DataFrame:
    """Pairs (test cell, training cell) where the training cell covers a value the test cell
    holds; training cells are identified by ``canonical`` (equal coverage = one cell)."""
    test_cells, test_codes = test_cover.membership
    train_cells, train_codes = train_cover.membership
    return (
        pl.DataFrame({"t": test_cells, "code": test_codes})
        .join(pl.DataFrame({"r": train_cover.canonical[train_cells], "code": train_codes}), on="code")
        .select("t", "r").unique()
    )


def majority_lookup(train: CellTable, test: CellTable, features: Sequence[str], target: str) -> np.ndarray:
    """Predicted target code of each tuple of ``test`` by the majority lookup trained on ``train``.

    Each distinct generalized tuple of ``train`` (its feature cells; cells covering the same
    values are one cell) predicts the target value most of its rows hold. A test tuple is
    generalized by ``train``'s own cells: it matches every training tuple whose cell covers its
    value in each feature, and gets the majority target of the rows of the matching tuples (for
    a full-domain recoding, or any release whose classes do not overlap, there is at most one).
    A test tuple no training tuple covers gets the overall majority of ``train``. Ties go to the
    smaller target code. The matching is a chain of joins, one feature at a time, each followed
    by a semi-join on the training tuples' prefixes (no loop over rows); features are joined in
    increasing order of how many cells cover a value, to keep the candidate pairs few.
    """
    y = _target_codes(train, target)
    fallback = _majority_code(y, train.counts)
    if not len(features):
        return np.full(len(test.counts), fallback, dtype=np.int64)
    relations = {c: _covering_cells(test.covers[c], train.covers[c]) for c in features}
    order = sorted(features, key=lambda c: relations[c].height / max(len(test.covers[c].labels), 1))
    names = {c: f"f{j}" for j, c in enumerate(order)}
    train_frame = pl.DataFrame(
        {names[c]: train.covers[c].canonical[train.cells[c]] for c in order} | {"y": y, "n": train.counts}
    )
    votes = train_frame.group_by([*names.values(), "y"]).agg(pl.col("n").sum())
    pairs = pl.DataFrame({"row": np.arange(len(test.counts), dtype=np.int64)}
                         | {f"t{names[c]}": test.cells[c] for c in order})
    prefix: list[str] = []
    for c in order:
        name = names[c]
        pairs = pairs.join(relations[c].rename({"t": f"t{name}", "r": name}), on=f"t{name}").drop(f"t{name}")
        prefix.append(name)
        pairs = pairs.join(votes.select(prefix).unique(), on=prefix, how="semi")
    tallies = (
        pairs.join(votes, on=prefix).group_by("row", "y").agg(pl.col("n").sum())
        .sort(["row", "n", "y"], descending=[False, True, False]).group_by("row", maintain_order=True).first()
    )
    prediction = np.full(len(test.counts), fallback, dtype=np.int64)
    prediction[tallies.get_column("row").to_numpy()] = tallies.get_column("y").to_numpy()
    return prediction


def _fit_and_score(train: CellTable, test: CellTable, features: Sequence[str], target: str,
                   numeric: dict[str, bool], model: str, seed: int) -> tuple[float, list[str]]:
    notes: list[str] = []
    if model == "majority":
        prediction = majority_lookup(train, test, features, target)
        y_test = _test_target_codes(test, target)
        return float(((prediction == y_test) * test.counts).sum() / test.counts.sum()), notes
    if not train.counts.sum():
        notes.append("the release holds no rows: no value is predicted (every test row counts as wrong)")
        return 0.0, notes
    x_train = _design(train, features, numeric)
    x_test = _design(test, features, numeric)
    numeric_columns = []
    position = 0
    for column in features:
        width = 1 if numeric[column] else train.covers[column].domain.size
        if numeric[column]:
            numeric_columns.append(position)
        position += width
    for j in numeric_columns:  # impute missing midpoints, then standardize on the training rows
        feature = x_train[:, j]
        fill = float(np.nanmedian(feature)) if np.isfinite(feature).any() else 0.0
        x_train[:, j] = np.where(np.isfinite(feature), feature, fill)
        x_test[:, j] = np.where(np.isfinite(x_test[:, j]), x_test[:, j], fill)
        mean = np.average(x_train[:, j], weights=train.counts)
        std = np.sqrt(np.average((x_train[:, j] - mean) ** 2, weights=train.counts)) or 1.0
        x_train[:, j] = (x_train[:, j] - mean) / std
        x_test[:, j] = (x_test[:, j] - mean) / std
    y_train = _target_codes(train, target)
    y_test = _test_target_codes(test, target)
    if len(np.unique(y_train)) < 2:
        notes.append("the training rows hold a single target value: the classifier predicts it everywhere")
        prediction = np.full(len(y_test), y_train[0] if len(y_train) else NO_PREDICTION)
    else:
        classifier = _model(model, seed)
        classifier.fit(x_train, y_train, sample_weight=train.counts)
        prediction = classifier.predict(x_test)
    return float(((prediction == y_test) * test.counts).sum() / test.counts.sum()), notes


def _features(original: Dataset, release: pl.DataFrame, test: Dataset, target: str,
              features: Sequence[str] | None, model: str, seed: int) -> list[str]:
    """The feature columns, after checking the target and the model name (before any work)."""
    for frame, what in ((release, "release"), (original.frame, "original"), (test.frame, "test data")):
        if target not in frame.columns:
            raise ParameterError(f"the {what} has no target column '{target}'")
    names = list(features) if features is not None else [
        c for c in release.columns
        if c != target and c in original.schema and c in test.columns and original.schema[c].role.value != "identifier"
    ]
    if not names:
        raise ParameterError("no feature columns shared by the release, the original and the test data")
    _model(model, seed)
    return names


def release_accuracy(
    original: Dataset,
    release: pl.DataFrame,
    test: Dataset,
    target: str,
    *,
    features: Sequence[str] | None = None,
    model: str = "logistic",
    seed: int = 0,
) -> float:
    """Accuracy on ``test`` of ``model`` trained on ``release`` alone (what
    :func:`classifier_utility` reports as ``accuracy_release``, without the baseline fit)."""
    names = _features(original, release, test, target, features, model, seed)
    columns = [*names, target]
    numeric = {c: _is_numeric(original, c, AttributeDomain.of(original, c)) for c in names}
    accuracy, _ = _fit_and_score(CellTable.of_release(release, original, columns), _test_table(test, original, columns),
                                 names, target, numeric, model, seed)
    return accuracy


def classifier_utility(
    original: Dataset,
    release: pl.DataFrame,
    test: Dataset,
    target: str,
    *,
    features: Sequence[str] | None = None,
    model: str = "logistic",
    seed: int = 0,
) -> ClassifierReport:
    """Accuracy on ``test`` of ``model`` (one of :data:`MODELS`) trained on ``release`` vs
    trained on ``original``."""
    names = _features(original, release, test, target, features, model, seed)
    columns = [*names, target]
    numeric = {c: _is_numeric(original, c, AttributeDomain.of(original, c)) for c in names}
    test_table = _test_table(test, original, columns)
    release_table = CellTable.of_release(release, original, columns)
    original_table = CellTable.of_original(original, columns)
    released, notes = _fit_and_score(release_table, test_table, names, target, numeric, model, seed)
    baseline, _ = _fit_and_score(original_table, test_table, names, target, numeric, model, seed)
    target_counts = pl.Series(test.frame.get_column(target)).value_counts()
    most: Any = target_counts.get_column("count").max()  # a row count (an int)
    majority = float(most / test.n_rows)
    return ClassifierReport(
        target=target, model=model, features=names, accuracy_release=released, accuracy_original=baseline,
        majority_rate=majority, train_rows_release=release_table.rows, train_rows_original=original_table.rows,
        test_rows=test_table.rows, notes=notes,
    )
