"""Work that runs beside a trial's load: the compaction tuner of factor `tuner`.

The tuner lives in casslab.tune, a layer above the campaign runner, so the runner knows
it only through the `Beside` protocol below; the CLI (which may import tune) hands the
runner an implementation (casslab.tune.factor.TunerBeside). Only the shape of a level is
checked here, at spec time; the implementation checks what a level means (a rules file's
contents) before the first trial.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any, Protocol

if TYPE_CHECKING:
    from casslab.experiment.spec.model import CampaignSpec

TUNER_FACTOR = "tuner"
TUNER_OFF = "off"
TUNER_BUILTIN = ("seed003",)  # casslab.tune.rules.seed003_rules
RULES_SUFFIXES = (".yaml", ".yml", ".json")
TUNER_VALID = "off, seed003 or a rules file (.yaml, .yml, .json) as `casslab tune --rules` takes"


def tuner_level(value: Any, base_dir: Path | None) -> str:
    """A `tuner` level as the runner keeps it: off, a built-in rules name, or a rules
    file's absolute path (relative ones are read from the spec's directory). Raises
    ValueError naming the level and the valid ones."""
    if value is False:  # YAML 1.1 reads a bare `off` as false
        return TUNER_OFF
    if value == TUNER_OFF or value in TUNER_BUILTIN:
        return str(value)
    if isinstance(value, str) and value.endswith(RULES_SUFFIXES):
        p = Path(value) if Path(value).is_absolute() else (base_dir or Path.cwd()) / value
        if not p.is_file():
            raise ValueError(f"rules file {value} does not exist (looked at {p}; valid: "
                             f"{TUNER_VALID})")
        return str(p.resolve())
    raise ValueError(f"{value!r} is not a tuner level (valid: {TUNER_VALID})")


def tuner_levels(spec: CampaignSpec) -> tuple[str, ...]:
    """The levels of the spec's `tuner` factor other than off (none without the factor)."""
    return tuple(str(level) for f in spec.factors if f.name == TUNER_FACTOR
                 for level in f.levels if level != TUNER_OFF)


@dataclass(frozen=True)
class TrialSite:
    """What work beside a trial needs to reach its cluster. hosts: the running nodes'
    addresses (no port); netns: the lab's network namespace (None: the host's)."""

    params: Mapping[str, Any]
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
