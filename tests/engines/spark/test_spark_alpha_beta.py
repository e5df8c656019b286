"""α-β on Spark: the same domain, n, m and plan as the Polars engine (deterministic), and a view
whose randomness matches the theory (statistical, fixed seeds, 4σ tolerances)."""

import json
import math

import numpy as np
import polars as pl
import pytest

from crowdsafe import cli
from crowdsafe.data import load
from crowdsafe.engines.spark.alpha_beta import perturb_spark
from crowdsafe.engines.spark.typed_table import load_table
from crowdsafe.perturb import View, estimate, perturb
from crowdsafe.perturb.alpha_beta import PerturbRequest
from crowdsafe.perturb.estimator import est
from crowdsafe.privacy.dgamma import AlphaBetaPlanRequest

pytestmark = pytest.mark.spark


@pytest.fixture(scope="module")
def rows_path(tmp_path_factory):
    rng = np.random.default_rng(8)
    n = 6000  # rows, with a few duplicates, in a domain of 25,284 tuples
    frame = pl.DataFrame({
        "a": rng.integers(0, 20, n),
        "b": rng.choice(["x", "y", "z", None], n, p=[0.5, 0.3, 0.15, 0.05]).tolist(),
        "c": rng.integers(0, 300, n) * 2,
    })
    path = tmp_path_factory.mktemp("ab") / "rows.parquet"
    frame.write_parquet(path)
    return path


PUBLIC = dict(domains={"a": list(range(20)), "b": ["x", "y", "z", None], "c": list(range(0, 600, 2))},
              max_rows=6000)  # missing values kept: m = 21 * 4 * 301 = 25,284 (null in each); N = 6,000 rows


def public_flags(tmp_path):
    path = tmp_path / "domains.json"
    path.write_text(json.dumps(PUBLIC["domains"]))
    return ["--domains", str(path), "--max-rows", "6000"]


def _z_of_equality_estimates(view_frame, truth, alpha, beta, domain):
    """Σ_k (EST_k − Q_k(I)) / sqrt(Σ_k Var EST_k) over the equality queries a = v: the cells are
    disjoint, so their counts are independent and Z is approximately N(0, 1) if EST is unbiased."""
    sizes = dict(zip(domain.attributes, domain.sizes))
    n_domain = domain.size // sizes["a"]
    values = domain.values["a"].to_list()
    n_view = view_frame.group_by("a").len().to_dict(as_series=False)
    n_view = dict(zip(n_view["a"], n_view["len"]))
    true = truth.group_by("a").len().to_dict(as_series=False)
    true = dict(zip(true["a"], true["len"]))
    error = variance = 0.0
    for v in values:
        q = true.get(v, 0)
        error += float(est(n_view.get(v, 0), n_domain, alpha, beta)) - q
        variance += (alpha * (1 - alpha) * q + beta * (1 - beta) * (n_domain - q)) / (alpha - beta) ** 2
    return error / math.sqrt(variance)


