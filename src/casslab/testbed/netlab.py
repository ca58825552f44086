"""The network extension of a lab: `lab up --net` and teardown of the emulator."""

from __future__ import annotations

from pathlib import Path

from casslab import net
from casslab.core.errors import UsageError
from casslab.lab import Lab, LabOptions, LabState
from casslab.lab.cluster import Progress
from casslab.lab.runtime import DEFAULT_RUNTIME
from casslab.system import netns


class NetExtension:
    """Applies `LabOptions.net` once the nodes are up; clears it before teardown."""

    def check(self, lab: Lab, options: LabOptions) -> None:
        # Validate --net before anything starts, so a typo costs no cluster start.
        self.spec(options)

    def spec(self, options: LabOptions) -> net.NetSpec | None:
        if options.net is None:
            return None
        refuse_runtime(options.runtime, "--net")
        if not (options.own_namespace and netns.can_use_namespaces()):
            raise UsageError("--net needs the lab's own network namespace: run as root and "
                             "without --no-netns")
        if options.net.endswith((".yaml", ".yml")):
            return net.NetSpec.from_yaml(Path(options.net))
        return net.NetSpec.from_profile(options.net, options.net_profiles_file)

    def after_up(self, lab: Lab, state: LabState, options: LabOptions,
                 say: Progress) -> list[str]:
        spec = self.spec(options)
        if spec is None:
            return []
        assert state.netns is not None
        say(f"applying network conditions: {options.net}")
        applied = net.apply(Path(state.directory), state.netns,
                            [n.address for n in state.nodes], spec)
        return list(applied.warnings)

    def before_teardown(self, lab: Lab, state: LabState) -> None:
        # Stop the packet-delay daemon first: it lets held packets through on exit.
        net.clear(Path(state.directory), state.netns)


def refuse_runtime(runtime: str, subject: str) -> None:
    """Link conditions classify packets in the lab namespace's OUTPUT chain by the
    sending socket's cgroup and shape them on its lo; a node in a namespace of its own
    sends through neither, so only `process` labs can have them (for now)."""
    if runtime != DEFAULT_RUNTIME:
        raise UsageError(f"{subject}: link conditions work on runtime {DEFAULT_RUNTIME} only, "
                         f"not on runtime {runtime}")


def open_lab(name: str, *, home: Path, cache: Path) -> Lab:
    """The lab `name` with its network emulation attached (what every caller wants)."""
    return Lab(name, home=home, cache=cache, extensions=(NetExtension(),))
