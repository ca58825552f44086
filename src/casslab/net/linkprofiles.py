"""Link profiles: delay, jitter, loss and bandwidth of one kind of link, with sources.

Every value is ONE-WAY and applies to each direction of a link, so a profile's round
trip is about 2 x delay_ms. Jitter is uniform in [-jitter_ms, +jitter_ms] (netem's
default distribution) but never reorders packets within a link. `loss_burst` is the mean
length of a loss burst in packets (Gilbert model); 1 means independent random loss.
`rate_mbit` None means unlimited. `medium` names a shared medium: every link of the lab
on the same medium draws from ONE budget of `rate_mbit`, both directions alike
(half-duplex, like one Wi-Fi channel), so more busy links get less each.
"""

from __future__ import annotations

import re
from dataclasses import asdict, dataclass, fields, replace
from pathlib import Path
from typing import Any

from casslab.core import specio
from casslab.core.errors import UsageError
from casslab.core.units import parse_duration_s, parse_fraction, parse_rate_bit_s
from casslab.net.errors import NetSpecError


@dataclass(frozen=True)
class LinkConditions:
    """Conditions of one directed link. Units are in the names."""

    delay_ms: float = 0.0
    jitter_ms: float = 0.0
    loss_pct: float = 0.0
    loss_burst: float = 1.0
    rate_mbit: float | None = None
    medium: str | None = None

    @property
    def shared(self) -> bool:
        """True when the link's rate is a shared medium's budget (enforced by the daemon,
        not by a qdisc of its own)."""
        return self.medium is not None and self.rate_mbit is not None

    @property
    def needs_daemon(self) -> bool:
        """True when packets must pass the delay daemon (delay, jitter, loss or a shared
        medium)."""
        return self.delay_ms > 0 or self.jitter_ms > 0 or self.loss_pct > 0 or self.shared

    @property
    def is_clean(self) -> bool:
        return not self.needs_daemon and self.rate_mbit is None

    def to_dict(self) -> dict[str, Any]:
        return asdict(self)


FIELDS = tuple(f.name for f in fields(LinkConditions))
# Short names accepted on the command line (`--link node1-node2:delay=10ms,loss=1%`).
ALIASES = {"delay": "delay_ms", "jitter": "jitter_ms", "loss": "loss_pct",
           "burst": "loss_burst", "rate": "rate_mbit"}


def parse_field(name: str, value: Any, where: str) -> tuple[str, float | str | None]:
    """Validate one condition field; returns (canonical name, value in its unit).

    A bare number takes the unit of a name that carries one (`delay_ms: 5`); the short
    names (`delay=5`) need a unit in the value (`delay=5ms`).
    """
    key = ALIASES.get(name, name)
    label = f"{where}: {name}" if where else name
    named = key == name  # the canonical names carry their unit
    try:
        if key == "delay_ms" or key == "jitter_ms":
            return key, _delay_ms(value, label, named)
        if key == "loss_pct":
            return key, 100 * parse_fraction(value, label, bare="%" if named else None)
        if key == "loss_burst":
            return key, parse_burst(value, label)
        if key == "rate_mbit":
            if value is None or str(value).lower() in ("none", "unlimited"):
                return key, None
            return key, _rate_mbit(value, label, named)
        if key == "medium":
            return key, parse_medium(value, label)
    except NetSpecError:
        raise
    except UsageError as exc:
        raise NetSpecError(str(exc)) from None
    valid = ", ".join(FIELDS + tuple(ALIASES))
    raise NetSpecError(f"{label}: unknown field (valid: {valid})")


_MEDIUM = re.compile(r"^[a-z][a-z0-9_-]{0,31}$")


def parse_medium(value: Any, label: str) -> str | None:
    """A shared medium's name (`wifi`), or None for `none` (the link's own rate)."""
    if value is None or str(value).lower() == "none":
        return None
    if not isinstance(value, str) or not _MEDIUM.match(value):
        raise NetSpecError(f"{label}: {value!r} is not a medium name (valid: none, or "
                           "lowercase letters, digits, - and _, e.g. wifi)")
    return value


def parse_delay_ms(value: Any, label: str, bare_ms: bool) -> float:
    """A one-way delay in ms (0 .. 60 s); `bare_ms`: a bare number is ms."""
    try:
        return _delay_ms(value, label, bare_ms)
    except NetSpecError:
        raise
    except UsageError as exc:
        raise NetSpecError(str(exc)) from None


