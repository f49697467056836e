"""bench/peer.py, the `--peer REF` of the benchmarks (issue 47): its options, its table and the peer tree it prepares
(against a temporary git repository; the build of a differing native/ is left to a run by hand: it takes minutes)."""

from __future__ import annotations

import argparse
import datetime
import shutil
import subprocess
from pathlib import Path

import pytest
from helpers.repo_scripts import load_script

PEER = load_script("bench/peer.py")


def parser() -> argparse.ArgumentParser:
    made = argparse.ArgumentParser()
    made.add_argument("--events", type=int, default=10)
    PEER.add_options(made)
    return made


@pytest.mark.unit
def test_the_options_default_to_one_tree_and_three_rounds() -> None:
    args = parser().parse_args([])
    assert (args.peer, args.rounds, args.figures_to) == (None, 3, None)
    args = parser().parse_args(["--peer", "7648080", "--rounds", "5", "--events", "20"])
    assert (args.peer, args.rounds, args.events) == ("7648080", 5, 20)
    assert "--figures-to" not in parser().format_help()  # the rounds' own channel, not the user's


@pytest.mark.unit
def test_the_table_gives_each_round_then_medians_ranges_and_the_ratio() -> None:
    names = ["fast path events/s", "decode+validate events/s"]
    this = [{names[0]: 14_594.4, names[1]: 150_000}, {names[0]: 14_940.0, names[1]: 152_000},
            {names[0]: 14_700.2, names[1]: 149_000}]
    peer = [{names[0]: 17_289.0, names[1]: 151_000}, {names[0]: 17_150.0, names[1]: 150_500},
            {names[0]: 17_200.0, names[1]: 150_000}]
    assert PEER.header(names) == ("| round | tree | fast path events/s | decode+validate events/s |\n"
                                  "|---|---|---|---|")
    assert PEER.row("1", "this 80453c0", [PEER.rate(v) for v in this[0].values()]) == \
        "| 1 | this 80453c0 | 14,594 | 150,000 |"
    assert PEER.summary(names, this, peer, ("this 80453c0", "peer 7648080")) == (
        "| median (range) | this 80453c0 | 14,700 (14,594–14,940) | 150,000 (149,000–152,000) |\n"
        "| median (range) | peer 7648080 | 17,200 (17,150–17,289) | 150,500 (150,000–151,000) |\n"
        "| this / peer |  | 0.85× | 1.00× |")


@pytest.mark.unit
def test_the_machine_line_names_the_cpu_model_python_and_date() -> None:
    cpuinfo = "processor\t: 0\nmodel name\t: Intel(R) Xeon(R) Processor\nprocessor\t: 1\nmodel name\t: Intel(R) Xeon(R) Processor\n"
    assert PEER.machine_line(cpuinfo, 2, "3.11.7", datetime.date(2026, 12, 5)) == \
        "Intel(R) Xeon(R) Processor, 2 vCPU, Python 3.11.7, 2026-12-05"


@pytest.mark.unit
def test_the_native_digest_reads_the_sources_not_the_build(tmp_path: Path) -> None:
    (tmp_path / "native" / "src").mkdir(parents=True)
    (tmp_path / "native" / "src" / "lib.rs").write_text("fn a() {}\n")
    before = PEER.native_hash(tmp_path)
    (tmp_path / "native" / "target").mkdir()
    (tmp_path / "native" / "target" / "lib_native.so").write_bytes(b"\x7fELF")
    assert PEER.native_hash(tmp_path) == before
    (tmp_path / "native" / "src" / "lib.rs").write_text("fn b() {}\n")
    assert PEER.native_hash(tmp_path) != before


def git(repo: Path, *args: str) -> str:
    return subprocess.run(["git", "-C", str(repo), *args], check=True, capture_output=True, text=True).stdout.strip()


def test_a_commit_becomes_an_importable_worktree_with_this_trees_compiled_core(tmp_path: Path) -> None:
    repo = tmp_path.resolve() / "repo"
    cache = repo / ".cache" / "peers"
    (repo / "native" / "src").mkdir(parents=True)
    (repo / "native" / "src" / "lib.rs").write_text("fn a() {}\n")
    (repo / "__init__.py").write_text('"""old"""\n')
    git(repo, "init", "-q")
    git(repo, "add", "__init__.py", "native")
    git(repo, "-c", "user.name=t", "-c", "user.email=t@t", "commit", "-qm", "first")
    sha = git(repo, "rev-parse", "HEAD")
    (repo / "__init__.py").write_text('"""new"""\n')  # this tree moved on; its native/ did not
    core = tmp_path / "_native.cpython-311-x86_64-linux-gnu.so"
    core.write_bytes(b"compiled")

    peer = PEER.prepare("HEAD", repo, cache, core)
    assert (peer.label, peer.tree, peer.native) == (sha[:7], cache / sha / "tree", "reused")
    assert (peer.src / "ragpulse" / "__init__.py").read_text() == '"""old"""\n'
    assert (peer.tree / core.name).read_bytes() == b"compiled"
    assert PEER.prepare(sha[:10], repo, cache, core).native == "kept"

    # A worktree whose directory went is checked out again; a directory is taken as it is.
    shutil.rmtree(peer.tree)
    assert PEER.prepare(sha, repo, cache, core).native == "reused"
    mine = PEER.prepare(str(repo), repo, cache, core)
    assert (mine.label, mine.tree, mine.native) == (str(repo), repo, "reused")
    assert (mine.src / "ragpulse" / "__init__.py").read_text() == '"""new"""\n'
    (repo / core.name).write_bytes(b"built here")  # a directory's own core is its owner's: kept as it is
    assert PEER.prepare(str(repo), repo, cache, core).native == "kept"
    assert (repo / core.name).read_bytes() == b"built here"
    with pytest.raises(SystemExit, match="neither a directory nor a commit"):
        PEER.prepare("no-such-ref", repo, cache, core)
