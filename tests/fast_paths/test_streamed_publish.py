"""The publish of a file read whole (``crowdsafe.data.load``: the reference twin) or batch by batch
(``crowdsafe.data.streamed_table`` + ``crowdsafe.engines.streamed_publish``): on either side of
``reads_eagerly`` (``EAGER_BYTES`` patched to the file's size − 1, the size, + 1) the same release,
certificate, report, custodian report and ledger rows, byte for byte, with the same seed."""

from __future__ import annotations

import json
import shutil
import sqlite3
from pathlib import Path

import numpy as np
import polars as pl
import pytest

import crowdsafe.data.streamed_table as streamed_table
from crowdsafe import api
from crowdsafe.data import Dataset, Schema, packing, streaming
from crowdsafe.data.streamed_fingerprint import MultisetDigest, SubsetValues, text_dictionaries
from crowdsafe.engines import streamed_publish
from crowdsafe.errors import CrowdsafeError
from crowdsafe.privacy.ledger import Ledger
from crowdsafe.randomness import Randomness


@pytest.fixture(scope="module")
def template(tmp_path_factory) -> Path:
    """One ledger (one identity key) copied for every run, so keyed identities compare."""
    path = tmp_path_factory.mktemp("ledger") / "template.ledger"
    with Ledger(path) as ledger:
        assert ledger.identity_key
    return path


def _rows(n: int = 4000, seed: int = 2) -> pl.DataFrame:
    rng = np.random.default_rng(seed)
    return pl.DataFrame({
        "age": rng.integers(17, 90, n),
        "sex": rng.choice(["Female", "Male"], n),
        "city": pl.Series([None, "Lyon", "Paris", "Nice", "Brest"], dtype=pl.String).gather(rng.integers(0, 5, n)),
        "score": np.where(rng.random(n) < 0.05, np.nan, np.round(rng.random(n) * 10, 1)),
        "day": pl.date_range(pl.date(2020, 1, 1), pl.date(2020, 3, 1), eager=True).sample(n, with_replacement=True,
                                                                                          seed=seed),
        "flag": rng.random(n) < 0.3,
        "ref": [f"id{i % 700:04d}" for i in range(n)],
        "income": rng.choice(["<=50K", ">50K"], n),
    })


def _csv(path: Path, frame: pl.DataFrame) -> Path:
    """The frame as CSV with blanks around some values and numbers written two ways."""
    text = frame.write_csv(null_value="?")
    text = text.replace(",Male,", ", Male ,").replace(",17,", ",017,")
    path.write_text(text, encoding="utf-8")
    return path


def _outputs(path: Path, template: Path, work: Path, **options) -> dict:
    if work.exists():
        shutil.rmtree(work)
    work.mkdir()
    shutil.copy(template, work / "l.ledger")
    (work / "l.ledger").chmod(0o600)
    suffix = ".parquet" if options.pop("parquet_out", False) else ".csv"
    try:
        publication = api.publish(str(path), seed=11, ledger=str(work / "l.ledger"),
                                  out=str(work / "rel" / f"r{suffix}"), custodian_report=str(work / "custodian.json"),
                                  **options)
    except CrowdsafeError as exc:
        return {"error": f"{type(exc).__name__}: {exc}"}
    files = {p.name: p.read_bytes() for p in sorted((work / "rel").iterdir())}
    custodian = json.loads((work / "custodian.json").read_text())
    custodian["ledger"].pop("path")
    custodian["ledger"]["budget"].pop("created_at")
    with sqlite3.connect(work / "l.ledger") as con:
        ledger = [con.execute("select fingerprint, name from datasets").fetchall(),
                  con.execute("select sample_id, entry_id, rate from samples").fetchall(),
                  con.execute("select fingerprint, kind, epsilon, delta from entries").fetchall()]
    return {"files": files, "custodian": custodian, "ledger": ledger,
            "summary": json.dumps(publication.summary(), sort_keys=True, default=str), "notes": publication.notes}


def spied(monkeypatch, owner: object, name: str) -> list[bool]:
    """Replace ``owner.name`` by a spy that logs, at each call, whether it returned something."""
    function = getattr(owner, name)
    log: list[bool] = []

    def spy(*args, **kwargs):
        found = function(*args, **kwargs)
        log.append(found is not None)
        return found

    monkeypatch.setattr(owner, name, spy)
    return log


def at_thresholds(path: Path, monkeypatch, run) -> list:
    """``run()`` at EAGER_BYTES = size − 1 (streamed), size and size + 1 (read whole): the three
    results, asserted equal."""
    size = streaming.disk_bytes(path)
    results = []
    for limit, eager in ((size - 1, False), (size, True), (size + 1, True)):
        monkeypatch.setattr(streaming, "EAGER_BYTES", limit)
        assert streaming.reads_eagerly(path) is eager
        results.append(run())
    assert results[0] == results[1] == results[2]
    return results


