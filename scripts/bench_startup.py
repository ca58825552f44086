"""`make bench` (start-up part): wall time of light `casslab` commands, and what they import.

Each command runs REPEATS times in a fresh process (hyperfine-style: one warm-up run, then
min / median / max of the wall time), next to `python -c pass`, the floor any Python
command pays. The heaviest imports come from `python -X importtime -c "import
casslab.cli.main"`, and the check that none of scipy, matplotlib, highspy, pyarrow or numpy
is loaded by those commands. The results replace the start-up section of BENCHMARKS.md,
with the machine and date.
"""

from __future__ import annotations

import argparse
import os
import resource
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from benchmd import ROOT, machine, today, write_section

HEAVY = ("scipy", "matplotlib", "highspy", "pyarrow", "numpy", "statsmodels")
BUDGET_S = 0.3


def casslab_argv() -> list[str]:
    """The installed console script when it is there (what users run), else `-m`."""
    script = Path(sys.executable).parent / "casslab"
    if script.exists():
        return [str(script)]
    return [sys.executable, "-m", "casslab.cli.main"]


# Typer parses options through pydantic (~0.1 s of imports): a one-command Typer app's
# `--help` is the floor of any Typer CLI here, so it is timed too.
MINIMAL_TYPER = """
from typing import Annotated
import typer
app = typer.Typer()
@app.command()
def go(n: Annotated[int, typer.Option(help="n")] = 1) -> None:
    print(n)
app()
"""

COMMANDS: list[tuple[str, list[str]]] = [
    ("python -c pass (floor)", [sys.executable, "-c", "pass"]),
    ("one-command Typer app --help (floor)", [sys.executable, "-c", MINIMAL_TYPER, "--help"]),
    ("casslab --help", [*casslab_argv(), "--help"]),
    ("casslab lab list", [*casslab_argv(), "lab", "list"]),
    ("casslab net --help", [*casslab_argv(), "net", "--help"]),
    ("casslab run --help", [*casslab_argv(), "run", "--help"]),
]


def env(src: Path) -> dict[str, str]:
    """`src` first on sys.path (this checkout's by default)."""
    e = dict(os.environ)
    e["PYTHONPATH"] = str(src) + os.pathsep + e.get("PYTHONPATH", "")
    return e


def time_once(argv: list[str], environ: dict[str, str]) -> tuple[float, float]:
    """(wall, CPU) seconds of one run. CPU time (user + system of the child) is what the
    command itself costs; wall time also holds waiting for a core on a busy machine."""
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    t0 = time.perf_counter()
    subprocess.run(argv, env=environ, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
                   check=True)
    wall = time.perf_counter() - t0
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    cpu = (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)
    return wall, cpu


def time_command(argv: list[str], environ: dict[str, str],
                 repeats: int) -> tuple[list[float], list[float]]:
    time_once(argv, environ)  # warm-up: page cache, .pyc files
    runs = [time_once(argv, environ) for _ in range(repeats)]
    return [w for w, _ in runs], [c for _, c in runs]


