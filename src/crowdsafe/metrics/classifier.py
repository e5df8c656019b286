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
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np
import polars as pl

from crowdsafe.data import Dataset
from crowdsafe.data.generalized import CellTable, Cover, Domain
from crowdsafe.data.schema import AttributeType
from crowdsafe.errors import ParameterError

MODELS = ("logistic", "tree", "forest")


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
    raise ParameterError(f"unknown classifier {name!r}; use one of: {', '.join(MODELS)}")


def _is_numeric(original: Dataset, column: str, domain: Domain) -> bool:
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
    counted = frame.group_by(columns).len()
    for column in columns:
        codes, dictionary = encode_series(counted.get_column(column))
        covers[column] = Domain.of(original, column).cover(dictionary, strict=False)
        cells[column] = codes.astype(np.int64)
    return CellTable(list(columns), covers, cells, counted.get_column("len").to_numpy().astype(np.int64))


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


def _fit_and_score(train: CellTable, test: CellTable, features: Sequence[str], target: str,
                   numeric: dict[str, bool], model: str, seed: int) -> tuple[float, list[str]]:
    notes: list[str] = []
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
        column = x_train[:, j]
        fill = float(np.nanmedian(column)) if np.isfinite(column).any() else 0.0
        x_train[:, j] = np.where(np.isfinite(column), column, fill)
        x_test[:, j] = np.where(np.isfinite(x_test[:, j]), x_test[:, j], fill)
        mean = np.average(x_train[:, j], weights=train.counts)
        std = np.sqrt(np.average((x_train[:, j] - mean) ** 2, weights=train.counts)) or 1.0
        x_train[:, j] = (x_train[:, j] - mean) / std
        x_test[:, j] = (x_test[:, j] - mean) / std
    target_cover = train.covers[target]
    if (target_cover.size[train.cells[target]] != 1).any():
        raise ParameterError(f"the target '{target}' is generalized in the release; a classifier needs its values")
    y_train = target_cover.indices[target_cover.indptr[train.cells[target]]]
    test_cover = test.covers[target]
    known = test_cover.size[test.cells[target]] == 1
    y_test = np.where(known, test_cover.indices[np.minimum(test_cover.indptr[test.cells[target]], len(test_cover.indices) - 1)], -1)
    if len(np.unique(y_train)) < 2:
        notes.append("the training rows hold a single target value: the classifier predicts it everywhere")
        prediction = np.full(len(y_test), y_train[0] if len(y_train) else -2)
    else:
        classifier = _model(model, seed)
        classifier.fit(x_train, y_train, sample_weight=train.counts)
        prediction = classifier.predict(x_test)
    return float(((prediction == y_test) * test.counts).sum() / test.counts.sum()), notes


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
    """Accuracy on ``test`` of ``model`` trained on ``release`` vs trained on ``original``."""
    for frame, what in ((release, "release"), (original.frame, "original"), (test.frame, "test data")):
        if target not in frame.columns:
            raise ParameterError(f"the {what} has no target column '{target}'")
    names = list(features) if features is not None else [
        c for c in release.columns
        if c != target and c in original.schema and c in test.columns and original.schema[c].role.value != "identifier"
    ]
    if not names:
        raise ParameterError("no feature columns shared by the release, the original and the test data")
    _model(model, seed)  # validate the name before any work
    columns = [*names, target]
    numeric = {c: _is_numeric(original, c, Domain.of(original, c)) for c in names}
    test_table = _test_table(test, original, columns)
    release_table = CellTable.of_release(release, original, columns)
    original_table = CellTable.of_original(original, columns)
    released, notes = _fit_and_score(release_table, test_table, names, target, numeric, model, seed)
    baseline, _ = _fit_and_score(original_table, test_table, names, target, numeric, model, seed)
    target_counts = pl.Series(test.frame.get_column(target)).value_counts()
    majority = float(target_counts.get_column("count").max() / test.n_rows)
    return ClassifierReport(
        target=target, model=model, features=names, accuracy_release=released, accuracy_original=baseline,
        majority_rate=majority, train_rows_release=release_table.rows, train_rows_original=original_table.rows,
        test_rows=test_table.rows, notes=notes,
    )
