"""Loading the config: one YAML file, RAGPULSE_* environment overrides, CLI flags.

Precedence, lowest first: built-in defaults, the YAML file, environment
variables (RAGPULSE_SECTION__OPTION=value, e.g. RAGPULSE_HTTP__PORT=9000; other RAGPULSE_ names are
not read: `environment_option`),
`--set section.option=value` flags. Every option is documented in
`ragpulse.example.yaml` next to this module; a test keeps that file equal to
the defaults in schema.py. Problems are reported all at once, by dotted path, with a
hint where one helps (`ragpulse config check FILE`): msgspec's type errors here,
then the sections' own checks (`Config.validate()`).
"""

from __future__ import annotations

import difflib
import os
import re
from collections.abc import Mapping
from pathlib import Path
from typing import Any

import msgspec
import yaml

from ragpulse.config.schema import Config
from ragpulse.errors import ConfigError, ConfigProblem

ENV_PREFIX = "RAGPULSE_"
ENV_CONFIG_FILE = "RAGPULSE_CONFIG"  # path of the YAML file; not an option itself


def load_config(
    path: str | os.PathLike[str] | None = None,
    *,
    environ: Mapping[str, str] | None = None,
    overrides: Mapping[str, str] | None = None,
) -> Config:
    """Build the effective config; raises ConfigError naming every problem found."""
    environ = os.environ if environ is None else environ
    path = path or environ.get(ENV_CONFIG_FILE) or None
    data: dict[str, Any] = {}
    if path:
        data = _read_yaml(Path(path))
    sources: dict[str, str] = {}  # dotted option -> the variable or flag that set it, for the error messages
    for key, raw in sorted(environ.items()):
        if (dotted := environment_option(key)) is not None:
            _set_path(data, dotted, _parse_scalar(raw), origin=key)
            sources[dotted] = key
    for dotted, raw in (overrides or {}).items():
        _set_path(data, dotted, _parse_scalar(raw), origin=f"--set {dotted}")
        sources[dotted] = f"--set {dotted}"
    kinds = [*([str(path)] if path else []), *(["environment"] if any(not s.startswith("--") for s in sources.values()) else []),
             *(["--set"] if any(s.startswith("--") for s in sources.values()) else [])]
    return parse_config(data, origin=", ".join(kinds) or "defaults", sources=sources)


def environment_option(key: str) -> str | None:
    """The dotted option an environment variable sets, or None when it sets none.

    Options are RAGPULSE_<SECTION>__<OPTION> (or RAGPULSE_<SECTION>, a whole section as a flow mapping): those
    are read, and an unknown section or option among them is an error that names the variable. Other RAGPULSE_
    names (the project's scripts' RAGPULSE_VENV, RAGPULSE_KAFKA_HOME, ...) are not options and are not read,
    except one that is an option written with a single underscore (RAGPULSE_HTTP_PORT): that typo is an error."""
    if not key.startswith(ENV_PREFIX) or key == ENV_CONFIG_FILE:
        return None
    name = key[len(ENV_PREFIX) :].lower()
    sections = {f.name: f.type for f in msgspec.structs.fields(Config)}
    if "__" in name or name in sections:
        return name.replace("__", ".")
    for section, section_type in sections.items():
        option = name.removeprefix(f"{section}_")
        if option != name and option in {f.name for f in msgspec.structs.fields(section_type)}:
            raise ConfigError([ConfigProblem(f"{section}.{option}", f"{key} is no option: an option's variable is "
                                             f"RAGPULSE_<SECTION>__<OPTION>; did you mean {ENV_PREFIX}{section.upper()}__"
                                             f"{option.upper()}?")], "environment")
    return None


def ignored_environment(environ: Mapping[str, str] | None = None) -> list[str]:
    """The RAGPULSE_ variables that name no option and are not read (the config file's aside), sorted."""
    environ = os.environ if environ is None else environ
    return sorted(key for key in environ if key.startswith(ENV_PREFIX) and key != ENV_CONFIG_FILE
                  and environment_option(key) is None)


def parse_config(data: Any, *, origin: str = "config", sources: Mapping[str, str] | None = None) -> Config:
    if data is None:
        data = {}
    problems = _option_problems(data) if isinstance(data, dict) else []
    if problems:  # the checks across options too, on what is left without the wrong ones
        data = _without(data, {problem.path.split("[")[0] for problem in problems})
    try:
        config = msgspec.convert(data, Config, strict=False)
    except msgspec.ValidationError as exc:
        problems.append(_problem_from_msgspec(str(exc)))
    else:
        problems.extend(config.validate())
    if problems:
        raise ConfigError([_with_source(problem, sources or {}) for problem in problems], origin)
    return config


def _without(data: dict[str, Any], paths: set[str]) -> dict[str, Any]:
    """`data` without the sections and options at `paths` (dotted, as the problems name them)."""
    kept: dict[str, Any] = {}
    for section, options in data.items():
        if section in paths:
            continue
        kept[section] = ({option: value for option, value in options.items() if f"{section}.{option}" not in paths}
                         if isinstance(options, dict) else options)
    return kept


