"""Privacy profiles: what each piece of a release pipeline declares about itself.

A pipeline is written in the two-step form ``Apply(Am(D), Sample_β(D), k)``. Each piece states
its profile, and :func:`crowdsafe.privacy.certify.certify_chain` turns the chain of profiles into
a :class:`~crowdsafe.privacy.certificate.Certificate`:

- :class:`SamplingProfile` — Bernoulli sampling with rate β (β = 1: no sampling), and the
  identity of the sample drawn (so that a second use of it can be refused);
- :class:`RecodingProfile` — how the recoding g was chosen: *strongly safe* (fixed without
  looking at the data), *ε1-safe* (chosen by an ε1-DP mechanism), or *unsafe* (fitted to the
  data: Mondrian, microaggregation, optimal lattice search...), with the reason;
- :class:`SuppressionProfile` — every output tuple occurring fewer than k times is suppressed;
- :class:`MechanismProfile` — any other (ε, δ)-DP mechanism (noise, a DP query).
"""

from __future__ import annotations

import secrets
from dataclasses import dataclass, field
from typing import Any, Literal

from crowdsafe.errors import ParameterError
from crowdsafe.privacy.amplification import check_rate
from crowdsafe.privacy.dps import check_k
from crowdsafe.privacy.loss import PrivacyLoss, check_epsilon

Safety = Literal["strongly-safe", "epsilon-safe", "unsafe"]


def new_sample_id() -> str:
    """A fresh random identity for a newly drawn sample."""
    return "sample-" + secrets.token_hex(8)


@dataclass(frozen=True)
class SamplingProfile:
    """Bernoulli(rate) sampling of rows; ``sample_id`` names the sample drawn (None: not yet)."""

    rate: float
    sample_id: str | None = None

    def __post_init__(self) -> None:
        object.__setattr__(self, "rate", check_rate(self.rate))

    def step(self) -> dict[str, Any]:
        return {
            "step": "sample",
            "name": "Bernoulli sampling" if self.rate < 1.0 else "no sampling",
            "parameters": {"beta": self.rate},
        }


@dataclass(frozen=True)
class RecodingProfile:
    """How the recoding g was chosen, which decides whether any guarantee holds. ``reads``: what an
    ε1-DP choice saw, the sample (Li, Qardaji, Su 2012, Definition 5) or the whole table (then
    the release composes the choice with a strongly safe recoding: selection/PROOF.md §8)."""

    safety: Safety
    name: str
    epsilon1: float = 0.0
    reason: str | None = None
    reads: str = "sample"

    def __post_init__(self) -> None:
        if self.safety not in ("strongly-safe", "epsilon-safe", "unsafe"):
            raise ParameterError(
                f"recoding safety must be strongly-safe, epsilon-safe or unsafe, got {self.safety!r}"
            )
        object.__setattr__(self, "epsilon1", check_epsilon(self.epsilon1, "epsilon1"))
        if self.safety == "epsilon-safe" and self.epsilon1 <= 0.0:
            raise ParameterError("an epsilon-safe recoding needs its selection budget epsilon1 > 0")
        if self.safety != "epsilon-safe" and self.epsilon1 != 0.0:
            raise ParameterError(f"a {self.safety} recoding has no selection budget epsilon1")
        if self.reads not in ("sample", "table"):
            raise ParameterError(f"an epsilon1-DP choice reads the sample or the table, not {self.reads!r}")
        if self.reads == "table" and self.safety != "epsilon-safe":
            raise ParameterError("only an epsilon1-DP choice of the recoding can read the whole table")
        if self.safety == "unsafe" and not self.reason:
            object.__setattr__(self, "reason", f"data-dependent recoding ({self.name})")

    @classmethod
    def strongly_safe(cls, name: str = "fixed generalization scheme") -> RecodingProfile:
        """A recoding fixed without looking at the data (Li, Qardaji, Su 2012, Definition 4)."""
        return cls("strongly-safe", name)

    @classmethod
    def epsilon_safe(
        cls, epsilon1: float, name: str = "exponential mechanism over generalization schemes"
    ) -> RecodingProfile:
        """A recoding chosen by an ε1-DP mechanism run on the sample (Definition 5)."""
        return cls("epsilon-safe", name, epsilon1)

    @classmethod
    def chosen_on_table(
        cls, epsilon1: float, name: str = "exponential mechanism over generalization schemes, on the table"
    ) -> RecodingProfile:
        """A recoding chosen by an ε1-DP mechanism run on the whole table, independently of the
        sample's draw (selection/PROOF.md §8)."""
        return cls("epsilon-safe", name, epsilon1, reads="table")

    @classmethod
    def unsafe(cls, name: str, reason: str | None = None) -> RecodingProfile:
        """A recoding fitted to the data: no formal guarantee, however large k is."""
        return cls("unsafe", name, 0.0, reason)

    def step(self) -> dict[str, Any]:
        parameters: dict[str, Any] = {"safety": self.safety}
        if self.safety == "epsilon-safe":
            parameters["epsilon1"] = self.epsilon1
            parameters["chosen_on"] = self.reads
        return {"step": "recode", "name": self.name, "parameters": parameters}


@dataclass(frozen=True)
class SuppressionProfile:
    """Suppress every output tuple that occurs fewer than ``k`` times."""

    k: int

    def __post_init__(self) -> None:
        object.__setattr__(self, "k", check_k(self.k))

    def step(self) -> dict[str, Any]:
        return {"step": "suppress", "name": "suppress groups smaller than k",
                "parameters": {"k": self.k}}


@dataclass(frozen=True)
class MechanismProfile:
    """An (ε, δ)-DP mechanism with the theorem that makes it so."""

    name: str
    loss: PrivacyLoss
    theorem: str
    parameters: dict[str, Any] = field(default_factory=dict)

    def step(self) -> dict[str, Any]:
        return {"step": "mechanism", "name": self.name,
                "parameters": {**self.parameters, **self.loss.as_dict()}}


Profile = SamplingProfile | RecodingProfile | SuppressionProfile | MechanismProfile
