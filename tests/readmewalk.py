"""The README walk's pure part: which command lines the documentation shows, how each is
rewritten to run against the walk's one shared lab, in what order, and how a run is
judged. tests/integration/test_readme_walk.py runs the lines; tests/unit/test_readmewalk.py
checks these rules, and that a broken line is reported.

Which lines (extraction)
- README.md: every indented line (a Markdown code block of 4 spaces) that starts with
  `casslab `, anywhere in the file. The other indented commands (`make demo`, `make test`,
  `make bench-tune-learned`, `.venv/bin/python scripts/tune_compare.py`) are make targets
  and scripts, not the casslab command: `make test` runs this walk itself, the others run
  5 minutes to 2 hours and are checked by their own targets.
- Every `--help` of every casslab command and subcommand (the Click tree, walked): each
  `Example: casslab ...`, `Example (what): casslab ...` and `Examples:` line, and the
  `casslab ...` lines right after one of those (continuation lines).

How a line is rewritten (`rewrite`), in this order
1. A `# comment` is dropped; `> FILE` sends stdout to FILE in the walk's directory.
2. `a|b|c` in one word (`experiment validate|plan`, `schema experiment|plan|...`) is one
   line per alternative; `[...]` (an optional part) is kept, brackets dropped.
3. Lab names: `--name X`/`-n X` becomes `--name <shared lab>` whatever X is (edge, box,
   demo, pis...); a command that takes `--name` and is given none (the lab `default`)
   gets `--name <shared lab>`, unless it names `--hosts` or `--inventory` instead.
4. A real cluster's address 10.0.0.N becomes the shared lab's node addresses (the k-th
   distinct one: node k); a line with `--hosts` runs inside the lab's namespace (`casslab
   lab exec --name <lab> -- casslab ...`), where those addresses are reachable.
5. Shorter: `--duration`, cassandra-stress `duration=` -> 2s; `--warmup T` -> 1s;
   `--interval T` -> 1s; `--ops`, `--records`, `-p recordcount=`/`operationcount=`,
   cassandra-stress `n=`, `-pop seq=1..N` and `--loss-packets` -> at most 500;
   `net check` without them gets `--pings 50` and, on a lab, `--loss-packets 500
   --bandwidth-seconds 1` (200, 2,000 and 2 s a link by default: 30 s for the README's
   line on a lab with six conditioned links);
   `experiment run` without `--scale` -> `--scale smoke` (the spec's own short size);
   `tune learn` -> `--duration 2s --warmup 0s` (its trials, 45 s + 10 s by default);
   `stress` without `-rate` -> `-rate threads=4` (cassandra-stress's default steps the
   threads 4 -> 1000 until throughput stops improving, each step a whole run, 15 s apart:
   3 minutes for the one such line in one walk) and `no-warmup` after its command (its
   warm-up is 50,000 operations per type with `duration=`: 6 minutes for one line);
   `reproduce` -> `--no-run` (running a study is `experiment run` of each of its specs,
   minutes to hours even at smoke scale; the walk runs campaigns through the README's
   `experiment run` lines, and `reproduce` then writes the doc's tables from whatever
   results there are, into the walk directory's copy of docs/reproductions).
6. `lab up` (not the shared lab's own line): 1 node, `--node-profile nodeK=P` -> node1
   (a lab start costs 45-105 s here under load); each such line rebuilds the shared lab
   (down and wiped first),
   and the shared lab's line (SHARED_LAB_LINE) runs last of them as written, so the lab
   every later line uses is the README's 3-node `edge`.
7. A line that runs until Ctrl-C (`lab metrics --serve`, the `tune` daemon without
   `--once`/`--iterations`, `lab logs -f`) runs UNTIL_SIGNAL_S seconds, is sent SIGINT,
   and passes when it was still running then and exits 0 or 130.

Order (`order`): lines that need no lab (in document order), the campaigns and what
reads their results, the `lab up` lines, every line that uses the shared lab (document
order), then its `net` lines (document order: the conditions a `net set` line leaves, a
4G link or 1 % loss, would otherwise slow every line after it, 25-30 s for one YCSB
line), `lab down` last. The lines before them then run on the Wi-Fi lab `lab up --net
wifi` made, where on 2026-11-27 `tune --hosts ... --dry-run` once failed with the Python
driver's "CRC mismatch on header": a driver bug on split reads of CQL v5 segments, which
casslab's CQL worker now avoids by speaking v4 (casslab.cassandra.cql_worker).

A line fails (`judge`) on a non-zero exit, a traceback in its output, or a command or
option that no longer exists (`static_problem`, checked for every line before any runs,
skipped lines included).
"""