def _option_problems(data: dict[str, Any]) -> list[ConfigProblem]:
    """Every option's problem, not only the first: each option is checked on its own."""
    problems: list[ConfigProblem] = []
    sections = {f.name: f.type for f in msgspec.structs.fields(Config)}
    defaults = Config()
    for section, options in data.items():
        if section not in sections:
            hint = difflib.get_close_matches(section, list(sections), n=1)
            problems.append(ConfigProblem(section, f"unknown section {section!r}" + (
                f"; did you mean {hint[0]!r}?" if hint else f" (known: {', '.join(sections)})")))
            continue
        if not isinstance(options, dict):
            problems.append(ConfigProblem(section, f"must be a mapping of options, got {type(options).__name__}"))
            continue
        section_type = sections[section]
        option_types = {f.name: f.type for f in msgspec.structs.fields(section_type)}
        for option, value in options.items():
            try:
                msgspec.convert({option: value}, section_type, strict=False)
            except msgspec.ValidationError as exc:
                problem = _problem_from_msgspec(str(exc).replace("`$", f"`$.{section}", 1) if "`$" in str(exc)
                                                else f"{exc} - at `$.{section}`")
                problems.append(_with_example(problem, f"{section}.{option}", getattr(getattr(defaults, section), option, None)))
                continue
            if isinstance(value, float) and _is_int(option_types.get(option)):
                # Lax conversion would take 9000.0 for 9000; a config that says 9000.0 means something else.
                problems.append(ConfigProblem(f"{section}.{option}", f"expected a whole number, got {value!r}"))
    return problems


def _is_int(annotation: Any) -> bool:
    origin = getattr(annotation, "__origin__", None)
    if origin is not None and getattr(annotation, "__metadata__", None) is not None:  # Annotated[int, Meta]
        return _is_int(origin)
    args = getattr(annotation, "__args__", None)
    if args and type(None) in args:  # int | None
        return any(_is_int(arg) for arg in args if arg is not type(None))
    return annotation is int


def _with_example(problem: ConfigProblem, path: str, default: Any) -> ConfigProblem:
    """A wrong type gets what a right value looks like: the option's default."""
    if problem.path != path or not problem.message.startswith("Expected") or default is None:
        return problem
    example = msgspec.json.encode(msgspec.to_builtins(default)).decode()
    return ConfigProblem(problem.path, f"{problem.message}; for example {example} (the default)")


def _with_source(problem: ConfigProblem, sources: Mapping[str, str]) -> ConfigProblem:
    """A problem in an option set by an environment variable or --set names it."""
    for dotted, source in sources.items():
        if problem.path == dotted or problem.path.startswith(dotted + ".") or dotted.startswith(problem.path + "."):
            return ConfigProblem(problem.path, f"{problem.message} (from {source})")
    return problem


def default_config_dict() -> dict[str, Any]:
    return msgspec.to_builtins(Config())


def _read_yaml(path: Path) -> dict[str, Any]:
    try:
        text = path.read_text(encoding="utf-8")
    except OSError as exc:
        raise ConfigError([ConfigProblem("", f"cannot read file: {exc.strerror}")], str(path)) from None
    try:
        data = yaml.safe_load(text)
    except yaml.YAMLError as exc:
        mark = getattr(exc, "problem_mark", None)
        where = f" at line {mark.line + 1}, column {mark.column + 1}" if mark else ""
        problem = getattr(exc, "problem", None) or str(exc)
        raise ConfigError([ConfigProblem("", f"invalid YAML{where}: {problem}")], str(path)) from None
    if data is None:
        return {}
    if not isinstance(data, dict):
        raise ConfigError(
            [ConfigProblem("", f"the file must hold a mapping of sections, got {type(data).__name__}")],
            str(path),
        )
    return data


def _parse_scalar(raw: str) -> Any:
    # Lists and maps are written in YAML flow style (`[app, route]`), no value as null; other
    # values stay strings and msgspec's lax mode converts them, so "0123" stays a string.
    if raw.strip() == "null":
        return None
    if raw.lstrip().startswith(("[", "{")):
        try:
            return yaml.safe_load(raw)
        except yaml.YAMLError:
            return raw
    return raw


def _set_path(data: dict[str, Any], dotted: str, value: Any, *, origin: str) -> None:
    keys = dotted.split(".")
    node = data
    for key in keys[:-1]:
        child = node.setdefault(key, {})
        if not isinstance(child, dict):
            raise ConfigError([ConfigProblem(dotted, f"{key!r} is not a section")], origin)
        node = child
    node[keys[-1]] = value


_MSGSPEC_ERROR = re.compile(r"^(?P<message>.*?)(?: - at `\$(?P<path>[^`]*)`)?$", re.S)
_UNKNOWN_FIELD = re.compile(r"Object contains unknown field `(?P<name>[^`]+)`")


def _problem_from_msgspec(text: str) -> ConfigProblem:
    match = _MSGSPEC_ERROR.match(text)
    assert match is not None  # the pattern matches any string
    message, raw_path = match["message"], match["path"] or ""
    path = raw_path.lstrip(".")
    unknown = _UNKNOWN_FIELD.match(message)
    if unknown:
        name = unknown["name"]
        known = _fields_at(raw_path)
        hint = difflib.get_close_matches(name, known, n=1)
        message = f"unknown option {name!r}" + (f"; did you mean {hint[0]!r}?" if hint else "")
        message += f" (known: {', '.join(known)})" if known and not hint else ""
        path = f"{path}.{name}" if path else name
    return ConfigProblem(path, message)


def _fields_at(raw_path: str) -> list[str]:
    """Option names of the struct at a msgspec path like `.http` or `.fallback.rules[0]`."""
    struct_type: Any = Config
    for part in re.findall(r"\.(\w+)", raw_path):
        field_types = {f.name: f.type for f in msgspec.structs.fields(struct_type)}
        struct_type = field_types.get(part)
        args = getattr(struct_type, "__args__", ())
        if args and isinstance(args[0], type) and issubclass(args[0], msgspec.Struct):
            struct_type = args[0]  # list[FallbackRule] -> FallbackRule
        if not (isinstance(struct_type, type) and issubclass(struct_type, msgspec.Struct)):
            return []
    return [f.name for f in msgspec.structs.fields(struct_type)]