def _twins(path: Path, template: Path, tmp_path: Path, monkeypatch, **options) -> dict:
    """The outputs at EAGER_BYTES = size − 1 (streamed), size and size + 1 (read whole): equal."""
    streamed = spied(monkeypatch, streamed_table, "read_streamed")
    results = at_thresholds(path, monkeypatch, lambda: _outputs(path, template, tmp_path / "run", **dict(options)))
    results[0]["streamed"] = streamed == [True] if "error" not in results[0] else streamed
    return results[0]


@pytest.mark.slow
def test_csv_inferred(template, tmp_path, monkeypatch):
    path = _csv(tmp_path / "t.csv", _rows())
    out = _twins(path, template, tmp_path, monkeypatch, epsilon=1.0, delta=1e-6, qi=["age", "sex", "city", "day"],
                 sensitive="income")
    assert out["streamed"] is True
    assert set(out["files"]) == {"r.csv", "r.certificate.json", "r.report.html"}


@pytest.mark.slow
def test_csv_every_column_two_releases_parquet_out(template, tmp_path, monkeypatch):
    path = _csv(tmp_path / "t.csv", _rows(3000, seed=5))
    out = _twins(path, template, tmp_path, monkeypatch, epsilon=2.0, delta=1e-6, releases=2, parquet_out=True)
    assert out["streamed"] is True


@pytest.mark.slow
@pytest.mark.parametrize("missing", ["drop", "keep"])
def test_csv_missing_and_nan(template, tmp_path, monkeypatch, missing):
    path = _csv(tmp_path / "t.csv", _rows(3000, seed=7))
    out = _twins(path, template, tmp_path, monkeypatch, epsilon=1.0, delta=1e-6, qi=["age", "score", "city"],
                 missing=missing, scheme="coarse")
    assert out["streamed"] is True


def test_missing_error_same_message(template, tmp_path, monkeypatch):
    path = _csv(tmp_path / "t.csv", _rows(2000))
    out = _twins(path, template, tmp_path, monkeypatch, epsilon=1.0, delta=1e-6, missing="error")
    assert "rows with missing values (first in column 'city')" in out["error"]


def test_parquet_types(template, tmp_path, monkeypatch):
    frame = _rows(3000, seed=9).with_columns(
        pl.col("city").cast(pl.Categorical), pl.col("sex").cast(pl.Enum(["Female", "Male"])),
        pl.col("age").cast(pl.Int8), pl.col("score").cast(pl.Float32),
        pl.col("day").cast(pl.Datetime("us")).alias("when"))
    path = tmp_path / "t.parquet"
    frame.write_parquet(path)
    out = _twins(path, template, tmp_path, monkeypatch, epsilon=1.0, delta=1e-6, qi=["age", "city", "sex", "flag"])
    assert out["streamed"] is True


def declared_table(folder: Path) -> tuple[Path, Path]:
    """A CSV with ages as text and a schema declaring them numbers with a hierarchy, an identifier
    and a sensitive attribute."""
    path = _csv(folder / "t.csv", _rows(3000, seed=3).with_columns(pl.col("age").cast(pl.String)))
    schema = folder / "schema.toml"
    schema.write_text(
        '[attributes.age]\ntype = "numeric"\nhierarchy = { widths = [5, 10, 20] }\n'
        '[attributes.sex]\ntype = "categorical"\n'
        '[attributes.ref]\nrole = "identifier"\ntype = "categorical"\n'
        '[attributes.income]\nrole = "sensitive"\ntype = "categorical"\n', encoding="utf-8")
    return path, schema


@pytest.mark.slow
def test_declared_schema_with_hierarchies(template, tmp_path, monkeypatch):
    path, schema = declared_table(tmp_path)
    out = _twins(path, template, tmp_path, monkeypatch, epsilon=1.0, delta=1e-6, schema=str(schema))
    assert out["streamed"] is True


def test_declared_type_refused_with_the_row(template, tmp_path, monkeypatch):
    """A value the declared type refuses: the streamed read hands over to the in-memory read,
    whose message names the row."""
    frame = _rows(2000).with_columns(pl.col("age").cast(pl.String))
    late = pl.when(pl.int_range(pl.len()) == 1500).then(pl.lit("old")).otherwise("age")
    frame = frame.with_columns(late.alias("age"))
    path = _csv(tmp_path / "t.csv", frame)
    schema = tmp_path / "schema.toml"
    schema.write_text('[attributes.age]\ntype = "numeric"\n', encoding="utf-8")
    out = _twins(path, template, tmp_path, monkeypatch, epsilon=1.0, delta=1e-6, schema=str(schema))
    assert "row 1501" in out["error"] and out["streamed"] == [False]