from __future__ import annotations

import re
import shlex
from collections.abc import Iterator, Mapping, Sequence
from dataclasses import dataclass, field, replace
from typing import Any

SHARED_LAB_LINE = "casslab lab up --nodes 3 --name edge --net wifi"
UNTIL_SIGNAL_S = 4.0
SHORT_DURATION = "2s"
SHORT_WARMUP = "1s"
SHORT_INTERVAL = "1s"
MAX_COUNT = 500
MAX_UP_NODES = 1
CHECK_PINGS = 50
CHECK_BANDWIDTH_S = "1"
TRACEBACK = "Traceback (most recent call last)"

# Phases of `order`, in the order they run.
OFFLINE, CAMPAIGN, RESULTS, LAB_UP, ON_LAB, LINKS, LAB_DOWN = range(7)


@dataclass(frozen=True)
class DocLine:
    """A command line as the documentation shows it (comment dropped)."""

    text: str
    source: str  # README.md:36, or `casslab lab up --help`


@dataclass(frozen=True)
class Step:
    """A documented line, rewritten to run here."""

    doc: DocLine
    args: tuple[str, ...]  # casslab's arguments (without the program name)
    stdout_to: str | None = None  # `> FILE`
    in_lab_namespace: bool = False  # run through `casslab lab exec --name LAB --`
    until_signal: bool = False  # runs until Ctrl-C: stopped after UNTIL_SIGNAL_S
    rebuilds_lab: bool = False  # a `lab up` other than the shared lab's own
    phase: int = ON_LAB
    notes: tuple[str, ...] = field(default_factory=tuple)  # the rules applied

    @property
    def key(self) -> str:
        """What makes two steps the same run (a README line and a help example alike)."""
        return shlex.join([*self.args, *([">", self.stdout_to] if self.stdout_to else [])])


# ---- extraction ---------------------------------------------------------------------------

def readme_lines(text: str, name: str = "README.md") -> list[DocLine]:
    """Every indented `casslab ...` line of a README (code blocks of 4 spaces)."""
    found: list[DocLine] = []
    fenced = False
    for n, raw in enumerate(text.splitlines(), 1):
        if raw.lstrip().startswith("```"):
            fenced = not fenced
            continue
        if fenced or not raw.startswith("    "):
            continue
        line = raw.strip()
        if line.startswith("casslab "):
            found.append(DocLine(strip_comment(line), f"{name}:{n}"))
    return found


_EXAMPLE = re.compile(r"^\s*Examples?(?:\s*\([^)]*\))?:\s*(.*)$")


def example_lines(help_text: str, source: str) -> list[DocLine]:
    """The `Example...:` command lines of one command's help, continuation lines too."""
    found: list[DocLine] = []
    in_examples = False
    for raw in help_text.splitlines():
        m = _EXAMPLE.match(raw)
        rest = m.group(1).strip() if m else raw.strip()
        if m:
            in_examples = True
        if in_examples and rest.startswith("casslab "):
            found.append(DocLine(strip_comment(rest), source))
        elif not m:
            in_examples = False
    return found


def strip_comment(line: str) -> str:
    """The line without its `# comment` (a # inside quotes stays)."""
    quote = ""
    for i, ch in enumerate(line):
        if quote:
            quote = "" if ch == quote else quote
        elif ch in "'\"":
            quote = ch
        elif ch == "#" and (i == 0 or line[i - 1].isspace()):
            return line[:i].rstrip()
    return line.rstrip()


def command_tree(root: Any) -> Iterator[tuple[tuple[str, ...], Any]]:
    """(path, command) of every command under a Click command, the root first."""
    from typer._click import Context

    def walk(cmd: Any, path: tuple[str, ...], ctx: Any) -> Iterator[tuple[tuple[str, ...],
                                                                         Any]]:
        yield path, cmd
        for name in getattr(cmd, "list_commands", lambda _c: [])(ctx):
            sub = cmd.get_command(ctx, name)
            yield from walk(sub, (*path, name), Context(sub, parent=ctx, info_name=name))

    yield from walk(root, ("casslab",), Context(root, info_name="casslab"))


