"""The linkage attack on Adult with a synthetic identified list (Sweeney 2002).

The identified list is drawn from Adult itself (training file, no missing values): a share of
its records (all, or half) with a made-up name each and the quasi-identifiers age, sex, race,
marital-status, native-country — what a voter list might hold. It is linked against releases
of the whole table: the table with names removed but quasi-identifiers as they are, Mondrian
releases for several k, and a safe (ε, δ)-DP publication. Counts from
:func:`crowdsafe.attacks.linkage.linkage_attack`; correct links are scored with a record id
that the attack itself never reads (the safe release publishes no such id, so there the
expected number of correct links assumes every sampled person is on the list, an upper bound).
"""

from __future__ import annotations

import numpy as np
import polars as pl
from matplotlib.figure import Figure

from crowdsafe.anonymize import anonymize_dataset
from crowdsafe.anonymize.publish import PlanRequest, plan_publication, publish_dataset
from crowdsafe.attacks.linkage import linkage_attack
from crowdsafe.datasets import adult
from crowdsafe.experiments.composition import with_record_id
from crowdsafe.experiments.registry import ExperimentContext, experiment

QI = ["age", "sex", "race", "marital-status", "native-country"]
RECORD = "record"
SHARES = (1.0, 0.5)
KS = (2, 5, 10, 25)
PUBLISH = (1.0, 1e-4)


@experiment("linkage",
            "Linkage attack: a synthetic identified list drawn from Adult "
            "against de-identified and anonymized releases")
def linkage(ctx: ExperimentContext) -> None:
    data = with_record_id(adult("train", drop_missing=True).with_roles(qi=QI), RECORD)
    releases = {"names removed": data.frame.select(QI + [RECORD])}
    for k in KS:
        releases[f"Mondrian k={k}"] = anonymize_dataset(data, "mondrian", k).frame.select(QI + [RECORD])
    streams = ctx.randomness.spawn(len(SHARES) + 1)
    plan = plan_publication(PlanRequest(*PUBLISH))
    published = publish_dataset(data.with_roles(qi=QI), plan, randomness=streams[-1]).release
    releases[f"safe publish k={plan.k}"] = published.frame.select(QI)
    columns: dict[str, list] = {k: [] for k in ("list_share", "release", "release_rows", "list_records",
                                                "reidentified_uniquely", "reidentified_uniquely_correct",
                                                "reidentified_with_probability_at_least_half",
                                                "expected_correct_links")}
    for share, stream in zip(SHARES, streams):
        chosen = np.sort(stream.generator.choice(data.n_rows, int(share * data.n_rows), replace=False))
        identified = (data.frame.gather(chosen).select(QI)
                      .with_columns(pl.Series(RECORD, chosen.astype(np.int64)),
                                    pl.format("person-{}", pl.Series(chosen)).alias("name")))
        for name, frame in releases.items():
            result = linkage_attack(frame, identified, QI, hierarchies=data.hierarchies,
                                    truth_id=RECORD if RECORD in frame.columns else None)
            s = result.summary
            for key, value in (("list_share", share), ("release", name), ("release_rows", s["release_rows"]),
                               ("list_records", s["external_records"]),
                               ("reidentified_uniquely", s["reidentified_uniquely"]),
                               ("reidentified_uniquely_correct", s.get("reidentified_uniquely_correct")),
                               ("reidentified_with_probability_at_least_half",
                                s["reidentified_with_probability_at_least_half"]),
                               ("expected_correct_links",
                                s.get("expected_correct_links", s["expected_correct_links_if_listed"]))):
                columns[key].append(value)
    ctx.csv("linkage", columns)
    frame = pl.DataFrame(columns)
    figure = Figure(figsize=(12, 4))
    axes = figure.subplots(1, len(SHARES), sharey=True)
    for axis, share in zip(axes, SHARES):
        part = frame.filter(pl.col("list_share") == share)
        x = np.arange(part.height)
        axis.bar(x - 0.2, part["reidentified_uniquely"], 0.4, label="re-identified uniquely")
        axis.bar(x + 0.2, part["reidentified_with_probability_at_least_half"], 0.4, label="with probability ≥ 1/2")
        axis.set_xticks(x, part["release"].to_list(), rotation=30, ha="right", fontsize=8)
        axis.set_yscale("symlog", linthresh=10)
        axis.set_title(f"identified list: {share:.0%} of Adult ({part['list_records'][0]:,} names)", fontsize=9)
    axes[0].set_ylabel("published rows (of 30,162)")
    axes[0].legend(fontsize=8)
    figure.tight_layout()
    ctx.png("linkage", figure)
    ctx.summary["linkage"] = frame.to_dicts()