@pytest.mark.slow
def test_late_value_and_renamed_header(template, tmp_path, monkeypatch):
    """A value past the first 10,000 rows that the inferred type does not fit (the second read
    infers from every row), and duplicate names renamed by the stable rule."""
    rows = [f"{i % 50},{i % 7},x{i % 3}" for i in range(12_000)] + ["2.5,3,x1"]
    path = tmp_path / "t.csv"
    path.write_text("a,a,b\n" + "\n".join(rows) + "\n", encoding="utf-8")
    out = _twins(path, template, tmp_path, monkeypatch, epsilon=1.0, delta=1e-6)
    assert out["streamed"] is True


def test_not_utf8_deep_in_the_file(template, tmp_path, monkeypatch):
    path = _csv(tmp_path / "t.csv", _rows(3000))
    path.write_bytes(path.read_bytes() + "Ren\u00e9,x\n".encode("latin-1"))
    out = _twins(path, template, tmp_path, monkeypatch, epsilon=1.0, delta=1e-6)
    assert "not UTF-8" in out["error"]


def test_ragged_row_deep_in_the_file(template, tmp_path, monkeypatch):
    path = _csv(tmp_path / "t.csv", _rows(3000))
    path.write_text(path.read_text(encoding="utf-8") + "1,2,3,4,5,6,7,8,9,10,11\n", encoding="utf-8")
    out = _twins(path, template, tmp_path, monkeypatch, epsilon=1.0, delta=1e-6)
    assert out["error"].startswith("InputError: cannot parse")


def test_what_is_read_whole(tmp_path):
    """A compressed CSV, a folder, a file given by a name it is not, a declared date read from
    text: read whole (the rule and the fallbacks)."""
    import gzip

    frame = _rows(500)
    csv = _csv(tmp_path / "t.csv", frame)
    packed = tmp_path / "t.csv.gz"
    packed.write_bytes(gzip.compress(csv.read_bytes()))
    assert not streamed_table.streams(packed) or streaming.disk_bytes(packed) <= streaming.EAGER_BYTES
    assert not streamed_table.streams(tmp_path)
    assert not streamed_table.streams(frame)
    named = tmp_path / "csv.parquet"
    shutil.copy(csv, named)
    assert streamed_table.read_streamed(named) is None
    text_dates = _csv(tmp_path / "d.csv", frame.with_columns(pl.col("day").dt.strftime("%Y%m%d")))
    schema = Schema.of({"day": "date"})
    assert streamed_table.read_streamed(text_dates, schema=schema) is None


def test_fingerprint_by_batches_and_of_a_subset():
    """MultisetDigest over batches = Dataset.fingerprint; a masked subset's digest (its own text
    ranks, SubsetValues) = the fingerprint of the filtered Dataset."""
    frame = _rows(5000, seed=1).with_columns(pl.col("city").cast(pl.Categorical), pl.lit(None).alias("none"))
    whole = Dataset(frame, Schema.infer(frame))
    dictionaries = text_dictionaries(frame)
    digest = MultisetDigest(dict(frame.schema), dictionaries)
    for start in range(0, frame.height, 777):
        digest.add(frame.slice(start, 777))
    assert digest.hexdigest() == whole.fingerprint()
    assert digest.hexdigest(b"k" * 32) == whole.fingerprint(key=b"k" * 32)
    mask = np.random.default_rng(3).random(frame.height) < 0.01
    present = SubsetValues(dictionaries)
    present.add(frame.filter(pl.Series(mask)))
    subset = MultisetDigest(dict(frame.schema), present.subset_dictionaries())
    for start in range(0, frame.height, 1000):
        subset.add(frame.slice(start, 1000).filter(pl.Series(mask[start:start + 1000])))
    assert subset.hexdigest() == whole.filter_rows(mask).fingerprint()


@pytest.mark.parametrize("n", [1, 7, 8, 63, 64, 65, 1000])
def test_mask_drawn_in_batches_is_the_one_draw(monkeypatch, n):
    monkeypatch.setattr(streamed_publish, "DRAW_ROWS", 16)
    one, batched = Randomness(seed=4), Randomness(seed=4)
    expected = one.bernoulli(n, 0.3)
    packed = streamed_publish.draw_mask(n, 0.3, batched)
    assert packed is not None
    assert np.array_equal(np.unpackbits(packed)[:n].astype(bool), expected)
    assert one.generator.random() == batched.generator.random()  # the stream ends at the same place
    everyone = Randomness(seed=4)
    assert streamed_publish.draw_mask(n, 1.0, everyone) is None
    assert everyone.generator.random() == Randomness(seed=4).generator.random()  # β = 1 draws nothing


