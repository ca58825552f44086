"""The Click classes the CLI needs, from the one place Typer keeps them.

Typer 0.29 vendors Click as the private package `typer._click` and raises and builds only
that copy's classes; the public `click` package in the environment is another copy whose
classes are never raised here (`typer._click.exceptions.UsageError is not
click.exceptions.UsageError`). Typer's public surface re-exports BadParameter, Context
and Abort but not ClickException, UsageError, NoArgsIsHelpError, Command or Parameter,
which the error mapping (cli.main) and the lazy command group (cli.lazy) need. So this
module is the single import of the private package; tests/unit/test_cli_clickapi.py pins
that these are the classes Typer uses, so an upgrade that moves them fails there first.
"""

from __future__ import annotations

from typer._click import Command, Context, Parameter
from typer._click.exceptions import BadParameter, ClickException, NoArgsIsHelpError, UsageError

__all__ = ["BadParameter", "ClickException", "Command", "Context", "NoArgsIsHelpError",
           "Parameter", "UsageError"]
