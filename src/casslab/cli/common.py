"""What every subcommand shares: consoles, the error boundary, the lab factory."""

from __future__ import annotations

import sys
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from typing import TYPE_CHECKING, TypeVar

import typer
from rich.console import Console

from casslab.core.errors import CasslabError, NodeStartError
from casslab.core.paths import default_cache, default_home

if TYPE_CHECKING:
    from casslab.lab import Lab

# Tables of numbers are unreadable folded at 80 columns: when output goes to a file or
# pipe (CI logs, `| tee`), lay them out 140 wide.
out = Console() if sys.stdout.isatty() else Console(width=140)
err = Console(stderr=True, soft_wrap=True)

T = TypeVar("T")


def open_lab(name: str) -> Lab:
    # Imported here: commands that never open a lab (help, report, plan) skip the lab stack.
    from casslab.testbed import open_lab as open_testbed_lab

    return open_testbed_lab(name, home=default_home(), cache=default_cache())


@contextmanager
def errors_to_exit() -> Iterator[None]:
    """Turn a CasslabError into `error: <one line>` (plus a log tail for node starts)."""
    try:
        yield
    except NodeStartError as exc:
        first, _, rest = str(exc).partition("\n")
        err.print(f"[bold red]error:[/] {first}", highlight=False)
        if rest:
            err.print(rest, highlight=False, markup=False)
        raise typer.Exit(1) from None
    except CasslabError as exc:
        err.print(f"[bold red]error:[/] {exc}", highlight=False, markup=True)
        raise typer.Exit(1) from None
    except KeyboardInterrupt:
        err.print("[bold red]interrupted[/]")
        raise typer.Exit(130) from None


def call(fn: Callable[[], T]) -> T:
    with errors_to_exit():
        return fn()
    raise AssertionError("unreachable")
