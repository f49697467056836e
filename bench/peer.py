"""A peer tree of ragpulse in the same run (issue 47): `--peer REF --rounds N` for the benchmarks.

REF is a git commit (checked out as a detached worktree under .cache/peers/<sha>/tree) or a directory holding a
ragpulse tree. Either is made importable as `ragpulse` through a directory holding one symlink
(.cache/peers/<key>/src/ragpulse -> the tree) and given its compiled core (a directory's own is kept when it has
one): this interpreter's `ragpulse._native` copied in when the peer's native/ matches this repository's, else the
peer's own, built by the project's build step (`pip wheel`, which runs setuptools-rust and cargo; its cargo target directory .cache/peers/cargo-target is
shared by every peer build). Then the benchmark runs N alternating rounds (this tree, the peer, this tree, ...),
each in a fresh subprocess on the same payload file, and prints every round's figures, the medians and the ratios.

Stdlib only: tests load it alone (tests/test_bench_peer.py).
"""

from __future__ import annotations

import argparse
import datetime
import hashlib
import importlib.util
import json
import os
import platform
import shutil
import statistics
import subprocess
import sys
import tempfile
import zipfile
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
CACHE = REPO / ".cache" / "peers"
BUILD_TIME = "about 1.5 minutes for the first peer, its crate's dependencies included; under a minute after"
Figures = dict[str, float]


@dataclass(frozen=True)
class Peer:
    label: str  # the short commit, or the directory's path
    tree: Path  # the ragpulse tree (the package's root)
    src: Path  # what goes on PYTHONPATH: it holds ragpulse -> tree
    native: str  # how its compiled core came: "kept", "reused" (this tree's) or "built"


def add_options(parser: argparse.ArgumentParser) -> None:
    parser.add_argument(
        "--peer", metavar="REF",
        help="also measure the ragpulse of REF (a git commit, or a directory holding a ragpulse tree) in alternating "
             "rounds, each tree in a fresh subprocess on the same payload file; a commit is checked out under "
             ".cache/peers/. Its compiled core (a directory's own, if it has one) is this tree's when its native/ is "
             f"the same, else built with pip wheel ({BUILD_TIME}). This script's measuring code drives both trees")
    parser.add_argument("--rounds", type=int, default=3, help="with --peer: rounds, each this tree then the peer")
    parser.add_argument("--figures-to", help=argparse.SUPPRESS)  # a round's subprocess writes its figures there


def git(repo: Path, *args: str) -> str:
    return subprocess.run(["git", "-C", str(repo), *args], check=True, capture_output=True, text=True).stdout.strip()


def native_hash(tree: Path) -> str:
    """A digest of the tree's native/ sources (not its target/): two trees with the same one build the same core."""
    native = tree / "native"
    digest = hashlib.sha256()
    for path in sorted(native.rglob("*")):
        relative = path.relative_to(native)
        if path.is_file() and relative.parts[0] != "target":
            data = path.read_bytes()
            digest.update(f"{relative}\0{len(data)}\0".encode() + data)
    return digest.hexdigest()


def current_native() -> Path:
    """The compiled core this interpreter imports (the installed wheel's, or the live tree's on PYTHONPATH)."""
    spec = importlib.util.find_spec("ragpulse._native")
    if spec is None or spec.origin is None:
        raise SystemExit("ragpulse._native is not importable here: install ragpulse first (bench/README.md)")
    return Path(spec.origin)


def checkout(ref: str, repo: Path, cache: Path) -> tuple[str, Path, Path, bool]:
    """(label, tree, home, whether the tree is the cache's) of REF: a directory as it is, a commit as a detached
    worktree in the cache (made once)."""
    if Path(ref).is_dir():
        tree = Path(ref).resolve()
        if not (tree / "__init__.py").is_file() or not (tree / "native").is_dir():
            raise SystemExit(f"--peer {ref}: not a ragpulse tree (no __init__.py or native/)")
        return str(tree), tree, cache / ("dir-" + hashlib.sha256(str(tree).encode()).hexdigest()[:12]), False
    try:
        sha = git(repo, "rev-parse", "--verify", "--quiet", f"{ref}^{{commit}}")
    except subprocess.CalledProcessError:
        raise SystemExit(f"--peer {ref}: neither a directory nor a commit of {repo}") from None
    home = cache / sha
    tree = home / "tree"
    if not (tree / "__init__.py").is_file():
        # --force: a worktree whose directory was deleted is still registered; add it again.
        git(repo, "worktree", "add", "--force", "--detach", str(tree), sha)
    return sha[:7], tree, home, True


