"""`casslab schema NAME`: the JSON Schema of one YAML input, for editors."""

from __future__ import annotations

import json
from collections.abc import Callable
from typing import Annotated, Any

import typer

from casslab.cli.common import errors_to_exit, out
from casslab.core.errors import UsageError
from casslab.experiment.spec import json_schema as experiment_schema
from casslab.net.spec import json_schema as net_schema
from casslab.plan.spec import json_schema as plan_schema
from casslab.profiles.hardware import json_schema as profiles_schema
from casslab.tune.rules import json_schema as rules_schema

SCHEMAS: dict[str, Callable[[], dict[str, Any]]] = {
    "experiment": experiment_schema, "plan": plan_schema, "rules": rules_schema,
    "net": net_schema, "profiles": profiles_schema}


def schema(name: Annotated[str, typer.Argument(
        help=f"Which input: {', '.join(SCHEMAS)}.")]) -> None:
    """Print the JSON Schema of a YAML input (experiment spec, plan spec, tune rules, link
    spec, hardware profiles) for editors' completion and checks.

    Example: casslab schema experiment > experiment.schema.json
    (then in VS Code's YAML extension: "yaml.schemas": {"experiment.schema.json": "*.yaml"})
    """
    with errors_to_exit():
        if name not in SCHEMAS:
            raise UsageError(f"schema {name!r}: valid names are {', '.join(SCHEMAS)}")
        text = json.dumps(SCHEMAS[name](), indent=2)
    out.print(text, markup=False, highlight=False, soft_wrap=True)