def test_spark_view_follows_the_algorithm(spark, rows_path, tmp_path):
    dataset = load(rows_path)
    table = load_table(spark, rows_path)
    out = tmp_path / "view.parquet"
    request = PerturbRequest(AlphaBetaPlanRequest(gamma=0.5, c=1.0, alpha=0.5), **PUBLIC)
    result = perturb_spark(table, request, out=out, randomness=21, ranges=7)
    on_polars = perturb(dataset, request, randomness=21)
    plan, view = result.plan, result.view
    # deterministic: the same domain, bound N, m, plan and custodian-only counts as the Polars engine
    assert view.certificate.parameters["domain"] == on_polars.view.certificate.parameters["domain"]
    assert view.certificate.guarantee == "d-gamma" and "n" not in view.certificate.parameters
    assert (plan.n, plan.m, plan.alpha, plan.beta) == (6000, 21 * 4 * 301, 0.5, on_polars.plan.beta)
    assert result.custodian_report() == on_polars.custodian_report()
    public = result.as_dict()
    assert "rows" not in public and "duplicate_rows_collapsed" not in public
    assert view.certificate.parameters["engine"] == "spark" and view.certificate.parameters["insertion_ranges"] == 7
    assert json.loads(view.certificate_file.read_text())["parameters"]["view_rows"] == view.rows

    written = pl.read_parquet(out / "*.parquet")
    assert written.height == view.rows and written.unique().height == written.height  # a set
    truth = dataset.frame.select("a", "b", "c").unique()
    kept = written.join(truth, on=["a", "b", "c"], how="semi", nulls_equal=True).height
    inserted = written.height - kept
    n, m, alpha, beta = truth.height, plan.m, plan.alpha, plan.beta  # the exact n, for the test only
    assert abs(kept - alpha * n) < 4 * math.sqrt(n * alpha * (1 - alpha))
    assert abs(inserted - beta * (m - n)) < 4 * math.sqrt((m - n) * beta * (1 - beta))
    # each of the 7 disjoint index ranges inserts Binomial(|range \ I|, β) tuples
    codes = view.domain.encode(written)
    index = view.domain.index(codes).astype(np.int64)
    in_data = np.isin(index, view.domain.index(view.domain.encode(truth)).astype(np.int64))
    bounds = [(j * m) // 7 for j in range(8)]
    truth_index = np.sort(view.domain.index(view.domain.encode(truth)).astype(np.int64))
    for low, high in zip(bounds[:-1], bounds[1:]):
        free = (high - low) - int(np.count_nonzero((truth_index >= low) & (truth_index < high)))
        drawn = int(np.count_nonzero(~in_data & (index >= low) & (index < high)))
        assert abs(drawn - beta * free) < 4.5 * math.sqrt(free * beta * (1 - beta)) + 1

    # the estimator is unbiased on both engines (same statistic, same tolerance)
    assert abs(_z_of_equality_estimates(written, truth, alpha, beta, view.domain)) < 4
    assert abs(_z_of_equality_estimates(on_polars.view.frame, truth, alpha, beta, view.domain)) < 4
    # n_V counted on Spark is the driver's count on the same view
    local = View(view.domain.decode(codes), view.domain, alpha, beta, plan.n, view.certificate)
    for query in ("count where a < 10 and b = 'x'", "count where b is null", "count where c in (2, 4) or c > 400"):
        assert view.estimate(query) == estimate(local, query)


def test_cli_perturb_and_plan_on_spark(spark, rows_path, tmp_path, capsys):
    out = tmp_path / "v.parquet"
    code = cli.main(["perturb", "--no-ledger", str(rows_path), "--gamma", "0.5", "--c", "1.0", "--engine", "spark",
                     "--out", str(out), "--seed", "4", "--json", *public_flags(tmp_path)])
    payload = json.loads(capsys.readouterr().out)
    assert code == 0
    assert payload["view_rows"] == pl.read_parquet(out / "*.parquet").height
    assert payload["fit_for_release"] is False and (tmp_path / "v.certificate.json").exists()
    # the view's report, from the part files, beside the folder; rebuilt byte for byte
    assert payload["report_file"] == str(tmp_path / "v.report.html")
    assert cli.main(["report", str(out), "--out", str(tmp_path / "again.html")]) == 0
    capsys.readouterr()
    assert (tmp_path / "again.html").read_bytes() == (tmp_path / "v.report.html").read_bytes()
    code = cli.main(["estimate", str(out), "count where a < 10", "--json"])  # the driver reads the part files
    assert code == 0 and json.loads(capsys.readouterr().out)["rows"] == payload["view_rows"]

    code = cli.main(["perturb", "--no-ledger", str(rows_path), "--gamma", "0.5", "--c", "1.0", "--engine", "spark",
                     "--out", str(tmp_path / "w.parquet"), "--duplicates", "error", *public_flags(tmp_path)])
    assert code == 2 and "some rows repeat another row's tuple" in capsys.readouterr().err
    assert not (tmp_path / "w.parquet").exists()
    for flags, fragment in ((["--max-rows", "6000"], "no public domain for 'a', 'b', 'c'"),
                            ([*public_flags(tmp_path)[:2], "--max-rows", "5999"], "more than --max-rows 5,999 rows")):
        code = cli.main(["perturb", "--no-ledger", str(rows_path), "--gamma", "0.5", "--c", "1.0", "--engine", "spark",
                         "--out", str(tmp_path / "w.parquet"), *flags])
        assert code == 2 and fragment in capsys.readouterr().err
        assert not (tmp_path / "w.parquet").exists()

    # a narrower domain leaves the rows outside it out of I (nothing refused): the plan of the domain
    domains = tmp_path / "narrow.json"
    domains.write_text(json.dumps({**PUBLIC["domains"], "a": list(range(10))}))
    code = cli.main(["perturb", str(rows_path), "--gamma", "0.5", "--c", "1.0", "--engine", "spark", "--plan-only",
                     "--json", "--domains", str(domains), "--max-rows", "6000"])
    assert code == 0 and json.loads(capsys.readouterr().out)["plan"]["m"] == 11 * 4 * 301


@pytest.mark.parametrize("exploratory", [False, True])
def test_rows_outside_the_domain_are_left_out_as_on_polars(spark, tmp_path, exploratory):
    """A few rows hold a value outside a public domain (a, b), one of them the only row with its
    value of c: both engines leave them out of I, count them for the custodian alone, and an
    exploratory run's active domain of c never lists that value."""
    rng = np.random.default_rng(5)
    frame = pl.DataFrame({"a": rng.integers(0, 6, 400), "b": rng.choice(["x", "y", None], 400).tolist(),
                          "c": rng.integers(0, 10, 400)})
    stray = pl.DataFrame({"a": [99, 1, 2], "b": ["x", "w", "w"], "c": [77, 3, 3]}, schema=frame.schema)
    path = tmp_path / "rows.parquet"
    pl.concat([frame, stray]).write_parquet(path)
    request = PerturbRequest(AlphaBetaPlanRequest(gamma=0.5, d=0.05), max_rows=500, exploratory=exploratory,
                             domains={"a": list(range(6)), "b": ["x", "y"],
                                      **({} if exploratory else {"c": list(range(10))})})
    spark_run = perturb_spark(load_table(spark, path), request, out=tmp_path / "v.parquet", randomness=3)
    polars_run = perturb(load(path), request, randomness=3)
    facts = spark_run.custodian_report()
    assert facts == polars_run.custodian_report()
    assert (facts["rows"], facts["rows_outside_domain"]) == (403, 3)
    assert facts["distinct_tuples"] == frame.unique().height
    domain = spark_run.view.certificate.parameters["domain"]
    assert domain == polars_run.view.certificate.parameters["domain"]
    assert domain["b"]["values"] == ["x", "y", None] and 77 not in domain["c"]["values"]
    assert spark_run.plan.as_dict() == polars_run.plan.as_dict()


def test_an_unreviewed_order_makes_the_spark_view_unfit_as_on_polars(spark, tmp_path):
    """A domain from the schema's ``order`` marked ``from_data`` (read from the data, unreviewed):
    the certificate names it on both engines (issue 32). Spark builds no hierarchy from a schema,
    so an order is the schema key its domains can come from."""
    path = tmp_path / "rows.parquet"
    pl.DataFrame({"b": ["x", "y", "z", "x"] * 50}).write_parquet(path)
    toml = tmp_path / "schema.toml"
    toml.write_text('[attributes.b]\ntype = "ordinal"\norder = ["x", "y", "z"]\nfrom_data = ["order"]\n',
                    encoding="utf-8")
    request = PerturbRequest(AlphaBetaPlanRequest(gamma=0.5, d=0.1), max_rows=1000)
    on_spark = perturb_spark(load_table(spark, path, schema=toml), request, out=tmp_path / "v.parquet", randomness=3)
    on_polars = perturb(load(path, schema=toml), request, randomness=3)
    for certificate in (on_spark.view.certificate, on_polars.view.certificate):
        assert certificate.parameters["domain_sources"] == {"b": "schema order"}
        assert certificate.unreviewed_schema == {"b": ("order",)}
        assert any("column 'b': order read from the data" in r for r in certificate.unfit_reasons)


def test_spark_estimate_sends_no_literal_per_matched_value(spark, rows_path, tmp_path, monkeypatch):
    """Many matched domain values are a broadcast semi-join, not one Py4J literal each (296 s
    for 500k values): the literals do not grow with the values matched, and n_V (so the whole
    estimate) equals the driver's count on the same view, a null matched included."""
    from pyspark.sql.classic import column as classic_column

    from crowdsafe.engines.spark.alpha_beta import MATCH_LITERALS

    request = PerturbRequest(AlphaBetaPlanRequest(gamma=0.5, c=1.0, alpha=0.5), **PUBLIC)
    view = perturb_spark(load_table(spark, rows_path), request, out=tmp_path / "v.parquet", randomness=4).view
    written = pl.read_parquet(tmp_path / "v.parquet" / "*.parquet")
    local = View(view.domain.decode(view.domain.encode(written)), view.domain, view.alpha, view.beta,
                 view.n_bound, view.certificate)
    made = []
    real = classic_column._create_column_from_literal

    def counted(value):
        made.append(value)
        return real(value)

    monkeypatch.setattr(classic_column, "_create_column_from_literal", counted)
    literals = {}
    assert MATCH_LITERALS < 100
    queries = [
        "count where c >= 400",  # 100 values of c's domain matched
        "count where c >= 100 and b = 'x'",  # 250 and 1
        "count where (c is null or c < 200) and a != 3",  # 101 (a null) and 20
        "count where c < 40 and b != 'z'",  # 20 and 3: literals, as before
    ]
    for query in queries:
        made.clear()
        assert view.estimate(query) == estimate(local, query), query
        literals[query] = len(made)
    assert literals["count where c >= 400"] == literals["count where c >= 100 and b = 'x'"] - 1 < 10