def build_native(tree: Path, cache: Path) -> None:
    """The tree's compiled core built as scripts/venv.sh builds it (pip wheel), taken out of the wheel beside the
    tree's __init__.py; pip's build/ and egg-info are removed after, as there."""
    print(f"peer: building {tree}'s compiled core, its native/ differs from this tree's ({BUILD_TIME})",
          file=sys.stderr, flush=True)
    cache.mkdir(parents=True, exist_ok=True)
    env = {**os.environ, "CARGO_TARGET_DIR": str(cache / "cargo-target")}
    with tempfile.TemporaryDirectory(dir=cache) as wheels:
        subprocess.run([sys.executable, "-m", "pip", "wheel", "--quiet", "--disable-pip-version-check", "--no-deps",
                        "--wheel-dir", wheels, str(tree)], check=True, env=env)
        (wheel,) = Path(wheels).glob("ragpulse-*.whl")
        with zipfile.ZipFile(wheel) as archive:
            (member,) = [n for n in archive.namelist() if n.startswith("ragpulse/_native") and n.endswith(".so")]
            install_file(archive.read(member), tree / Path(member).name)
    shutil.rmtree(tree / "build", ignore_errors=True)
    for info in tree.glob("*.egg-info"):
        shutil.rmtree(info)


def install_file(data: bytes, target: Path) -> None:
    """Written aside then renamed: a process still mapping the old file keeps it."""
    partial = target.with_name(target.name + ".partial")
    partial.write_bytes(data)
    partial.replace(target)


def prepare(ref: str, repo: Path = REPO, cache: Path = CACHE, native: Path | None = None) -> Peer:
    """The peer tree of REF, importable and with its compiled core: a directory's own when it has one, else this
    tree's (`native`, by default the one this interpreter imports) when the peer's native/ is this repository's,
    else one built from the peer's."""
    label, tree, home, cached = checkout(ref, repo, cache)
    src = home / "src"
    src.mkdir(parents=True, exist_ok=True)
    link = src / "ragpulse"
    if not link.is_symlink() or link.resolve() != tree:
        link.unlink(missing_ok=True)
        link.symlink_to(tree, target_is_directory=True)
    wanted = native_hash(tree)
    stamp = home / "native.sha256"  # the native/ digest the core in the tree was placed for
    if list(tree.glob("_native*.so")) and (not cached or stamp.is_file() and stamp.read_text() == wanted):
        how = "kept"
    elif wanted == native_hash(repo):
        source = native or current_native()
        install_file(source.read_bytes(), tree / source.name)
        how = "reused"
    else:
        build_native(tree, cache)
        how = "built"
    stamp.write_text(wanted)
    return Peer(label, tree, src, how)


def this_label(repo: Path = REPO) -> str:
    """This repository's commit, marked when its tracked files differ from it."""
    head = git(repo, "rev-parse", "--short=7", "HEAD")
    return head + ("+changes" if git(repo, "status", "--porcelain", "--untracked-files=no") else "")


def machine_line(cpuinfo: str | None = None, cpus: int | None = None, python: str | None = None,
                 today: datetime.date | None = None) -> str:
    """What a docs row names: the CPU model, its count, Python, the date (each read here unless given)."""
    if cpuinfo is None:
        cpuinfo = Path("/proc/cpuinfo").read_text() if Path("/proc/cpuinfo").exists() else ""
    model = next((line.split(":", 1)[1].strip() for line in cpuinfo.splitlines() if line.startswith("model name")),
                 platform.machine())
    return (f"{model}, {cpus or os.cpu_count()} vCPU, Python {python or platform.python_version()}, "
            f"{(today or datetime.date.today()).isoformat()}")