def takes_name(root: Any) -> dict[tuple[str, ...], bool]:
    """For each command path (`("lab", "up")`), whether it has a `--name` option."""
    return {path[1:]: any("--name" in getattr(p, "opts", ()) for p in cmd.params)
            for path, cmd in command_tree(root)}


def help_lines(root: Any) -> list[DocLine]:
    """Every `Example` line of every command's help under the Click command `root`."""
    found: list[DocLine] = []
    for path, cmd in command_tree(root):
        found += example_lines(cmd.help or "", f"`{' '.join(path)} --help`")
    return found


# ---- rewriting ----------------------------------------------------------------------------

def expand(line: str) -> list[list[str]]:
    """The words of a line, one word list per `a|b` alternative; `[...]` kept unbracketed."""
    words: list[str] = []
    optional = False
    for w in shlex.split(line):
        if w.startswith("[") and not optional:
            optional, w = True, w[1:]
        if optional and w.endswith("]"):
            optional, w = False, w[:-1]
        words.append(w)
    variants: list[list[str]] = [[]]
    for w in words:
        alternatives = w.split("|") if "|" in w else [w]
        variants = [[*v, a] for v in variants for a in alternatives]
    return variants


def _value_of(args: Sequence[str], *names: str) -> str | None:
    for i, a in enumerate(args):
        for n in names:
            if a == n and i + 1 < len(args):
                return args[i + 1]
            if a.startswith(n + "="):
                return a.split("=", 1)[1]
    return None


def _set_value(args: list[str], names: Sequence[str], value: str) -> bool:
    """Replace the value of the first of `names` in `args`; False when absent."""
    for i, a in enumerate(args):
        if a in names and i + 1 < len(args):
            args[i + 1] = value
            return True
        for n in names:
            if a.startswith(n + "="):
                args[i] = f"{n}={value}"
                return True
    return False


def _seconds(text: str) -> float:
    m = re.fullmatch(r"([0-9.]+)\s*(ms|s|m|min|h)?", text.strip())
    if not m:
        return 0.0
    unit = {"ms": 1e-3, "s": 1.0, "m": 60.0, "min": 60.0, "h": 3600.0, None: 1.0}[m.group(2)]
    return float(m.group(1)) * unit


def _count(text: str) -> int | None:
    m = re.fullmatch(r"([0-9]+)([kmKM]?)", text)
    if not m:
        return None
    return int(m.group(1)) * {"": 1, "k": 1000, "m": 1_000_000}[m.group(2).lower()]


def _command(args: Sequence[str]) -> tuple[str, ...]:
    """The command path of a line's arguments: (lab, up), (run,), (tune,)..."""
    groups = {"lab", "net", "experiment", "tune", "k8s"}
    if not args:
        return ()
    if args[0] in groups and len(args) > 1 and not args[1].startswith("-"):
        return (args[0], args[1])
    return (args[0],)


def rewrite(doc: DocLine, lab: str, addresses: Sequence[str],
            takes_name: Mapping[tuple[str, ...], bool]) -> list[Step]:
    """The steps that run `doc` here (rules 1-7 of the module docstring).

    `addresses`: the shared lab's node addresses; `takes_name`: for a command path, whether
    it has a `--name` option (from the command tree).
    """
    steps = []
    for words in expand(doc.text):
        assert words[0] == "casslab", doc
        args = list(words[1:])
        stdout_to = None
        if ">" in args:
            i = args.index(">")
            stdout_to = args[i + 1]
            del args[i:i + 2]
        steps.append(_rewrite_args(doc, args, stdout_to, lab, addresses, takes_name))
    return steps


