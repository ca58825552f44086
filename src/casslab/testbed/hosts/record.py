"""What the controller keeps of a lab on hosts (`<home>/hosts/<name>/lab.json`), so
`lab list` and `lab down` find it after the command that built it has exited."""

from __future__ import annotations

import json
from dataclasses import asdict, dataclass
from pathlib import Path

RECORD = "lab.json"


@dataclass(frozen=True)
class HostsRecord:
    name: str
    inventory: str  # absolute path of the Ansible inventory
    version: str  # Cassandra's
    nodes: list[str]  # inventory host names running a node
    # The user profiles file the inventory's hosts may name (absolute), so `lab status`
    # and `lab down` read the inventory as `lab up` did; None in records written before.
    profiles_file: str | None = None


def hosts_dir(home: Path) -> Path:
    return home / "hosts"


def read_record(home: Path, name: str) -> HostsRecord | None:
    path = hosts_dir(home) / name / RECORD
    if not path.exists():
        return None
    return HostsRecord(**json.loads(path.read_text()))


def write_record(home: Path, record: HostsRecord) -> None:
    directory = hosts_dir(home) / record.name
    directory.mkdir(parents=True, exist_ok=True)
    tmp = directory / (RECORD + ".part")
    tmp.write_text(json.dumps(asdict(record), indent=1))
    tmp.replace(directory / RECORD)


def list_hosts_labs(home: Path) -> list[HostsRecord]:
    root = hosts_dir(home)
    if not root.is_dir():
        return []
    return [r for d in sorted(root.iterdir()) if (r := read_record(home, d.name))]
