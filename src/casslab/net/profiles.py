"""Link profiles: delay, jitter, loss and bandwidth of one kind of link, with sources.

Every value is ONE-WAY and applies to each direction of a link, so a profile's round
trip is about 2 x delay_ms. Jitter is uniform in [-jitter_ms, +jitter_ms] (netem's
default distribution) but never reorders packets within a link. `loss_burst` is the mean
length of a loss burst in packets (Gilbert model); 1 means independent random loss.
`rate_mbit` None means unlimited.
"""

from __future__ import annotations

from dataclasses import asdict, dataclass, fields, replace
from pathlib import Path
from typing import Any

from casslab.core import specio
from casslab.net.errors import NetSpecError
from casslab.net.units import parse_burst, parse_mbit, parse_ms, parse_pct


@dataclass(frozen=True)
class LinkConditions:
    """Conditions of one directed link. Units are in the names."""

    delay_ms: float = 0.0
    jitter_ms: float = 0.0
    loss_pct: float = 0.0
    loss_burst: float = 1.0
    rate_mbit: float | None = None

    @property
    def needs_daemon(self) -> bool:
        """True when packets must pass the delay daemon (delay, jitter or loss)."""
        return self.delay_ms > 0 or self.jitter_ms > 0 or self.loss_pct > 0

    @property
    def is_clean(self) -> bool:
        return not self.needs_daemon and self.rate_mbit is None

    def to_dict(self) -> dict[str, Any]:
        return asdict(self)


FIELDS = tuple(f.name for f in fields(LinkConditions))
# Short names accepted on the command line (`--link node1-node2:delay=10ms,loss=1%`).
ALIASES = {"delay": "delay_ms", "jitter": "jitter_ms", "loss": "loss_pct",
           "burst": "loss_burst", "rate": "rate_mbit"}


def parse_field(name: str, value: Any, where: str) -> tuple[str, float | None]:
    """Validate one condition field; returns (canonical name, value in its unit)."""
    key = ALIASES.get(name, name)
    label = f"{where}: {name}" if where else name
    if key == "delay_ms" or key == "jitter_ms":
        return key, parse_ms(value, label)
    if key == "loss_pct":
        return key, parse_pct(value, label)
    if key == "loss_burst":
        return key, parse_burst(value, label)
    if key == "rate_mbit":
        if value is None or str(value).lower() in ("none", "unlimited"):
            return key, None
        return key, parse_mbit(value, label)
    valid = ", ".join(FIELDS + tuple(ALIASES))
    raise NetSpecError(f"{label}: unknown field (valid: {valid})")


def conditions_from_mapping(raw: dict[str, Any], where: str,
                            base: LinkConditions | None = None) -> LinkConditions:
    """Build conditions from a mapping of field -> value on top of `base`."""
    values: dict[str, Any] = {}
    for k, v in raw.items():
        key, val = parse_field(str(k), v, where)
        values[key] = val
    return replace(base or LinkConditions(), **values)


@dataclass(frozen=True)
class NetProfile:
    name: str
    conditions: LinkConditions
    source: str


def _p(name: str, source: str, **kw: Any) -> tuple[str, NetProfile]:
    return name, NetProfile(name, LinkConditions(**kw), source)


