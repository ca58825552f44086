"""The record of a lab on hosts keeps the profiles file `lab up --profiles-file` named."""

from __future__ import annotations

import json
from pathlib import Path

from casslab.testbed.hosts.record import RECORD, HostsRecord, hosts_dir, read_record, write_record


def test_the_profiles_file_is_kept_so_status_and_down_read_the_inventory_as_up_did(
        tmp_path: Path) -> None:
    record = HostsRecord("pis", "/inv/hosts.yaml", "5.0.6", ["pi1"], "/inv/boards.yaml")
    write_record(tmp_path, record)
    assert read_record(tmp_path, "pis") == record


def test_a_record_written_before_profiles_files_were_kept_still_reads(tmp_path: Path) -> None:
    directory = hosts_dir(tmp_path) / "old"
    directory.mkdir(parents=True)
    (directory / RECORD).write_text(json.dumps(
        {"name": "old", "inventory": "/i.yaml", "version": "5.0.6", "nodes": ["pi1"]}))
    found = read_record(tmp_path, "old")
    assert found is not None and found.profiles_file is None
