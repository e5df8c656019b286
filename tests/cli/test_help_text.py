"""What ``--help`` shows a new user (issue 35): square brackets survive the help formatter, the
defaults it states are the planner's, and the API's defaults are the command line's.

- The help is Rich markup: an unescaped ``[spark]`` is read as a style tag and vanishes (``pip
  install 'crowdsafe'``). Every command's help is rendered and every bracketed word of its source
  text looked for in the output.
- ``--epsilon1`` and ``--beta`` state the planner's rule from the planner's own constants
  (:mod:`crowdsafe.defaults`); the planned ε1 is checked against the share the help states.
- ``delta`` has one default, :data:`crowdsafe.defaults.DEFAULT_DELTA`, in the API and the CLI.

Each check is run on the broken variant it guards against, and fails there.
"""

from __future__ import annotations

import contextlib
import inspect
import io
import math
import re
from collections.abc import Iterator

import pytest
import typer.main

from crowdsafe import api, cli, defaults
from crowdsafe.anonymize.plan import PlanRequest, plan_publication
from crowdsafe.privacy.amplification import largest_rate_for_epsilon
from crowdsafe.privacy.planning import least_k

BRACKETED = re.compile(r"[^\s\[]*\[[^\]\s]*\][^\s,;)'\"]*")


def commands() -> Iterator[tuple[list[str], object]]:
    """(path, Click command) of every command and command group of the app."""
    def walk(command: object, path: list[str]) -> Iterator[tuple[list[str], object]]:
        yield path, command
        for name, sub in getattr(command, "commands", {}).items():
            yield from walk(sub, [*path, name])
    yield from walk(typer.main.get_command(cli.app), [])


def folded(text: str) -> str:
    """Help as shown, box lines removed and white space folded (a wrapped phrase reads as one)."""
    return " ".join(re.sub(r"[│╭╮╰╯─]", " ", text).split())


def rendered_help(path: list[str]) -> str:
    """``crowdsafe PATH --help`` as shown, folded."""
    out = io.StringIO()
    with contextlib.redirect_stdout(out), contextlib.suppress(SystemExit):
        cli.main([*path, "--help"])
    return folded(out.getvalue())


def lost_brackets(command: object, shown: str) -> list[str]:
    """The bracketed words of ``command``'s help texts (its docstring and each parameter's help;
    Rich's escape ``\\[`` read as the bracket it shows) that ``shown`` lacks."""
    texts = [getattr(command, "help", None) or ""]
    texts += [getattr(p, "help", None) or "" for p in getattr(command, "params", [])]
    wanted = {m.group(0) for text in texts for m in BRACKETED.finditer(text.replace("\\[", "["))}
    return sorted(w for w in wanted if w not in shown)


@pytest.mark.slow  # half a second or more (the quick loop: README)
def test_every_bracketed_word_of_every_help_survives_the_formatter():
    lost = {" ".join(path) or "crowdsafe": words for path, command in commands()
            if (words := lost_brackets(command, rendered_help(path)))}
    assert lost == {}
    assert "pip install 'crowdsafe[spark]'" in rendered_help(["publish"])


def test_the_broken_variant_is_caught():
    """An unescaped ``[spark]`` (as ``--engine``'s help had it) is eaten, and the check names it."""
    app = typer.Typer(rich_markup_mode="rich")

    @app.command()
    def run(engine: str = typer.Option("polars", help="spark (pip install 'crowdsafe[spark]')")) -> None:
        """Run."""

    out = io.StringIO()
    with contextlib.redirect_stdout(out), contextlib.suppress(SystemExit):
        app(["--help"], prog_name="x")
    shown = folded(out.getvalue())
    assert "pip install 'crowdsafe')" in shown
    assert lost_brackets(typer.main.get_command(app), shown) == ["'crowdsafe[spark]"]


# -- the planner's defaults, as the help states them -------------------------------------------------


def stated_epsilon1_shares(text: str) -> tuple[float, float]:
    """The shares of ε the help gives the planned ε1: 'within A%–B% of ε', else a single 'N% of ε'."""
    ranged = re.search(r"within (\d+(?:\.\d+)?)%–(\d+(?:\.\d+)?)% of ε", text)
    if ranged:
        return float(ranged.group(1)) / 100, float(ranged.group(2)) / 100
    single = re.search(r"default: (\d+(?:\.\d+)?)% of ε", text)
    assert single, text
    return float(single.group(1)) / 100, float(single.group(1)) / 100


def option_help(path: list[str], name: str) -> str:
    command = next(c for p, c in commands() if p == path)
    return next(p.help for p in command.params if p.name == name)  # type: ignore[attr-defined]