def import_profile(environ: dict[str, str], top: int) -> tuple[list[tuple[int, str]], list[str]]:
    """(cumulative µs, module) of the slowest top-level imports, and heavy modules loaded."""
    code = ("import sys, casslab.cli.main; "
            f"print(','.join(m for m in {HEAVY!r} if m in sys.modules))")
    proc = subprocess.run([sys.executable, "-X", "importtime", "-c", code], env=environ,
                          capture_output=True, text=True, check=True)
    rows: list[tuple[int, str]] = []
    for line in proc.stderr.splitlines():
        parts = line.removeprefix("import time:").split("|")
        if len(parts) != 3 or not parts[1].strip().isdigit():
            continue
        name = parts[2].rstrip().removeprefix(" ")
        # Two-space indent: a module imported directly by casslab.cli.main.
        if name.startswith("  ") and not name.startswith("   "):
            rows.append((int(parts[1]), name.strip()))
    heavy = [m for m in proc.stdout.strip().split(",") if m]
    return sorted(rows, reverse=True)[:top], heavy


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--repeats", type=int, default=20)
    ap.add_argument("--no-write", action="store_true", help="Print only, leave BENCHMARKS.md.")
    ap.add_argument("--baseline", type=Path, default=None,
                    help="Also time this casslab source (e.g. the checkout before the "
                         "lazy imports) for a before/after column.")
    ap.add_argument("--src", type=Path, default=ROOT / "src",
                    help="casslab source to time (another checkout, to compare).")
    args = ap.parse_args()
    if args.repeats < 1:
        print("error: --repeats must be >= 1", file=sys.stderr)
        return 2
    home = Path(tempfile.mkdtemp(prefix="casslab-bench-startup-"))
    environ = env(args.src)
    environ["CASSLAB_HOME"] = str(home)  # empty: `lab list` reads no labs
    try:
        rows = []
        for label, argv in COMMANDS:
            ts, cpu = time_command(argv, environ, args.repeats)
            rows.append((label, min(ts), statistics.median(ts), max(ts),
                         statistics.median(cpu)))
            print(f"{label}: min {min(ts) * 1e3:.0f} ms, median "
                  f"{statistics.median(ts) * 1e3:.0f} ms, max {max(ts) * 1e3:.0f} ms, CPU "
                  f"median {statistics.median(cpu) * 1e3:.0f} ms")
        before: dict[str, float] = {}
        if args.baseline is not None:
            base_env = env(args.baseline)
            base_env["CASSLAB_HOME"] = str(home)
            for label, argv in COMMANDS:
                if "(floor)" not in label:
                    ts, _ = time_command(argv, base_env, args.repeats)
                    before[label] = statistics.median(ts)
        load = os.getloadavg()[0]
        imports, heavy = import_profile(environ, top=8)
    finally:
        shutil.rmtree(home, ignore_errors=True)
    lines = [f"Machine: {machine()}; {today()}; load average {load:.1f} at the end; "
             f"{args.repeats} runs of each after one warm-up; wall time of the whole process "
             "and its CPU time (user + system) (`scripts/bench_startup.py`).", "",
             "| command | wall min (ms) | wall median (ms) | wall max (ms) | CPU median (ms) |"
             + (" wall median before (ms) |" if before else ""),
             "|---|---:|---:|---:|---:|" + ("---:|" if before else "")]
    lines += [f"| `{label}` | {lo * 1e3:.0f} | {med * 1e3:.0f} | {hi * 1e3:.0f} | "
              f"{cpu * 1e3:.0f} |"
              + (f" {before[label] * 1e3:.0f} |" if label in before else " - |" if before
                 else "") for label, lo, med, hi, cpu in rows]
    if before:
        lines += ["", f"Before: the same commands with the source at {args.baseline} "
                  "(every command imported scipy, matplotlib and the MILP solver)."]
    over = [label for label, _, med, _, _ in rows if "(floor)" not in label and med > BUDGET_S]
    lines += ["", f"Budget {BUDGET_S * 1e3:.0f} ms (wall median): "
              + ("met by every command." if not over else f"exceeded by {', '.join(over)}.")]
    lines += ["", "Slowest imports of `casslab.cli.main` (`python -X importtime`, cumulative):",
              ""]
    lines += [f"- `{name}`: {us / 1e3:.1f} ms" for us, name in imports]
    lines += ["", "Heavy libraries loaded at start-up: "
              + (", ".join(heavy) if heavy else f"none of {', '.join(HEAVY)}") + "."]
    print("\n".join(lines))
    if not args.no_write and args.src == ROOT / "src":
        write_section("startup", "CLI start-up (`casslab --help`, `lab list`)", lines)
    return 1 if heavy else 0


if __name__ == "__main__":
    sys.exit(main())