def _rewrite_args(doc: DocLine, args: list[str], stdout_to: str | None, lab: str,
                  addresses: Sequence[str], takes_name: Mapping[tuple[str, ...], bool]
                  ) -> Step:
    notes: list[str] = []
    cmd = _command(args)
    # 3. the lab
    remote = any(a in ("--hosts", "--inventory") for a in args)
    if _set_value(args, ("--name", "-n"), lab):
        notes.append("lab name")
    elif takes_name.get(cmd, False) and not remote:
        args += ["--name", lab]
        notes.append("lab name added")
    # 4. a real cluster's addresses
    seen: list[str] = []
    for i, a in enumerate(args):
        for addr in re.findall(r"10\.0\.0\.[0-9]+", a):
            if addr not in seen:
                seen.append(addr)
            k = seen.index(addr)
            a = a.replace(addr, addresses[min(k, len(addresses) - 1)])
        args[i] = a
    in_ns = bool(seen) and "--hosts" in args
    if seen:
        notes.append("addresses")
    # 5. shorter
    _shorten(args, cmd, notes)
    # 6. lab up
    rebuilds = False
    if cmd == ("lab", "up") and doc.text != SHARED_LAB_LINE and "--inventory" not in args:
        rebuilds = True
        _fewer_nodes(args, notes)
    # 7. until Ctrl-C
    until = (cmd == ("lab", "metrics") and "--serve" in args) or (
        cmd == ("tune",) and "--once" not in args and "--iterations" not in args) or (
        cmd == ("lab", "logs") and ("-f" in args or "--follow" in args))
    return Step(doc, tuple(args), stdout_to, in_ns, until, rebuilds, phase_of(cmd, args),
                tuple(notes))


def _shorten(args: list[str], cmd: tuple[str, ...], notes: list[str]) -> None:
    for names, short in ((("--duration",), SHORT_DURATION), (("--warmup",), SHORT_WARMUP),
                         (("--interval",), SHORT_INTERVAL)):
        value = _value_of(args, *names)
        if value is not None and not value.isdigit() and _seconds(value) > _seconds(short):
            _set_value(args, names, short)
            notes.append(f"{names[0]} {short}")
        elif value is not None and value.isdigit() and int(value) > MAX_COUNT:
            _set_value(args, names, str(MAX_COUNT))  # --warmup 5000 (ops)
            notes.append(f"{names[0]} {MAX_COUNT}")
    for names in (("--ops",), ("--records",), ("--loss-packets",)):
        value = _value_of(args, *names)
        if value is not None and value.isdigit() and int(value) > MAX_COUNT:
            _set_value(args, names, str(MAX_COUNT))
            notes.append(f"{names[0]} {MAX_COUNT}")
    for i, a in enumerate(args):
        key, eq, value = a.partition("=")
        n = _count(value) if eq else None
        if key in ("recordcount", "operationcount", "n") and n is not None and n > MAX_COUNT:
            args[i] = f"{key}={MAX_COUNT}"
            notes.append(f"{key}= {MAX_COUNT}")
        elif key == "duration" and eq and _seconds(value) > _seconds(SHORT_DURATION):
            args[i] = f"duration={SHORT_DURATION}"
            notes.append(f"duration= {SHORT_DURATION}")
        elif key == "seq" and (m := re.fullmatch(r"([0-9]+)\.\.([0-9]+)", value)) and \
                int(m.group(2)) > MAX_COUNT:
            args[i] = f"seq={m.group(1)}..{MAX_COUNT}"
            notes.append(f"-pop seq=..{MAX_COUNT}")
    if cmd == ("experiment", "run") and "--scale" not in args:
        args += ["--scale", "smoke"]
        notes.append("--scale smoke")
    if cmd and cmd[0] == "stress" and "-rate" not in args:
        # before casslab's own options (--name ...): what follows -rate is its arguments
        at = next((i for i, a in enumerate(args) if a.startswith("--")), len(args))
        args[at:at] = ["-rate", "threads=4"]
        notes.append("-rate threads=4")
    commands = ("write", "read", "mixed", "user", "counter_write", "counter_read")
    if cmd and cmd[0] == "stress" and "no-warmup" not in args:
        at = next((i + 1 for i, a in enumerate(args) if a in commands), None)
        if at is not None:
            args.insert(at, "no-warmup")
            notes.append("no-warmup")
    if cmd == ("reproduce",) and "--no-run" not in args:
        args.append("--no-run")
        notes.append("--no-run")
    if cmd == ("net", "check"):
        counts = [("--pings", str(CHECK_PINGS))]
        if "--inventory" not in args:  # between hosts: round trips and loss by --pings
            counts += [("--loss-packets", str(MAX_COUNT)),
                       ("--bandwidth-seconds", CHECK_BANDWIDTH_S)]
        for flag, value in counts:
            if _value_of(args, flag) is None:
                args += [flag, value]
                notes.append(f"{flag} {value}")
    if cmd == ("tune", "learn"):
        for flag, value in (("--duration", SHORT_DURATION), ("--warmup", "0s")):
            if not _set_value(args, (flag,), value):
                args += [flag, value]
        notes.append("trials 2s, no warm-up")