ADULT_CANDIDATES = 6 * 3 * 4 * 4 * 4 * 2 * 2 * 4 * 2  # (height + 1) over Adult's nine published columns


def assert_planned_epsilon1(epsilon: float, candidates: int, text: str) -> None:
    """The planner's ε1 lies in the shares ``text`` (an --epsilon1 help) states, and where the
    bounds do not bind it is m (ln L + ln 20) / k with k at the largest admitted rate (m = 1: the
    default objective is monotone), as the help says (up to the step of k by one: the planner's
    fixed-point iteration stops near the rule, where a whole k makes it jump)."""
    low, high = stated_epsilon1_shares(text)
    plan = plan_publication(PlanRequest(epsilon, 1e-6, candidates=candidates))
    share = plan.epsilon1 / epsilon
    assert low - 1e-9 <= share <= high + 1e-9, (share, low, high)
    if low < share < high:
        k = max(least_k(epsilon, 1e-6, largest_rate_for_epsilon(epsilon, plan.epsilon1), plan.epsilon1), 2)
        rule = (math.log(candidates) + math.log(20)) / (defaults.EPSILON1_LOSS_CLASSES * k)
        assert plan.epsilon1 == pytest.approx(rule, rel=0.05)  # k is whole: the iteration stops near it


@pytest.mark.parametrize("epsilon, candidates", [(1.0, ADULT_CANDIDATES), (0.5, 50), (4.0, 4_000_000), (8.0, 3)])
def test_the_help_states_the_planned_epsilon1(epsilon, candidates):
    assert_planned_epsilon1(epsilon, candidates, option_help(["publish"], "epsilon1"))


def test_adult_plans_more_than_the_old_help_said_and_the_check_catches_the_old_text():
    """On Adult at ε = 1 the planner spends about 19% of ε on the selection: the old help's
    "default: 10% of ε" fails the check above."""
    plan = plan_publication(PlanRequest(1.0, 1e-6, candidates=ADULT_CANDIDATES))
    assert 0.15 < plan.epsilon1 < 0.25
    old = "ε spent choosing the scheme from the data (default: 10% of ε)."
    with pytest.raises(AssertionError):
        assert_planned_epsilon1(1.0, ADULT_CANDIDATES, old)


def test_the_help_numbers_are_the_planners_constants():
    shown = rendered_help(["publish"])
    low, high = defaults.EPSILON1_SHARE_RANGE
    assert f"within {low:.0%}–{high:.0%} of ε" in shown
    assert f"{defaults.EPSILON1_SHARE_UNSIZED:.0%} of ε with --engine spark" in shown
    assert f"within {defaults.RATE_TOLERANCE:.0%} of the best" in shown
    unsized = plan_publication(PlanRequest(1.0, 1e-6))  # no lattice size: the Spark engine's plan
    assert unsized.epsilon1 == pytest.approx(defaults.EPSILON1_SHARE_UNSIZED)


def test_the_help_states_the_planned_rate():
    """--beta's help: the largest rate whose β/k is within the tolerance of the best, which is
    not the largest admitted rate 1 − e^−(ε − ε1) that it used to name."""
    text = option_help(["publish"], "beta")
    tolerance = float(re.search(r"within (\d+)% of the best", text).group(1)) / 100
    assert tolerance == defaults.RATE_TOLERANCE
    plan = plan_publication(PlanRequest(1.0, 1e-6, epsilon1=0.1))
    assert plan.beta < largest_rate_for_epsilon(1.0, 0.1) - 1e-6  # "default: 1 − e^−(ε − ε1)" was wrong


# -- delta: one default ---------------------------------------------------------------------------------


def cli_default(path: list[str], name: str) -> object:
    command = next(c for p, c in commands() if p == path)
    return next(p.default for p in command.params if p.name == name)  # type: ignore[attr-defined]


def api_default(function: object, name: str) -> object:
    return inspect.signature(function).parameters[name].default  # type: ignore[arg-type]


def test_delta_has_one_default_in_the_api_and_the_command_line():
    assert api_default(api.publish, "delta") == cli_default(["publish"], "delta") == defaults.DEFAULT_DELTA
    assert api_default(api.plan_publish, "delta") == defaults.DEFAULT_DELTA
    assert "DEFAULT_DELTA" in (api.publish.__doc__ or "")
    publication = api.publish("adult", epsilon=1.0, seed=1, ledger=None, report=False)
    assert publication.plan.delta_target == defaults.DEFAULT_DELTA


def test_the_delta_check_catches_an_api_without_the_default():
    def publish(data, *, epsilon, delta):  # the signature publish had
        return None

    assert api_default(publish, "delta") is inspect.Parameter.empty
    assert api_default(publish, "delta") != cli_default(["publish"], "delta")
