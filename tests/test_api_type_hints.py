"""One parameter, one type hint, in every public function that takes it (found by an API sweep,
2026-11-30): ``perturb(seed=...)`` was hinted ``Any`` where ``query`` and ``publish`` say
``Randomness | int | None``, and ``perturb``'s and ``plan_perturbation``'s ``domains`` / ``domain``
``dict`` where ``query`` takes (and they accept) any mapping."""

from __future__ import annotations

import inspect

from crowdsafe import api


def hint(function, parameter: str) -> object:
    return inspect.signature(function).parameters[parameter].annotation  # as written in the source


def test_a_parameter_has_one_hint_everywhere():
    assert {hint(getattr(api, name), "seed") for name in ("query", "publish", "perturb")} == {
        "Randomness | int | None"}
    wanted = hint(api.query, "domain")
    for function in (api.perturb, api.plan_perturbation):
        assert hint(function, "domain") == hint(function, "domains") == wanted, function.__name__
