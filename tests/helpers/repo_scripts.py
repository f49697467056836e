"""A script of the repository (scripts/, bench/) as a module, loaded from its path: a test checks what the script
computes without putting its folder on sys.path."""

from __future__ import annotations

import importlib.util
import sys
from pathlib import Path
from types import ModuleType

ROOT = Path(__file__).resolve().parents[2]


def load_script(path: str) -> ModuleType:
    """The script at `path` (from the repository's root), imported once, as `path` dotted (bench.eval_own_table)."""
    name = path.removesuffix(".py").replace("/", ".")
    if name in sys.modules:
        return sys.modules[name]
    spec = importlib.util.spec_from_file_location(name, ROOT / path)
    assert spec is not None and spec.loader is not None, path
    module = importlib.util.module_from_spec(spec)
    sys.modules[name] = module  # before running it: its dataclasses look their module up there
    spec.loader.exec_module(module)
    return module
