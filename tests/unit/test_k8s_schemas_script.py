"""scripts/k8s_schemas.py reads which fields carry Chaos Mesh's `webhook:` tags from Go
source: inline structs flatten, pointers and lists are followed, untagged fields are not
listed."""

from __future__ import annotations

import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).parents[2] / "scripts"))

from k8s_schemas import go_structs, webhook_fields

GO = '''package v1alpha1

type ExampleSpec struct {
	Selector `json:",inline"`

	// Duration is how long.
	Duration *string `json:"duration,omitempty" webhook:"Duration"`

	Target *Selector `json:"target,omitempty" webhook:",nilable"`

	Steps []Step `json:"steps"`
}

type Selector struct {
	Mode string `json:"mode"`
	Value string `json:"value,omitempty" webhook:"FloatStr"`
}

type Step struct {
	Rate string `json:"rate" webhook:"Rate"`
	Gap  int    `json:"gap"`
}
'''


def test_tagged_fields_are_found_through_inline_pointer_and_list(tmp_path: Path) -> None:
    (tmp_path / "example_types.go").write_text(GO)
    (tmp_path / "example_test.go").write_text(
        'package v1alpha1\n\ntype Fake struct {\n\tX string `webhook:"Duration"`\n}\n')
    structs = go_structs(tmp_path)
    assert "Fake" not in structs
    assert webhook_fields(structs, "ExampleSpec") == {
        "spec.value": "FloatStr", "spec.duration": "Duration",
        "spec.target.value": "FloatStr", "spec.steps[].rate": "Rate"}
