"""Limits decided from the parameters alone: an epsilon so large that beta rounds to 1 or so small
that no beta exceeds delta, a k beyond the planner's search, an output path that cannot be written."""

from __future__ import annotations

import math

import pytest
from read_only import read_only

from crowdsafe.anonymize.plan import best_rate, check_publication
from crowdsafe.anonymize.publish import PlanRequest, plan_publication
from crowdsafe.errors import InputError, ParameterError
from crowdsafe.files import check_output_path
from crowdsafe.privacy.planning import largest_sampled_epsilon, smallest_sampled_epsilon


def _beta(epsilon: float, epsilon1: float) -> float:  # 1 - e^-(epsilon - epsilon1), as the theorem states it
    return -math.expm1(-(epsilon - epsilon1))


@pytest.mark.parametrize(("epsilon1", "share"), [(0.0, 0.0), (0.5, 0.0), (0.0, 0.1)])
def test_the_largest_epsilon_is_the_last_double_whose_beta_is_below_one(epsilon1, share):
    largest = largest_sampled_epsilon(epsilon1=epsilon1, epsilon1_share=share)
    above = math.nextafter(largest, math.inf)
    assert _beta(largest, epsilon1 + share * largest) < 1.0
    assert _beta(above, epsilon1 + share * above) == 1.0
    # e^-x drops below half an ulp of 1 (2^-54) at x = 54 ln 2 = 37.43
    assert largest - epsilon1 - share * largest == pytest.approx(54 * math.log(2), abs=1e-6)


def test_a_huge_epsilon_is_refused_naming_epsilon_and_the_largest_value():
    with pytest.raises(ParameterError, match=r"^epsilon = 1e\+308 is too large.*at most 41\.5888 with epsilon1 = 10% "):
        plan_publication(PlanRequest(1e308, 1e-6))
    with pytest.raises(ParameterError, match=r"at most 37\.4299 with epsilon1 = 0$"):
        plan_publication(PlanRequest(1e308, 1e-6, scheme="none"))
    with pytest.raises(ParameterError, match=r"at most 37\.9299 with epsilon1 = 0\.5$"):
        plan_publication(PlanRequest(40.0, 1e-6, epsilon1=0.5))
    with pytest.raises(ParameterError, match="too large"):
        plan_publication(PlanRequest(1e308, 1e-6, k=10))
    assert plan_publication(PlanRequest(5.0, 1e-6)).beta < 1.0  # an ordinary epsilon is planned as before


@pytest.mark.parametrize(("delta", "epsilon1", "share"), [(1e-6, 0.0, 0.0), (1e-6, 0.5, 0.0), (1e-6, 0.0, 0.1),
                                                          (5e-324, 0.0, 0.1)])
def test_the_smallest_epsilon_is_the_first_double_with_a_rate_above_delta(delta, epsilon1, share):
    smallest = smallest_sampled_epsilon(delta, epsilon1=epsilon1, epsilon1_share=share)
    below = math.nextafter(smallest, 0.0)
    assert _beta(smallest, epsilon1 + share * smallest) > delta
    assert not _beta(below, epsilon1 + share * below) > delta


def test_a_tiny_epsilon_is_refused_naming_the_range_before_anything_is_solved():
    # (beta, epsilon, delta)-DPS needs beta > delta, and beta <= 1 - e^-(epsilon - epsilon1) ~ 4.9e-324
    refusal = (r"^epsilon = 4\.94066e-324 is too small: the sampling rate beta must exceed delta = 1e-06 .* "
               r"from 1\.112e-06 to 41\.5888 with epsilon1 = 10% of epsilon \(this check takes that share while "
               r"epsilon1 is left to the planner, which then sizes it within 1%-50% of epsilon; give epsilon1 or beta "
               r"to be checked with yours\)$")
    with pytest.raises(ParameterError, match=refusal):
        plan_publication(PlanRequest(5e-324, 1e-6))
    with pytest.raises(ParameterError, match=r"from 1\.001e-06 to 37\.4299 with epsilon1 = 0$"):
        plan_publication(PlanRequest(5e-324, 1e-6, scheme="none"))
    for request in (PlanRequest(5e-324, 1e-6, k=10), PlanRequest(5e-324, 1e-6, candidates=36864)):
        with pytest.raises(ParameterError, match="is too small"):
            check_publication(request)
    with pytest.raises(ParameterError, match="no sampling rate reaches"):
        best_rate(5e-324, 1e-6, 0.0)  # the rate grid from top/2 = 0 is never built
    assert plan_publication(PlanRequest(0.5, 1e-6)).beta > 1e-6  # an ordinary epsilon is planned as before