def header(names: Sequence[str]) -> str:
    return "| round | tree | " + " | ".join(names) + " |\n|---|---|" + "---|" * len(names)


def row(first: str, second: str, cells: Sequence[str]) -> str:
    return f"| {first} | {second} | " + " | ".join(cells) + " |"


def rate(value: float) -> str:
    return f"{value:,.0f}"


def summary(names: Sequence[str], this: Sequence[Figures], peer: Sequence[Figures], labels: tuple[str, str]) -> str:
    """The medians with their ranges, then this tree's median over the peer's (above 1: this tree is faster)."""
    lines = []
    medians = []
    for label, runs in zip(labels, (this, peer), strict=True):
        values = [[run[name] for run in runs] for name in names]
        medians.append([statistics.median(v) for v in values])
        lines.append(row("median (range)", label, [f"{rate(m)} ({rate(min(v))}–{rate(max(v))})"
                                                   for m, v in zip(medians[-1], values, strict=True)]))
    lines.append(row("this / peer", "", [f"{a / b:.2f}×" for a, b in zip(*medians, strict=True)]))
    return "\n".join(lines)


def write_figures(path: str, figures: Figures) -> None:
    """A round's figures for the comparing process, with the ragpulse they were measured on."""
    ragpulse = importlib.util.find_spec("ragpulse")
    assert ragpulse is not None and ragpulse.origin is not None
    Path(path).write_text(json.dumps({"ragpulse": str(Path(ragpulse.origin).resolve().parent), "figures": figures}))


def run_round(script: Path, args: Sequence[str], workdir: Path, peer: Peer | None) -> tuple[Figures, str, str]:
    """One fresh subprocess of `script` on this tree or the peer (in a directory of its own: a sidecar's files stay
    apart): its figures, the ragpulse it imported and its standard output."""
    workdir.mkdir()
    env = dict(os.environ)
    if peer is not None:  # before any PYTHONPATH of this tree's (a live tree's /tmp/src)
        env["PYTHONPATH"] = os.pathsep.join(filter(None, [str(peer.src), env.get("PYTHONPATH")]))
    out = workdir / "figures.json"
    done = subprocess.run([sys.executable, str(script), *args, "--figures-to", str(out)], cwd=workdir, env=env,
                          capture_output=True, text=True)
    if done.returncode != 0:
        raise SystemExit(f"{script.name} on {'the peer' if peer else 'this tree'} failed ({done.returncode}):\n"
                         f"{done.stderr[-3000:]}")
    result = json.loads(out.read_text())
    if peer is not None and Path(result["ragpulse"]) != peer.tree.resolve():
        raise SystemExit(f"the peer's round imported ragpulse from {result['ragpulse']}, not {peer.tree}")
    return result["figures"], result["ragpulse"], done.stdout


def compare(script: Path, args: Sequence[str], ref: str, rounds: int) -> None:
    """`script` with `args` (which name the payload file) in `rounds` alternating rounds on this tree and REF."""
    if rounds < 1:
        raise SystemExit("--rounds must be at least 1")
    peer = prepare(ref)
    labels = (f"this {this_label()}", f"peer {peer.label}")
    print(f"machine: {machine_line()}", flush=True)
    runs: dict[str, list[Figures]] = {"this": [], "peer": []}
    with tempfile.TemporaryDirectory() as tmp:
        for round_ in range(1, rounds + 1):
            for side, label in zip(runs, labels, strict=True):
                workdir = Path(tmp) / f"{round_}-{side}"
                figures, ragpulse, stdout = run_round(script, args, workdir, peer if side == "peer" else None)
                if not runs["this"] and side == "this":
                    print(f"this tree: ragpulse from {ragpulse}; peer: {peer.tree} (compiled core {peer.native})")
                    print(stdout.splitlines()[0] if stdout else "", end="\n\n")
                    print(header(list(figures)))
                runs[side].append(figures)
                print(row(str(round_), label, [rate(figures[name]) for name in runs["this"][0]]), flush=True)
    print(summary(list(runs["this"][0]), runs["this"], runs["peer"], labels))
