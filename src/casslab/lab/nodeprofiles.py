"""Per-node hardware profiles: which profile each node of a lab runs with.

A lab has one profile (`--profile rpi2`); single nodes may run with another
(`--node-profile node6=rpi3`, seed 000's Pi 3 among Pi 2s), and campaign factors may
set profile fields over every node's profile (`profile.memory_mib`).
"""

from __future__ import annotations

import re
from pathlib import Path

from casslab.core.errors import ProfileError, UsageError
from casslab.hardware.profiles import HardwareProfile, resolve_profile, with_fields

_NODE = re.compile(r"^(?:node)?([1-9][0-9]*)$")


def node_index(name: str, count: int, field: str) -> int:
    """The number of node `name` (node3 or 3) in a lab of `count` nodes; UsageError
    naming `field`, the name and the valid ones otherwise."""
    m = _NODE.match(name.strip())
    if m is None or int(m.group(1)) > count:
        valid = "node1" if count == 1 else f"node1 ... node{count}"
        raise UsageError(f"{field} '{name}': no such node in a {count}-node lab "
                         f"(valid: {valid})")
    return int(m.group(1))


def parse_node_profile_options(items: list[str]) -> dict[str, str]:
    """`--node-profile node3=rpi3` values as {node name: profile name}.

    Only the form is checked here (see `node_profiles` for names); UsageError otherwise.
    """
    out: dict[str, str] = {}
    for item in items:
        node, sep, profile = item.partition("=")
        if not sep or not node.strip() or not profile.strip():
            raise UsageError(f"--node-profile '{item}': expected NODE=PROFILE, e.g. node3=rpi3")
        m = _NODE.match(node.strip())
        if m is None:
            raise UsageError(f"--node-profile '{item}': '{node}' is not a node (valid: node1, "
                             "node2, ... or 1, 2, ...)")
        name = f"node{m.group(1)}"
        if name in out:
            raise UsageError(f"--node-profile '{item}': {name} is given twice")
        out[name] = profile.strip()
    return out


def node_profiles(base: str, overrides: dict[str, str], count: int, *,
                  profiles_file: Path | None = None,
                  fields: dict[str, float | int] | None = None) -> list[HardwareProfile]:
    """Each node's profile, node1 first: `base`, or the one `overrides` names for it,
    with `fields` set over it.

    Raises UsageError for a node the lab does not have, ProfileError (naming the node)
    for an unknown profile.
    """
    per_index: dict[int, str] = {}
    for name, profile in overrides.items():
        per_index[node_index(name, count, "--node-profile")] = profile
    base_profile = resolve_profile(base, profiles_file)
    out = []
    for i in range(1, count + 1):
        chosen = base_profile
        if i in per_index:
            try:
                chosen = resolve_profile(per_index[i], profiles_file)
            except ProfileError as exc:
                raise ProfileError(f"--node-profile node{i}={per_index[i]}: {exc}") from None
        out.append(with_fields(chosen, fields or {}))
    return out


def cpu_warning(profiles: list[HardwareProfile], cores: int) -> str | None:
    """A warning when the nodes' CPU quotas add up to more than this machine's cores,
    or nodes without a CPU limit share it."""
    count = len(profiles)
    unlimited = sorted({p.name for p in profiles if p.cpu_cores is None})
    if unlimited:
        if count > 1:
            names = ", ".join(f"'{n}'" for n in unlimited)
            word = "profile" if len(unlimited) == 1 else "profiles"
            return (f"{word} {names} {'has' if len(unlimited) == 1 else 'have'} no CPU limit: "
                    f"{count} nodes share this machine's {cores} cores")
        return None
    total = sum(p.cpu_cores or 0.0 for p in profiles)
    if total <= cores:
        return None
    quotas = {p.cpu_cores for p in profiles}
    if len(quotas) == 1:
        return (f"results are oversubscribed: {count} nodes x {profiles[0].cpu_cores:g} cores "
                f"= {total:g} cores of CPU quota on a {cores}-core machine")
    shown = " + ".join(f"{p.cpu_cores:g}" for p in profiles)
    return (f"results are oversubscribed: {shown} = {total:g} cores of CPU quota on a "
            f"{cores}-core machine")
