"""Apply on a frequency table (what the Spark engine's driver runs) equals Apply on the rows."""

from __future__ import annotations

import numpy as np
import pytest

from crowdsafe.anonymize.apply import apply
from crowdsafe.anonymize.counted import apply_counts, counted
from crowdsafe.anonymize.publish import prepare_dataset
from crowdsafe.anonymize.recoding import GeneralizationScheme
from crowdsafe.anonymize.selection import choose_scheme
from crowdsafe.data import load
from crowdsafe.errors import SchemaError
from crowdsafe.randomness import Randomness


@pytest.fixture(scope="module")
def prepared():
    data = load("adult")
    dataset, columns, _ = prepare_dataset(data.with_frame(data.frame.head(6000)))
    return dataset, columns


@pytest.mark.parametrize("seed", [0, 1, 2])
def test_apply_on_counts_equals_apply_on_rows(prepared, seed):
    dataset, columns = prepared
    rng = np.random.default_rng(seed)
    levels = {c: int(rng.integers(0, dataset.hierarchies[c].height + 1)) for c in columns}
    k = int(rng.integers(2, 30))
    rows = apply(dataset, GeneralizationScheme.of(dataset, levels, columns), k)
    counts = apply_counts(counted(dataset, columns), levels, k)
    assert (counts.rows_in, counts.rows_published, counts.classes) == (rows.rows_in, rows.rows_published, rows.classes)
    np.testing.assert_array_equal(np.sort(counts.class_sizes), np.sort(rows.class_sizes))
    np.testing.assert_array_equal(np.sort(counts.published_class_sizes), np.sort(rows.published_class_sizes))


def test_the_chooser_reads_a_counted_sample_as_it_reads_the_rows(prepared):
    dataset, columns = prepared
    on_rows = choose_scheme(dataset, columns, 10, 0.3, Randomness(4))
    on_counts = choose_scheme(counted(dataset, columns), columns, 10, 0.3, Randomness(4))
    assert dict(on_rows.scheme.levels) == dict(on_counts.scheme.levels)
    assert on_rows.scored == on_counts.scored
    with pytest.raises(SchemaError, match="counted sample"):
        counted(counted(dataset, columns[:3]), columns)
