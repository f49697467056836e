"""_native.pyi, the types of the compiled core, against the module the crate builds: the same public names, each a
function, a class or a constant in both; a class's methods and properties the same, and final in both or in
neither; each function's and method's parameters (names, kinds, defaults) those of the compiled signature PyO3
gives (__text_signature__). A binding registered in native/src/lib.rs without its stub entry fails here, and so
does a stub entry left behind by a binding that went. The stub is read beside the module, where the wheel ships
it (pyproject's package data)."""

from __future__ import annotations

import ast
import copy
import inspect
import types
from pathlib import Path
from typing import Any

import pytest

import ragpulse._native as native

pytestmark = pytest.mark.unit  # starts no process and binds no port (pyproject.toml)

STUB = Path(native.__file__).with_name("_native.pyi")
# Set on a type that can be subclassed; a PyO3 class without `subclass` lacks it, as a @final one should.
BASETYPE = 1 << 10
# In every class's namespace, none of them a binding.
CLASS_BOOKKEEPING = {"__doc__", "__module__"}

# (name, kind, default): inspect's kind, and the default (inspect.Parameter.empty for none).
Param = tuple[str, Any, Any]
_UNKNOWN_DEFAULT = object()  # a stub default written as `...`: any default matches it


def _decorators(node: ast.FunctionDef | ast.ClassDef) -> set[str]:
    return {ast.unparse(decorator).rsplit(".", 1)[-1] for decorator in node.decorator_list}


def _default(node: ast.expr) -> Any:
    return _UNKNOWN_DEFAULT if isinstance(node, ast.Constant) and node.value is ... else ast.literal_eval(node)


def _stub_params(node: ast.FunctionDef, method: bool) -> list[Param]:
    """The parameters of a stub function, without a method's self or cls."""
    args, kind = node.args, inspect.Parameter
    positional: list[tuple[ast.arg, Any]] = [(arg, kind.POSITIONAL_ONLY) for arg in args.posonlyargs]
    positional += [(arg, kind.POSITIONAL_OR_KEYWORD) for arg in args.args]
    defaults = [inspect.Parameter.empty] * (len(positional) - len(args.defaults)) + list(args.defaults)
    params: list[Param] = [(arg.arg, k, d) for (arg, k), d in zip(positional, defaults)]
    if args.vararg:
        params.append((args.vararg.arg, kind.VAR_POSITIONAL, inspect.Parameter.empty))
    for arg, default in zip(args.kwonlyargs, args.kw_defaults):
        params.append((arg.arg, kind.KEYWORD_ONLY, inspect.Parameter.empty if default is None else default))
    if args.kwarg:
        params.append((args.kwarg.arg, kind.VAR_KEYWORD, inspect.Parameter.empty))
    params = [(name, k, d if d is inspect.Parameter.empty else _default(d)) for name, k, d in params]
    return params[1:] if method else params


def _compiled_params(obj: Any, method: bool) -> list[Param] | None:
    """The parameters of the compiled signature (without a method's self), None where there is none to read."""
    try:
        signature = inspect.signature(obj)
    except (ValueError, TypeError):
        return None
    params = [(p.name, p.kind, p.default) for p in signature.parameters.values()]
    return params[1:] if method else params


def _compare_params(where: str, stub: list[Param], compiled: list[Param]) -> list[str]:
    matches = len(stub) == len(compiled) and all(
        (s_name, s_kind) == (c_name, c_kind)
        and (s_default is _UNKNOWN_DEFAULT and c_default is not inspect.Parameter.empty or s_default == c_default)
        for (s_name, s_kind, s_default), (c_name, c_kind, c_default) in zip(stub, compiled)
    )
    return [] if matches else [f"{where}: stub parameters {_show(stub)} but compiled {_show(compiled)}"]


def _show(params: list[Param]) -> str:
    return str(inspect.Signature([inspect.Parameter(name, kind, default=default) for name, kind, default in params]))


def _class_problems(node: ast.ClassDef, cls: type) -> list[str]:
    problems = []
    if ("final" in _decorators(node)) != (not cls.__flags__ & BASETYPE):
        problems.append(f"{cls.__name__}: @final in the stub only where the class cannot be subclassed")
    stub_members: dict[str, ast.stmt] = {item.name: item for item in node.body if isinstance(item, ast.FunctionDef)}
    stub_members |= {item.target.id: item for item in node.body
                     if isinstance(item, ast.AnnAssign) and isinstance(item.target, ast.Name)}
    compiled = {name: value for name, value in vars(cls).items() if name not in CLASS_BOOKKEEPING}
    for name in sorted(stub_members.keys() ^ compiled.keys()):
        problems.append(f"{cls.__name__}.{name}: {'only in the stub' if name in stub_members else 'not in the stub'}")
    for name in sorted(stub_members.keys() & compiled.keys()):
        item, value, where = stub_members[name], compiled[name], f"{cls.__name__}.{name}"
        is_property = isinstance(value, (types.GetSetDescriptorType, types.MemberDescriptorType))
        if not isinstance(item, ast.FunctionDef):
            continue  # an attribute: the name is all there is to compare
        if ("property" in _decorators(item)) != is_property:
            problems.append(f"{where}: a property in the stub exactly where the class has one")
        elif name == "__new__":  # the constructor's signature is the class's own (PyO3 gives it to the type)
            params = _compiled_params(cls, method=False)
            if params is None:
                problems.append(f"{where}: the compiled class has no signature to compare")
            else:
                problems += _compare_params(where, _stub_params(item, method=True), params)
        elif not is_property and (params := _compiled_params(value, method=True)) is not None:
            problems += _compare_params(where, _stub_params(item, method=True), params)
    return problems