def _fewer_nodes(args: list[str], notes: list[str]) -> None:
    nodes = _value_of(args, "--nodes", "-N")
    if nodes is None:  # the default, 3
        args += ["--nodes", str(MAX_UP_NODES)]
        notes.append(f"--nodes {MAX_UP_NODES}")
    elif nodes.isdigit() and int(nodes) > MAX_UP_NODES:
        _set_value(args, ("--nodes", "-N"), str(MAX_UP_NODES))
        notes.append(f"--nodes {MAX_UP_NODES}")
    for i, a in enumerate(args):
        m = re.fullmatch(r"node([0-9]+)=(.+)", a)
        if m and i > 0 and args[i - 1] == "--node-profile" and int(m.group(1)) > MAX_UP_NODES:
            args[i] = f"node{MAX_UP_NODES}={m.group(2)}"
            notes.append(f"--node-profile node{MAX_UP_NODES}")


def phase_of(cmd: tuple[str, ...], args: Sequence[str]) -> int:
    """When a command runs in the walk (see `order`)."""
    if cmd == ("lab", "up"):
        return LAB_UP
    if cmd == ("lab", "down"):
        return LAB_DOWN
    if cmd in (("experiment", "run"), ("tune", "learn")):
        return CAMPAIGN
    if cmd in (("report",), ("compare",), ("experiment", "export")):
        return RESULTS
    if cmd[:1] == ("net",) and cmd != ("net", "profiles"):
        return LINKS
    offline = {("profiles",), ("schema",), ("plan",), ("fetch",), ("version",),
               ("experiment", "validate"), ("experiment", "plan"), ("k8s", "render"),
               ("tune", "rules"), ("net", "profiles"), ("lab", "list")}
    return OFFLINE if cmd in offline else ON_LAB


def order(steps: Sequence[Step]) -> list[Step]:
    """Steps without duplicates, by phase, in document order within one; the shared lab's
    own `lab up` last of the lab ups."""
    unique: dict[str, Step] = {}
    for s in steps:
        unique.setdefault(s.key, s)
    return sorted(unique.values(), key=lambda s: (
        s.phase, s.phase == LAB_UP and not s.rebuilds_lab))


def with_phase(step: Step, phase: int) -> Step:
    return replace(step, phase=phase)


# ---- judging ------------------------------------------------------------------------------

def static_problem(root: Any, args: Sequence[str]) -> str | None:
    """Why `casslab ARGS` cannot run as a command line (no such command, an unknown option
    or a bad value of a typed one), or None; nothing is run. Options given after `--`, or
    to `run`/`stress` (which pass unknown options on to casslab-load), are not checked."""
    from typer._click.exceptions import ClickException, NoArgsIsHelpError

    try:
        ctx = root.make_context("casslab", list(args))
        cmd = root
        while hasattr(cmd, "resolve_command"):
            rest = [*getattr(ctx, "_protected_args", []), *ctx.args]
            if not rest:
                break
            name, sub, rest = cmd.resolve_command(ctx, rest)
            if sub is None:
                return f"no such command {name!r}"
            ctx = sub.make_context(name, rest, parent=ctx)
            cmd = sub
    except NoArgsIsHelpError:
        return "a command group without its command"
    except ClickException as exc:
        return exc.format_message()
    return None


def static_problems(root: Any, steps: Sequence[Step]) -> list[str]:
    """`source: line: problem` for every step that is not a valid command line."""
    return [f"{s.doc.source}: {s.doc.text}: {p}" for s in steps
            if (p := static_problem(root, s.args))]


def judge(returncode: int | None, stdout: str, stderr: str, *,
          until_signal: bool = False) -> str | None:
    """Why a run failed (non-zero exit, a traceback), or None when it passed."""
    if TRACEBACK in stdout or TRACEBACK in stderr:
        return "a traceback"
    ok = (0, 130, -2) if until_signal else (0,)
    if returncode is None:
        return "still running"
    if returncode not in ok:
        last = (stderr.strip().splitlines() or stdout.strip().splitlines() or [""])[-1]
        return f"exit {returncode}: {last}"
    return None
