"""`casslab schema NAME`: the JSON Schema of one YAML input, for editors."""

from __future__ import annotations

import json
from importlib import import_module
from typing import Annotated, Any

import typer

from casslab.cli.common import errors_to_exit, out
from casslab.core.errors import UsageError

# Name -> the module whose json_schema() describes it; imported by the command only, so
# the readers don't add to every command's start-up.
SCHEMAS = {"experiment": "casslab.experiment.spec", "plan": "casslab.plan.spec",
           "rules": "casslab.tune.rules", "net": "casslab.net.spec",
           "profiles": "casslab.hardware.profiles"}


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
        document: dict[str, Any] = import_module(SCHEMAS[name]).json_schema()
        text = json.dumps(document, indent=2)
    out.print(text, markup=False, highlight=False, soft_wrap=True)
