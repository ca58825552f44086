"""A command group that imports a subcommand's module only when that subcommand runs.

`casslab lab list` should not pay for the campaign runner, the analysis or the network
emulator: importing every command module costs more than the 0.3 s start-up budget
(docs/architecture.md). Each lazy command is named with its module, the attribute that
holds it (a Typer app for a group, a function for a single command) and its one-line
help, so `casslab --help` lists every command without importing any of them.
tests/unit/test_cli_lazy.py checks that each line matches the command's own help.
"""

from __future__ import annotations

import importlib
from dataclasses import dataclass, field
from typing import Any, ClassVar

import typer
from typer.core import TyperCommand, TyperGroup

from casslab.cli.clickapi import Command, Context, Parameter


@dataclass(frozen=True)
class LazyCommand:
    """Where a subcommand lives and what `--help` says of it before it is imported."""

    module: str
    attr: str
    short_help: str
    settings: dict[str, Any] = field(default_factory=dict)

    def load(self, name: str, ctx: Context | None = None) -> Command:
        """Import the module and build the Click command Typer would have built."""
        obj = getattr(importlib.import_module(self.module), self.attr)
        if isinstance(obj, typer.Typer):
            cmd = typer.main.get_command(obj)
        else:
            single = typer.Typer()
            single.command(name=name, context_settings=self.settings or None)(obj)
            cmd = typer.main.get_command(single)
        cmd.name = name
        settle_flag_defaults(cmd, ctx or Context(cmd))
        return cmd


def settle_flag_defaults(cmd: Command, ctx: Context) -> None:
    """Give `cmd`'s (and its subcommands') unset boolean flags the default False.

    Typer leaves `--help`, `--install-completion` and `--show-completion` at None, and
    coerces a None flag through a pydantic TypeAdapter on every invocation: that import
    alone (~0.1 s) was a third of the start-up budget of `casslab lab list`. False means
    the same to their callbacks (they act only on a true value) and skips the coercion.
    """
    _flags_default_false(cmd.get_params(ctx))
    for sub in getattr(cmd, "commands", {}).values():
        settle_flag_defaults(sub, ctx)


def _flags_default_false(params: list[Parameter]) -> list[Parameter]:
    for param in params:
        descriptor = getattr(param, "type_descriptor", None)
        if param.default is None and getattr(descriptor, "annotation", None) is bool:
            param.default = False
    return params


class LazyGroup(TyperGroup):
    """TyperGroup whose `lazy` commands are imported on first use.

    While help is being formatted, a lazy command is represented by a stand-in that
    carries only its name and short help, so listing commands imports nothing.
    """

    lazy: ClassVar[dict[str, LazyCommand]] = {}

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self._listing = False

    def get_params(self, ctx: Context) -> list[Parameter]:
        return _flags_default_false(super().get_params(ctx))

    def list_commands(self, ctx: Context) -> list[str]:
        eager = super().list_commands(ctx)
        return [*(n for n in self.lazy if n not in eager), *eager]

    def get_command(self, ctx: Context, cmd_name: str) -> Command | None:
        found = super().get_command(ctx, cmd_name)
        if found is not None or cmd_name not in self.lazy:
            return found
        entry = self.lazy[cmd_name]
        if self._listing:
            return TyperCommand(name=cmd_name, help=entry.short_help,
                                short_help=entry.short_help)
        cmd = entry.load(cmd_name, ctx)
        self.add_command(cmd, cmd_name)
        return cmd

    def format_help(self, ctx: Context, formatter: Any) -> None:
        self._listing = True
        try:
            super().format_help(ctx, formatter)
        finally:
            self._listing = False
