"""Work that runs beside a trial's load: the compaction tuner of factor `tuner`.

The tuner lives in casslab.tune, a layer above the campaign runner, so the runner knows
it only through the `Beside` protocol below; the CLI (which may import tune) hands the
runner an implementation (casslab.tune.factor.TunerBeside). Only the shape of a level is
checked at spec time (casslab.experiment.factors); the implementation checks what a
level means (a rules file's contents) before the first trial.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, Protocol

from casslab.experiment.factors.parsers import TUNER_OFF

if TYPE_CHECKING:
    from casslab.experiment.spec.model import CampaignSpec


def tuner_levels(spec: CampaignSpec) -> tuple[str, ...]:
    """The levels of the spec's `tuner` factor other than off (none without the factor)."""
    return tuple(str(level) for f in spec.factors if f.kind == "tuner"
                 for level in f.levels if level != TUNER_OFF)


@dataclass(frozen=True)
class TrialSite:
    """What work beside a trial needs to reach its cluster. params: the cell's levels;
    tuner: its tuner level (off: none); hosts: the running nodes' addresses (no port);
    netns: the lab's network namespace (None: the host's)."""

    params: Mapping[str, Any]
    tuner: str
    keyspace: str
    hosts: tuple[str, ...]
    netns: str | None
    label: str


@dataclass(frozen=True)
class BesideResult:
    """What the work left: its audit records (tune.audit's form, in order) and, when it
    failed, why (the trial is then failed too)."""

    audit: list[dict[str, Any]] = field(default_factory=list)
    error: str | None = None


class Running(Protocol):
    def stop(self) -> BesideResult:
        """Stop the work (it ends within a few seconds) and say what it left."""
        ...


class Beside(Protocol):
    def check(self, spec: CampaignSpec) -> None:
        """Raise UsageError (one line: factor, level, what is valid) for a level this
        cannot run; called before the first trial."""
        ...

    def start(self, site: TrialSite) -> Running | None:
        """Start the work for a trial's parameters (None: nothing to do for them);
        called right before the load starts."""
        ...
