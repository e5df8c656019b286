import polars as pl
import pytest

from crowdsafe.engines.spark.io import read_frame
from crowdsafe.errors import InputError

pytestmark = pytest.mark.spark


def test_reads_csv_and_parquet_alike(spark, tmp_path):
    table = pl.DataFrame({"age": ["30", "41", None], "sex": ["F", "?", "M"]})
    table.write_csv(tmp_path / "t.csv")
    table.write_parquet(tmp_path / "t.parquet")
    from_csv = read_frame(spark, str(tmp_path / "t.csv")).collect()
    from_parquet = read_frame(spark, str(tmp_path / "t.parquet"), columns=["sex"]).collect()
    assert [r["sex"] for r in from_csv] == ["F", None, "M"]  # "?" is a missing token
    assert [r["age"] for r in from_csv] == ["30", "41", None]
    assert [r["sex"] for r in from_parquet] == ["F", "?", "M"]
    with pytest.raises(InputError, match="no column 'zip'"):
        read_frame(spark, str(tmp_path / "t.parquet"), columns=["zip"])
    with pytest.raises(InputError, match="Spark cannot read"):
        read_frame(spark, str(tmp_path / "absent.parquet"))