def _delay_ms(value: Any, label: str, bare_ms: bool) -> float:
    out = 1000 * parse_duration_s(value, label, bare="ms" if bare_ms else None)
    if out > 60_000:
        raise NetSpecError(f"{label}: {value} is out of range (0 ms .. 60 s)")
    return out


def _rate_mbit(value: Any, label: str, bare_mbit: bool) -> float:
    out = parse_rate_bit_s(value, label, bare="Mbit" if bare_mbit else None) / 1e6
    if out < 0.01 or out > 10_000:
        raise NetSpecError(f"{label}: {value} is out of range (10 kbit .. 10 Gbit)")
    return out


def parse_burst(value: Any, field: str) -> float:
    """Mean loss burst length in packets (>= 1; 1 = independent loss)."""
    if isinstance(value, bool):
        raise NetSpecError(f"{field}: {value!r} is not a number of packets (>= 1)")
    try:
        out = float(value)
    except (TypeError, ValueError):
        raise NetSpecError(f"{field}: '{value}' is not a number of packets (>= 1)") from None
    if not 1 <= out <= 1000:
        raise NetSpecError(f"{field}: {value} is out of range (1 .. 1000 packets)")
    return out


def conditions_from_mapping(raw: dict[str, Any], where: str,
                            base: LinkConditions | None = None) -> LinkConditions:
    """Build conditions from a mapping of field -> value on top of `base`."""
    values: dict[str, Any] = {}
    for k, v in raw.items():
        key, val = parse_field(str(k), v, where)
        values[key] = val
    return replace(base or LinkConditions(), **values)


@dataclass(frozen=True)
class LinkProfile:
    name: str
    conditions: LinkConditions
    source: str


def _p(name: str, source: str, **kw: Any) -> tuple[str, LinkProfile]:
    return name, LinkProfile(name, LinkConditions(**kw), source)


_WIFI = ("802.11n LAN: 72.2 Mbit/s PHY for one 20 MHz stream (IEEE 802.11n-2009 MCS7, "
         "short GI), of which TCP gets about 60 %; 2-4 ms ping round trip with ~1 ms jitter "
         "and 0.1 % residual loss after link-layer retries (casslab's typical-LAN estimate)")
_WIFI_LINK: dict[str, Any] = {"delay_ms": 1.5, "jitter_ms": 1.0, "loss_pct": 0.1,
                              "rate_mbit": 40.0}


BUILTIN_LINK_PROFILES: dict[str, LinkProfile] = dict([
    _p("loopback", "no emulation: the lab's own loopback"),
    _p("ethernet", "switched Gigabit Ethernet LAN: 1000BASE-T line rate; ~0.1 ms ping round "
       "trip on one switch (0.05 ms each way)", delay_ms=0.05, rate_mbit=1000.0),
    _p("ethernet-100", "switched Fast Ethernet LAN, as on the Raspberry Pi 2 and 3 (their "
       "LAN9514 USB adapter is 100BASE-TX): 100 Mbit/s line rate (IEEE 802.3u); one "
       "store-and-forward switch hop holds a full frame, 1538 bytes on the wire = 0.123 ms "
       "at 100 Mbit/s, each way", delay_ms=0.12, rate_mbit=100.0),
    _p("wifi", _WIFI + "; ONE channel: every wifi link of the lab shares the 40 Mbit/s, "
       "both directions alike (half-duplex), links taking turns like 802.11 DCF stations",
       medium="wifi", **_WIFI_LINK),
    _p("wifi-independent", _WIFI + "; every link has its own 40 Mbit/s (no contention)",
       **_WIFI_LINK),
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


def load_link_profiles(path: Path) -> dict[str, LinkProfile]:
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
        out[str(name)] = LinkProfile(str(name), replace(LinkConditions(), **values), source)
    return out


def resolve_link_profile(name: str, profiles_file: Path | None = None) -> LinkProfile:
    """A built-in or user profile by name; NetSpecError listing valid names otherwise."""
    items = dict(BUILTIN_LINK_PROFILES)
    if profiles_file:
        items.update(load_link_profiles(profiles_file))
    if name not in items:
        raise NetSpecError(f"unknown link profile '{name}' (valid: {', '.join(items)})")
    return items[name]