BUILTIN_PROFILES: dict[str, NetProfile] = dict([
    _p("loopback", "no emulation: the lab's own loopback"),
    _p("ethernet", "switched Gigabit Ethernet LAN: 1000BASE-T line rate; ~0.1 ms ping round "
       "trip on one switch (0.05 ms each way)", delay_ms=0.05, rate_mbit=1000.0),
    _p("wifi", "802.11n LAN: 72.2 Mbit/s PHY for one 20 MHz stream (IEEE 802.11n-2009 MCS7, "
       "short GI), of which TCP gets about 60 %; 2-4 ms ping round trip with ~1 ms jitter "
       "and 0.1 % residual loss after link-layer retries (casslab's typical-LAN estimate)",
       delay_ms=1.5, jitter_ms=1.0, loss_pct=0.1, rate_mbit=40.0),
    _p("wifi-congested", "comcast's WIFI profile (40 ms latency, 30 Mbit/s, 0.2 % loss; "
       "github.com/tylertreat/comcast) plus 10 ms jitter and bursty loss (mean burst "
       "3 packets) for a shared channel", delay_ms=40.0, jitter_ms=10.0, loss_pct=0.2,
       loss_burst=3.0, rate_mbit=30.0),
    _p("edge", "Continuum edge framework's endpoint/edge link: 7.5 +- 2.5 ms at 1 Gbit/s "
       "(notes/facts.md)", delay_ms=7.5, jitter_ms=2.5, rate_mbit=1000.0),
    _p("4g", "Continuum's 4G endpoint link: 45 +- 5 ms at 7.21 Mbit/s (notes/facts.md)",
       delay_ms=45.0, jitter_ms=5.0, rate_mbit=7.21),
    _p("5g", "commercial mid-band 5G (non-standalone): ~20 ms round trip and ~100 Mbit/s "
       "per device are typical measured values; 3GPP TR 38.913's 4 ms user-plane target "
       "is below what phones see (casslab's estimate)", delay_ms=10.0, jitter_ms=2.0,
       rate_mbit=100.0),
    _p("wan", "inter-region cloud WAN (e.g. US East <-> EU West): ~80 ms round trip, "
       "small jitter, 0.01 % loss, 100 Mbit/s per flow (casslab's estimate)",
       delay_ms=40.0, jitter_ms=1.0, loss_pct=0.01, rate_mbit=100.0),
    _p("3g", "comcast's 3G profile: 250 ms latency, 750 kbit/s, 1.5 % loss "
       "(github.com/tylertreat/comcast)", delay_ms=250.0, loss_pct=1.5, rate_mbit=0.75),
])


def load_profiles_file(path: Path) -> dict[str, NetProfile]:
    """User profiles from YAML: `profiles: {name: {delay_ms: 5, ..., source: "..."}}`.

    Raises NetSpecError as `file:line: profiles.NAME.FIELD: what is valid`.
    """
    text = specio.read_text(path, "link profiles file", NetSpecError)
    doc = specio.Doc(text, str(path), error=NetSpecError, key_lines=True,
                     empty="expected a mapping `profiles: {name: {delay_ms: ...}}`")
    raw = doc.root
    if not isinstance(raw, dict) or not isinstance(raw.get("profiles"), dict):
        raise doc.error((), "expected a mapping `profiles: {name: {delay_ms: ...}}`")
    specio.V(doc).mapping(raw, (), ("profiles",))
    out = {}
    valid = (*FIELDS, *ALIASES, "source")
    for name, body in raw["profiles"].items():
        where: specio.Path_ = ("profiles", name)
        if not isinstance(body, dict):
            raise doc.error(where, f"profile '{name}' must be a mapping of fields "
                            f"({', '.join(valid)})")
        body = dict(body)
        source = str(body.pop("source", f"user profile from {path}"))
        values: dict[str, Any] = {}
        for key, value in body.items():
            if ALIASES.get(key, key) not in FIELDS:
                raise doc.error((*where, key), f"unknown field{specio.closest(key, valid)} "
                                f"(valid: {', '.join(valid)})")
            try:
                canonical, values[key] = parse_field(key, value, "")
            except NetSpecError as exc:  # the units parsers lead with the field's name
                raise doc.error((*where, key), str(exc).split(": ", 1)[-1]) from None
            values[canonical] = values.pop(key)
        out[str(name)] = NetProfile(str(name), replace(LinkConditions(), **values), source)
    return out


def resolve_profile(name: str, profiles_file: Path | None = None) -> NetProfile:
    """A built-in or user profile by name; NetSpecError listing valid names otherwise."""
    items = dict(BUILTIN_PROFILES)
    if profiles_file:
        items.update(load_profiles_file(profiles_file))
    if name not in items:
        raise NetSpecError(f"unknown link profile '{name}' (valid: {', '.join(items)})")
    return items[name]
