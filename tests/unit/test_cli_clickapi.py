"""cli.clickapi holds the Click classes Typer itself raises and builds."""

from __future__ import annotations

import typer

from casslab.cli import clickapi


def test_typer_public_errors_are_subclasses_of_the_classes_the_cli_catches() -> None:
    assert typer.BadParameter is clickapi.BadParameter
    assert issubclass(typer.BadParameter, clickapi.UsageError)
    assert issubclass(clickapi.UsageError, clickapi.ClickException)
    assert issubclass(clickapi.NoArgsIsHelpError, clickapi.UsageError)


def test_typer_builds_commands_and_contexts_of_these_classes() -> None:
    app = typer.Typer()

    @app.command()
    def hello(name: str = "x") -> None:
        """Say hello."""

    cmd = typer.main.get_command(app)
    assert isinstance(cmd, clickapi.Command)
    assert all(isinstance(p, clickapi.Parameter) for p in cmd.params)
    assert isinstance(typer.Context(cmd), clickapi.Context)