@pytest.mark.slow
def test_count_packed_or_by_columns(template, tmp_path, monkeypatch):
    """The count's one-key packing (when the leaf grid fits int64) and its column-by-column
    group-by give the same release."""
    path = _csv(tmp_path / "t.csv", _rows(3000, seed=12))
    monkeypatch.setattr(streaming, "EAGER_BYTES", 0)
    monkeypatch.setattr(streamed_publish, "MERGE_TUPLES", 10)  # merge partial counts often
    options = dict(epsilon=1.0, delta=1e-6, qi=["age", "sex", "city", "ref"])
    packed = _outputs(path, template, tmp_path / "run", **options)
    monkeypatch.setattr(packing, "fits", lambda sizes, limit=2.0**63: False)
    by_columns = _outputs(path, template, tmp_path / "run", **options)
    assert packed == by_columns


def test_renamed_columns_noted_once(tmp_path, capsys):
    """The note on renamed columns reaches standard error once, streamed or handed to the
    in-memory read; a text file of unknown suffix is the loader's to refuse."""
    path = tmp_path / "t.csv"
    path.write_text("a,a,b\n" + "".join(f"{i % 5},{i % 3},x\n" for i in range(100)), encoding="utf-8")
    assert streamed_table.read_streamed(path) is not None
    assert capsys.readouterr().err.count("crowdsafe: note:") == 1
    dated = tmp_path / "d.csv"
    dated.write_text("a,a,day\n" + "".join(f"{i % 5},{i % 3},2020010{i % 9 + 1}\n" for i in range(100)))
    assert streamed_table.read_streamed(dated, schema=Schema.of({"day": "date"})) is None
    assert capsys.readouterr().err == ""
    odd = tmp_path / "t.xyz"
    shutil.copy(path, odd)
    assert streamed_table.read_streamed(odd) is None


@pytest.mark.slow
def test_count_made_in_the_identity_pass(template, tmp_path, monkeypatch):
    """With a ledger, the pass that hashes the sample also counts its published tuples, and the
    count stage reads no rows (two passes over the sample, not three); without a ledger the count
    makes its own pass. Either way the release is the one read whole."""
    path = _csv(tmp_path / "t.csv", _rows(3000, seed=13))
    passes: list[object] = []
    batches = streamed_publish.StreamedSample.batches

    def spy(self, columns=None, label="reading the sample"):
        passes.append(None if columns is None else tuple(columns))
        yield from batches(self, columns, label)

    monkeypatch.setattr(streamed_publish.StreamedSample, "batches", spy)
    options = dict(epsilon=1.0, delta=1e-6, qi=["age", "sex", "city"])
    monkeypatch.setattr(streaming, "EAGER_BYTES", 0)
    streamed = _outputs(path, template, tmp_path / "run", **options)
    assert len(passes) == 2 and passes[1] is None  # the text values, then every column
    monkeypatch.setattr(streaming, "EAGER_BYTES", 1 << 40)
    assert _outputs(path, template, tmp_path / "run", **options) == streamed

    def without_ledger() -> bytes:
        out = tmp_path / "bare" / "r.csv"
        api.publish(str(path), seed=11, ledger=None, out=str(out), report=False, **options)
        return out.read_bytes() + out.with_suffix(".certificate.json").read_bytes()

    passes.clear()
    monkeypatch.setattr(streaming, "EAGER_BYTES", 0)
    bare = without_ledger()
    assert len(passes) == 1 and passes[0] is not None  # the count's own pass, over the published columns
    monkeypatch.setattr(streaming, "EAGER_BYTES", 1 << 40)
    assert without_ledger() == bare


@pytest.mark.slow
def test_small_epsilon_chooses_on_the_table_streamed_as_read_whole(template, tmp_path, monkeypatch):
    """At a small ε the plan chooses on the whole table (selection/PROOF.md §8): streamed, the table
    is counted in its own pass, and the release is the one read whole gives."""
    path, schema = declared_table(tmp_path)
    out = _twins(path, template, tmp_path, monkeypatch, epsilon=0.1, delta=1e-6, schema=str(schema))
    assert out["streamed"] is True
    certificate = json.loads(out["files"]["r.certificate.json"])
    recode = [m for m in certificate["mechanisms"] if m["step"] == "recode"][0]
    assert recode["parameters"]["chosen_on"] == "table"
