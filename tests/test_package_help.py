"""``help(crowdsafe)`` names where the Python API is and every public function in it (found by an
API sweep, 2026-11-30: it said what crowdsafe does and listed its subpackages, but a notebook user
could not find ``crowdsafe.api`` nor learn that ``crowdsafe.query`` exists, served by the package's
``__getattr__``, which ``help`` does not show)."""

from __future__ import annotations

import inspect

import crowdsafe
from crowdsafe import api


def test_the_package_docstring_names_every_public_function():
    public = [name for name, value in vars(api).items()  # (load, names, keywords: imported helpers)
              if inspect.isfunction(value) and not name.startswith("_")
              and value.__module__ in {"crowdsafe.api", "crowdsafe.measures", "crowdsafe.budgets"}]
    assert {"publish", "query", "perturb", "anonymize", "check", "set_budget"} <= set(public)
    doc = crowdsafe.__doc__ or ""
    assert "crowdsafe.api" in doc
    missing = [name for name in public if f"``{name}``" not in doc]
    assert not missing, missing
    for name in ("query", "publish", "plan_publish"):  # served by the package's __getattr__
        assert f"``crowdsafe.{name}``" in doc and getattr(crowdsafe, name) is getattr(api, name)
