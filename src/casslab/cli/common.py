"""What every subcommand shares: consoles, the error boundary, the lab factory."""

from __future__ import annotations

import os
import sys
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import TYPE_CHECKING, TypeVar

import typer
from rich.console import Console
from rich.markup import escape

from casslab.core.errors import CasslabError, NodeStartError, UsageError
from casslab.core.paths import default_cache, default_home

if TYPE_CHECKING:
    from casslab.lab import Lab
    from casslab.testbed import Testbed

# Tables of numbers are unreadable folded at 80 columns: when output goes to a file or
# pipe (CI logs, `| tee`), lay them out 140 wide.
out = Console() if sys.stdout.isatty() else Console(width=140)
err = Console(stderr=True, soft_wrap=True)

T = TypeVar("T")


def open_lab(name: str) -> Lab:
    # Imported here: commands that never open a lab (help, report, plan) skip the lab stack.
    from casslab.testbed import open_lab as open_testbed_lab

    return open_testbed_lab(name, home=default_home(), cache=default_cache())


def open_testbed(name: str, *, inventory: Path | None = None,
                 profiles_file: Path | None = None,
                 known_hosts: Path | None = None) -> Testbed:
    """The testbed `name`, local or on hosts (casslab.testbed.open_testbed decides)."""
    from casslab.testbed import open_testbed as open_any

    return open_any(name, home=default_home(), cache=default_cache(), inventory=inventory,
                    profiles_file=profiles_file, known_hosts=known_hosts)


DEBUG_ENV = "CASSLAB_DEBUG"


def debug_enabled() -> bool:
    """`--debug` or CASSLAB_DEBUG=1: errors propagate with their traceback."""
    return os.environ.get(DEBUG_ENV, "") not in ("", "0")


def one_line(text: str) -> str:
    """A message on one line whatever it quotes: a value with a newline shows as \\n."""
    return text.strip().replace("\r", "\\r").replace("\n", "\\n")


def print_error(message: str) -> None:
    """`error: <message>` on stderr; the message is never read as Rich markup."""
    err.print(f"[bold red]error:[/] {escape(message)}", highlight=False)


def exit_code(exc: BaseException) -> int:
    """2 for bad input (usage), 1 for a failure while doing the work."""
    return 2 if isinstance(exc, UsageError) else 1


def describe_os_error(exc: OSError | UnicodeDecodeError) -> str:
    """One line naming the path (when the error has one) and what went wrong."""
    if isinstance(exc, UnicodeDecodeError):
        what = f"not a UTF-8 text file ({exc.reason} at byte {exc.start})"
        # The decode error does not know its file: name the argument that is one.
        values = [a.partition("=")[2] if a.startswith("--") else a for a in sys.argv[1:]]
        culprits = [v for v in values if v and _undecodable(Path(v))]
        return f"{', '.join(culprits)}: {what}" if culprits else what
    what = exc.strerror or str(exc)
    if isinstance(exc, FileExistsError) and exc.filename is not None and not Path(
            exc.filename).is_dir():
        what = "is a file, where a directory is needed"
    paths = [str(p) for p in (exc.filename, exc.filename2) if p is not None]
    return f"{' -> '.join(paths)}: {what}" if paths else what


def _undecodable(path: Path) -> bool:
    """True for a readable regular file that is not UTF-8 text."""
    try:
        if path.is_file():
            path.read_bytes().decode()
    except UnicodeDecodeError:
        return True
    except OSError:
        return False
    return False


@contextmanager
def errors_to_exit() -> Iterator[None]:
    """Turn a CasslabError into `error: <one line>` (plus a log tail for node starts),
    exit 2 for bad input and 1 for failures; with --debug it propagates instead."""
    try:
        yield
    except NodeStartError as exc:
        if debug_enabled():
            raise
        first, _, rest = str(exc).partition("\n")
        print_error(first)
        if rest:
            err.print(rest, highlight=False, markup=False)
        raise typer.Exit(1) from None
    except CasslabError as exc:
        if debug_enabled():
            raise
        print_error(one_line(str(exc)))
        raise typer.Exit(exit_code(exc)) from None
    except KeyboardInterrupt:
        if debug_enabled():
            raise
        err.print("[bold red]interrupted[/]")
        raise typer.Exit(130) from None


def given(ctx: typer.Context, *params: str) -> list[str]:
    """Which of `params` (parameter names) the user gave, as their options (`--nodes`).

    A default cannot stand for "not given": `--nodes 3` typed next to `--inventory` must be
    refused like `--nodes 4`, not ignored because 3 is the default.
    """
    from typer._click.core import ParameterSource

    by_name = {p.name: p for p in ctx.command.params}
    out: list[str] = []
    for name in params:
        source = ctx.get_parameter_source(name)
        if source not in (None, ParameterSource.DEFAULT, ParameterSource.DEFAULT_MAP):
            param = by_name.get(name)
            # A flag pair is named as both (`--netns/--no-netns`): either was typed.
            opts = [*param.opts, *getattr(param, "secondary_opts", [])] if param else [name]
            out.append("/".join(o for o in opts if o.startswith("--")) or opts[0])
    return out


def refuse_given(ctx: typer.Context, params: tuple[str, ...], why: str) -> None:
    """UsageError naming the first of `params` the user gave, with `why` it cannot apply."""
    found = given(ctx, *params)
    if found:
        raise UsageError(f"{'/'.join(found)}: {why}")


def call(fn: Callable[[], T]) -> T:
    with errors_to_exit():
        return fn()
    raise AssertionError("unreachable")
