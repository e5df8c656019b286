"""A refusal as the app's pages say it, with the next step a person can take there.

A library message names what to change as a Python caller writes it (``qi=[...]``); the app says
where its user changes it (:data:`APP_WORDS`, applied to every message a page shows).

A spent budget: the ledger finds a table's budget by its rows, so the library's message says it
is custodian-only (``errors.LEDGER_REFUSAL``) and the page shows it in a custodian panel. A total
given on the plan page that this release alone exceeds registered nothing: give it again, larger.
A registered budget is raised on the ledger's record (a line of its budget history) from the
command line: the app has no form for that decision, so the page names the command.
"""

from __future__ import annotations

import shlex
from collections.abc import Callable, Mapping
from pathlib import Path
from typing import Any

from crowdsafe.errors import BudgetExceeded, CrowdsafeError, SampleReuseError

#: Python forms in library messages, and what the app's user does instead.
APP_WORDS = (
    ("name them with qi=[...]", "make at least one column a quasi-identifier on the schema page"),
    # (anonymize.plan.check_candidates: the app has no columns, scheme or hierarchy to give)
    ("make fewer columns quasi-identifiers (declare the others' roles in a schema), publish fewer columns with the "
     "columns parameter, give shorter hierarchies, or fix the scheme with the scheme parameter",
     "make fewer columns quasi-identifiers on the schema page (the others \u201cother\u201d: not published)"),
    # (anonymize.plan: the app chooses the scheme by the mechanism; it offers no fixed one)
    ("give a fixed scheme with the scheme parameter for a strongly safe release",
     "leave \u03b51 empty for the planner's share of \u03b5"),
    # (privacy.ledger_mark and the ledger's other refusals of a file it cannot use)
    ("(ledger=PATH or CROWDSAFE_LEDGER)", "(stop the app and start it again with --ledger PATH)"),
)


def in_app_words(message: str) -> str:
    """``message`` with the Python forms of :data:`APP_WORDS` in the app's words."""
    for python, app in APP_WORDS:
        message = message.replace(python, app)
    return message


def publish_refusal(error: CrowdsafeError, budget: Callable[[], Mapping[str, Any] | None], ledger: Path) -> str:
    """``error``'s message, with the next step when it refuses a spent budget. ``budget``: the
    table's budget in the ledger (``Workspace.ledger_view``), None when it has none; ``ledger``:
    the ledger's path. The stuck case (a budget with δ = 0) keeps its own advice, in the command
    line's words instead of ``change_budget(...)``."""
    from crowdsafe.cli.flags import cli_message

    spent = isinstance(error, BudgetExceeded) and not isinstance(error, SampleReuseError)
    if not spent or "has spent" not in str(error):
        return str(error)
    try:
        registered = budget()
    except CrowdsafeError:
        registered = None
    if registered is None:
        return str(error) + (". Give a total budget of at least this release's cost under \u201cTotal budget of this "
                             "dataset\u201d on the plan page, or leave it empty to register that cost")
    if "allow_raise" in error.parameters:
        return cli_message(error)
    return str(error) + (
        ". To spend more on this table, raise its total budget on the record from a terminal: `crowdsafe ledger budget "
        f"{shlex.quote(str(registered['name']))} --epsilon E --delta D --raise --ledger {shlex.quote(str(ledger))}` "
        "(E, D: the new total), then publish again from the plan page")