def _stub_all(tree: ast.Module) -> list[str]:
    """The stub's __all__, sorted: the order is the registration's, which says nothing."""
    for node in tree.body:
        if isinstance(node, ast.Assign) and any(getattr(target, "id", None) == "__all__" for target in node.targets):
            return sorted(ast.literal_eval(node.value))
    return []


def stub_problems(tree: ast.Module, module: types.ModuleType) -> list[str]:
    """Every difference between the stub's public entries and the module's public names."""
    entries: dict[str, ast.stmt] = {}
    for node in tree.body:
        if isinstance(node, (ast.FunctionDef, ast.ClassDef)):
            entries[node.name] = node
        elif isinstance(node, ast.AnnAssign) and isinstance(node.target, ast.Name):
            entries[node.target.id] = node
        elif isinstance(node, ast.Assign):
            entries.update((target.id, node) for target in node.targets if isinstance(target, ast.Name))
    stub = {name: node for name, node in entries.items() if not name.startswith("_")}  # the stub's own aliases
    compiled = {name: getattr(module, name) for name in dir(module) if not name.startswith("_")}
    problems = [f"{name}: {'only in the stub' if name in stub else 'not in the stub'}"
                for name in sorted(stub.keys() ^ compiled.keys())]
    if _stub_all(tree) != sorted(getattr(module, "__all__", [])):
        problems.append(f"__all__: the stub's {_stub_all(tree)} but the module's {getattr(module, '__all__', None)}")
    for name in sorted(stub.keys() & compiled.keys()):
        node, value = stub[name], compiled[name]
        if isinstance(value, type):
            problems += _class_problems(node, value) if isinstance(node, ast.ClassDef) else [f"{name}: a class"]
        elif callable(value):
            if not isinstance(node, ast.FunctionDef):
                problems.append(f"{name}: a function")
                continue
            compiled_params = _compiled_params(value, method=False)
            if compiled_params is None:  # PyO3 gives every function one: its absence is a change to look at
                problems.append(f"{name}: the compiled function has no signature to compare")
            else:
                problems += _compare_params(name, _stub_params(node, method=False), compiled_params)
        elif not isinstance(node, (ast.AnnAssign, ast.Assign)):
            problems.append(f"{name}: a constant")
    return problems


def test_the_stub_types_every_binding_and_nothing_else() -> None:
    assert STUB.is_file(), f"{STUB} is missing: pyproject's package data ships it beside the module"
    assert stub_problems(ast.parse(STUB.read_text()), native) == []


def _without(tree: ast.Module, name: str, member: str | None = None) -> ast.Module:
    """The stub without a top-level entry, or without a member of a class."""
    tree = copy.deepcopy(tree)
    if member is None:
        tree.body = [node for node in tree.body if getattr(node, "name", None) != name]
    else:
        cls = next(node for node in tree.body if isinstance(node, ast.ClassDef) and node.name == name)
        cls.body = [node for node in cls.body if getattr(node, "name", None) != member]
    return tree


def _edited(before: str, after: str) -> ast.Module:
    source = STUB.read_text()
    assert before in source, before
    return ast.parse(source.replace(before, after))


def test_the_check_finds_a_binding_the_stub_misses_or_mistypes() -> None:
    """The check itself: the stub without a function, a class, a method or a property; with a constructor the class
    lacks, a parameter renamed, made positional-only or added, a default dropped, or a class no longer final."""
    tree = ast.parse(STUB.read_text())
    for where in ("stem_words", "KeyFilter", "FastHistogram.observe", "FastHistogram.counts"):
        name, _, member = where.partition(".")
        assert f"{where}: not in the stub" in stub_problems(_without(tree, name, member or None), native)
    edits = {
        ("class LexicalUnits:\n", "class LexicalUnits:\n    def __new__(cls) -> Self: ...\n"):
            "LexicalUnits.__new__: only in the stub",
        ("def keeps(self, key: str)", "def keeps(self, name: str)"): "KeyFilter.keeps: stub parameters",
        ("def inc(self, amount: float = 1.0)", "def inc(self, amount: float)"): "FastCounter.inc: stub parameters",
        ("def regex_spans(pattern: str, texts", "def regex_spans(pattern: str, /, texts"):
            "regex_spans: stub parameters",
        ("def __new__(cls, bounds: Sequence[float])", "def __new__(cls)"): "FastHistogram.__new__: stub parameters",
        ("@final\nclass KeyFilter", "class KeyFilter"): "KeyFilter: @final",
    }
    for (before, after), expected in edits.items():
        assert any(problem.startswith(expected) for problem in stub_problems(_edited(before, after), native)), expected