def test_a_k_beyond_the_planner_is_refused_at_once():
    with pytest.raises(ParameterError, match=r"^k must be at most 10,000,000"):
        plan_publication(PlanRequest(1.0, 1e-6, k=10**24))


def test_output_paths_that_cannot_be_written_are_refused(tmp_path):
    (tmp_path / "folder.csv").mkdir()
    (tmp_path / "file").write_text("x")
    with pytest.raises(InputError, match="is a folder"):
        check_output_path(tmp_path / "folder.csv")
    with pytest.raises(InputError, match="is a file, not a folder"):
        check_output_path(tmp_path / "file" / "r.csv")
    assert check_output_path(tmp_path / "new" / "deeper" / "r.csv") == tmp_path / "new" / "deeper" / "r.csv"


def test_an_output_in_a_read_only_folder_is_refused(tmp_path):
    locked = tmp_path / "locked"
    locked.mkdir()
    with read_only(locked):
        with pytest.raises(InputError, match="not writable"):
            check_output_path(locked / "r.csv")


def test_printed_values_are_not_highlighted():
    """Rich's highlighter colours numbers and strings in what is printed; its patterns take time
    quadratic in a long value (a 200,000-character column name held ``check`` for minutes). The
    commands' consoles print values as they are: no colour is added to a plain line."""
    import io

    from crowdsafe.cli.lazy import Console

    out = io.StringIO()
    console = Console(file=out, force_terminal=True, color_system="truecolor")
    console.print("k = 10 of 'x' at 0x1f, https://example.org [0, 40)")
    assert "\x1b[" not in out.getvalue() and "[0, 40)" in out.getvalue()


@pytest.mark.parametrize("delta", [1.5, 1.0, 0.0, -1e-6])
def test_a_delta_outside_zero_one_is_named_as_such(delta):
    """It read "no sampling rate reaches delta = 1.5 ...; raise epsilon or delta"."""
    with pytest.raises(ParameterError, match=r"delta must satisfy 0 < delta < 1"):
        plan_publication(PlanRequest(1.0, delta))


def test_the_largest_epsilon_says_the_share_is_the_checks_not_the_plans():
    """Found by the app sweep: ε = 41.6 was refused "with epsilon1 = 10% of epsilon", while the plan
    at ε = 41.5 spends another share (the planner sizes ε1 within 1%-50% of ε once it knows the
    lattice): the refusal says the 10% is the check's, and how to be checked with one's own."""
    with pytest.raises(ParameterError) as refused:
        plan_publication(PlanRequest(41.6, 1e-6))
    said = str(refused.value)
    assert "this check takes that share while epsilon1 is left to the planner" in said
    assert "within 1%-50% of epsilon" in said and "give epsilon1 or beta" in said
    planned = plan_publication(PlanRequest(41.5, 1e-6, candidates=36864))  # the lattice's size known: sized
    assert planned.epsilon1 != pytest.approx(0.1 * 41.5)  # (so the 10% is not the plan's rule)
    assert plan_publication(PlanRequest(41.6, 1e-6, epsilon1=5.0)).beta < 1.0  # given ε1: checked with it


@pytest.mark.parametrize(("k", "why"), [(-3, "-3 rows is no group"), (0, "0 rows is no group"),
                                        (1, "with k = 1 nothing is suppressed")])
def test_a_k_below_2_is_told_what_is_wrong_with_it(k, why):
    with pytest.raises(ParameterError, match=r"^k must be a whole number >= 2") as refused:
        plan_publication(PlanRequest(1.0, 1e-6, k=k))
    assert why in str(refused.value)
    assert (k == 1) == ("k = 1" in str(refused.value))  # k = 1 is spoken of only when it was given
