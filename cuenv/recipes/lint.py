"""Reads a recipe file and reports every problem in it, each with file, key path and line (STYLE.md §8).

The structure rules live in one place, ``cuenv/recipes/recipe.schema.json``: this module interprets the
subset of JSON Schema that file uses (type, properties, required, additionalProperties,
patternProperties, pattern, enum, items, min/max counts, uniqueItems, oneOf, $ref), so editors that
validate with the schema and ``cuenv recipes lint`` agree. Rules a schema cannot state (the name
matches the file, versions are valid PEP 440, overrides name supported versions, ...) follow in
``_semantics``. Line numbers come from the YAML nodes' marks; when there is no node (a missing key at
the top level) there is no line, and none is invented.
"""

from __future__ import annotations

import difflib
import json
import re
from dataclasses import asdict, dataclass, field
from functools import lru_cache
from pathlib import Path
from typing import TYPE_CHECKING, Any, Final, Iterable

if TYPE_CHECKING:
    import yaml
    from yaml.constructor import SafeConstructor

SCHEMA_PATH: Final = Path(__file__).with_name("recipe.schema.json")
NAME_RE: Final = re.compile(r"^[A-Za-z0-9][A-Za-z0-9._-]{0,63}$")
PLACEHOLDER_RE: Final = re.compile(r"\{([^{}]*)\}")

Path_ = tuple[str | int, ...]  # a key path: ("install", "venv", "requirements", 2)
Schema = dict[str, Any]  # a part of recipe.schema.json, as parsed JSON


@dataclass(frozen=True)
class Problem:
    file: str
    key: str  # "install.venv.requirements[2]"; "" for the whole file
    line: int | None  # 1-based; None when no node holds the problem
    code: str  # yaml | duplicate-key | unknown-key | missing | wrong-type | bad-value | bad-name | bad-version
    message: str

    def __str__(self) -> str:
        where = f"{self.file}:{self.line}" if self.line else self.file
        return f"{where}: {self.key + ': ' if self.key else ''}{self.message}"

    def to_json(self) -> dict[str, str | int | None]:
        return asdict(self)


@dataclass
class Problems:
    """Collects every problem of one file; ``lint`` lists them all, loading raises at the first."""

    file: str
    lines: dict[Path_, int] = field(default_factory=dict)  # key path -> line
    items: list[Problem] = field(default_factory=list)

    def add(self, path: Path_, code: str, message: str, *, line: int | None = None) -> None:
        if line is None:
            line = self.line_of(path)
        self.items.append(Problem(self.file, key_text(path), line, code, message))

    def line_of(self, path: Path_) -> int | None:
        return self.lines.get(tuple(path))

    def __bool__(self) -> bool:
        return bool(self.items)

    def __len__(self) -> int:
        return len(self.items)


def key_text(path: Path_) -> str:
    out = ""
    for part in path:
        if isinstance(part, int):
            out += f"[{part}]"
        elif re.fullmatch(r"[A-Za-z_][A-Za-z0-9_-]*", part):
            out += ("." if out else "") + part
        else:
            out += f"[{json.dumps(part)}]"
    return out


# ---------------------------------------------------------------------------------------------
# YAML -> plain data plus a line for every key path (so duplicate keys are seen, not lost)
# ---------------------------------------------------------------------------------------------

def load_yaml(text: str, problems: Problems) -> Any:
    """Parse ``text``; broken YAML and duplicate keys go to ``problems``. Returns the data (None if broken)."""
    import yaml

    from cuenv.trust import limits

    loader_cls = limits.safe_loader()
    too_big = limits.yaml_shape_problem(text)  # first: libyaml's composer recurses in C (issue 14)
    if too_big is not None:
        problems.add((), "yaml", f"the file {too_big}")
        return None
    try:
        node = yaml.compose(text, Loader=loader_cls)
    except yaml.MarkedYAMLError as exc:
        mark = exc.problem_mark or exc.context_mark
        what = " ".join(p for p in (exc.context, exc.problem) if p) or "invalid YAML"
        problems.add((), "yaml", f"not valid YAML: {what}", line=mark.line + 1 if mark else None)
        return None
    except yaml.YAMLError as exc:  # a ReaderError (a control character): its first line says it
        problems.add((), "yaml", f"not valid YAML: {(str(exc).splitlines() or ['?'])[0]}")
        return None
    if node is None:
        return None
    constructor = yaml.constructor.SafeConstructor()
    return _build(node, (), problems, constructor)


def _build(node: yaml.Node, path: Path_, problems: Problems, constructor: SafeConstructor) -> Any:
    import yaml

    problems.lines.setdefault(path, node.start_mark.line + 1)
    if isinstance(node, yaml.MappingNode):
        out: dict[str, Any] = {}
        seen: dict[str, int] = {}
        constructor.flatten_mapping(node)  # resolves "<<" merge keys
        for key_node, value_node in node.value:
            key = _scalar(key_node, constructor)
            line = key_node.start_mark.line + 1
            if not isinstance(key, str):
                problems.add(path, "wrong-type", f"key {key!r} must be a string; quote it: \"{key}\"", line=line)
                continue
            if key in seen:
                problems.add(path + (key,), "duplicate-key",
                             f"duplicate key {key!r} (first at line {seen[key]})", line=line)
                continue
            seen[key] = line
            problems.lines[path + (key,)] = line
            out[key] = _build(value_node, path + (key,), problems, constructor)
        return out
    if isinstance(node, yaml.SequenceNode):
        return [_build(item, path + (i,), problems, constructor) for i, item in enumerate(node.value)]
    return _scalar(node, constructor)


def _scalar(node: yaml.Node, constructor: SafeConstructor) -> Any:
    import yaml

    if not isinstance(node, yaml.ScalarNode):
        return repr(node.tag)  # a mapping used as a key: reported as a non-string key
    try:
        return constructor.construct_object(node, deep=True)
    except (yaml.constructor.ConstructorError, ValueError):  # ValueError: an integer of 5,000 digits
        return node.value


# ---------------------------------------------------------------------------------------------
# The schema interpreter
# ---------------------------------------------------------------------------------------------

@lru_cache(maxsize=1)
def schema() -> Schema:
    parsed: Schema = json.loads(SCHEMA_PATH.read_text(encoding="utf-8"))
    return parsed


_TYPE_NAMES: Final = {"object": "a mapping", "array": "a list", "string": "a string", "boolean": "true or false",
                      "null": "null", "integer": "an integer", "number": "a number"}


def _type_of(value: Any) -> str:
    if value is None:
        return "null"
    if isinstance(value, bool):
        return "boolean"
    if isinstance(value, dict):
        return "object"
    if isinstance(value, list):
        return "array"
    if isinstance(value, str):
        return "string"
    if isinstance(value, int):
        return "integer"
    if isinstance(value, float):
        return "number"
    return type(value).__name__


def _resolve(sub: Schema) -> Schema:
    while "$ref" in sub:
        target: Any = schema()
        for part in sub["$ref"].lstrip("#/").split("/"):
            target = target[part]
        merged = {k: v for k, v in sub.items() if k != "$ref"}
        sub = {**target, **merged}
    return sub


def validate_schema(value: Any, problems: Problems, sub: Schema | None = None, path: Path_ = ()) -> None:
    """Check ``value`` against the schema (or one of its parts), adding a problem for each violation."""
    sub = _resolve(schema() if sub is None else sub)
    what = sub.get("x-what")
    if "oneOf" in sub:
        passing = 0
        for branch in sub["oneOf"]:
            trial = Problems(problems.file, problems.lines)
            validate_schema(value, trial, branch, path)
            passing += not trial
        if passing != 1:
            problems.add(path, "bad-value", f"{_show(value)} is not a valid {what or 'value'}")
        return
    types = sub.get("type")
    if types is not None:
        allowed = [types] if isinstance(types, str) else list(types)
        actual = _type_of(value)
        if actual not in allowed and not (actual == "integer" and "number" in allowed):
            expected = " or ".join(_TYPE_NAMES.get(t, t) for t in allowed)
            hint = ""
            if "string" in allowed and actual in {"number", "integer"}:
                hint = f"; quote it: \"{value}\""
            problems.add(path, "wrong-type", f"expected {expected}, got {_TYPE_NAMES.get(actual, actual)}{hint}")
            return
    if isinstance(value, dict):
        _validate_mapping(value, problems, sub, path)
    elif isinstance(value, list):
        _validate_list(value, problems, sub, path)
    elif isinstance(value, str):
        _validate_string(value, problems, sub, path, what)


def _validate_mapping(value: dict[str, Any], problems: Problems, sub: Schema, path: Path_) -> None:
    props = sub.get("properties", {})
    for name in sub.get("required", ()):
        if name not in value:
            # The line of the enclosing key, when there is one; the top level has none.
            problems.add(path + (name,), "missing", f"missing required key {name!r}",
                         line=problems.line_of(path) if path else None)
    count = len(value)
    if "minProperties" in sub and count < sub["minProperties"]:
        names = ", ".join(props) if props else "one entry"
        problems.add(path, "missing", f"needs at least {sub['minProperties']} of: {names}")
    if "maxProperties" in sub and count > sub["maxProperties"]:
        problems.add(path, "bad-value", f"takes at most {sub['maxProperties']} of: {', '.join(props)}")
    patterns = sub.get("patternProperties", {})
    for key, item in value.items():
        if key in props:
            validate_schema(item, problems, props[key], path + (key,))
            continue
        matched = [p for p in patterns if re.search(p, key)]
        if matched:
            for p in matched:
                validate_schema(item, problems, patterns[p], path + (key,))
            continue
        extra = sub.get("additionalProperties", True)
        if extra is False:
            if props:
                close = difflib.get_close_matches(key, list(props), n=1, cutoff=0.6)
                hint = f" (did you mean {close[0]!r}?)" if close else f" (known keys: {', '.join(props)})"
                problems.add(path + (key,), "unknown-key", f"unknown key {key!r}{hint}")
            else:
                problems.add(path + (key,), "bad-name", f"{key!r} is not a valid {sub.get('x-what', 'key')}")
        elif isinstance(extra, dict):
            validate_schema(item, problems, extra, path + (key,))


def _validate_list(value: list[Any], problems: Problems, sub: Schema, path: Path_) -> None:
    if "minItems" in sub and len(value) < sub["minItems"]:
        problems.add(path, "missing", f"needs at least {sub['minItems']} item{'s' if sub['minItems'] > 1 else ''}")
    if sub.get("uniqueItems"):
        seen: list[object] = []
        for i, item in enumerate(value):
            if item in seen:
                problems.add(path + (i,), "bad-value", f"{_show(item)} is listed twice")
            seen.append(item)
    if "items" in sub:
        for i, item in enumerate(value):
            validate_schema(item, problems, sub["items"], path + (i,))


def _validate_string(value: str, problems: Problems, sub: Schema, path: Path_, what: str | None) -> None:
    if "enum" in sub and value not in sub["enum"]:
        close = difflib.get_close_matches(value, sub["enum"], n=1, cutoff=0.6)
        hint = f" (did you mean {close[0]!r}?)" if close else f" (choose one of: {', '.join(sub['enum'])})"
        problems.add(path, "bad-value", f"{_show(value)} is not a valid {what or 'value'}{hint}")
        return
    if "pattern" in sub and not re.search(sub["pattern"], value):
        code = "bad-name" if path == ("name",) else "bad-version" if "version" in (what or "") or "capability" in (
            what or "") else "bad-value"
        problems.add(path, code, f"{_show(value)} is not a valid {what or 'value'}")
    if "minLength" in sub and len(value) < sub["minLength"]:
        problems.add(path, "missing", "must not be empty")
    if "maxLength" in sub and len(value) > sub["maxLength"]:
        problems.add(path, "bad-value", f"is longer than {sub['maxLength']} characters")


def _show(value: Any) -> str:
    return json.dumps(value) if isinstance(value, (str, int, float, bool)) or value is None else repr(value)


# ---------------------------------------------------------------------------------------------
# Rules beyond the schema
# ---------------------------------------------------------------------------------------------

def _semantics(data: dict[str, Any], problems: Problems, stem: str | None, thorough: bool, trusted_env: tuple[str, ...] = ()) -> None:
    # packaging.requirements and .specifiers cost ~15 ms to import: only the linter pays for them; loading
    # for `cuenv check` skips those two rules (engines parse requirements again when they install).
    from packaging.version import InvalidVersion, Version

    name = data.get("name")
    if isinstance(name, str) and stem is not None and NAME_RE.match(name) and name != stem:
        problems.add(("name",), "bad-name", f"name {name!r} does not match the file name {stem + '.yaml'!r}; "
                                            f"rename one so they agree")

    framework = data.get("framework")
    versions: list[str] = []
    if isinstance(framework, dict):
        default = framework.get("version")
        listed = framework.get("versions")
        versions = [v for v in (listed if isinstance(listed, list) else [default]) if isinstance(v, str)]
        for path, v in [(("framework", "version"), default)] + [
                (("framework", "versions", i), v) for i, v in enumerate(listed if isinstance(listed, list) else [])]:
            if isinstance(v, str):
                try:
                    Version(v)
                except InvalidVersion:
                    problems.add(path, "bad-version", f"{v!r} is not a valid PEP 440 version")
        if isinstance(default, str) and isinstance(listed, list) and default not in listed:
            problems.add(("framework", "version"), "bad-version",
                         f"default version {default!r} is not in framework.versions ({', '.join(map(str, listed))})")

    for key, python in ([(("python",), data.get("python"))] if thorough else []) + [
            (("overrides", v, "python"), o.get("python")) for v, o in _dict(data.get("overrides")).items()
            if isinstance(o, dict) and thorough]:
        if not isinstance(python, dict) or not isinstance(python.get("supported"), str):
            continue
        from packaging.specifiers import InvalidSpecifier, SpecifierSet

        try:
            spec = SpecifierSet(python["supported"])
        except InvalidSpecifier:
            problems.add(key + ("supported",), "bad-version",
                         f"{python['supported']!r} is not a valid version specifier (e.g. \">=3.9,<3.13\")")
            continue
        default_py = python.get("default")
        if isinstance(default_py, str) and re.fullmatch(r"3\.\d{1,2}", default_py) and default_py not in spec:
            problems.add(key + ("default",), "bad-version",
                         f"default Python {default_py} is outside supported {python['supported']!r}")

    overrides = _dict(data.get("overrides"))
    if overrides and not isinstance(framework, dict):
        problems.add(("overrides",), "bad-value", "overrides need a framework with versions")
    elif overrides:
        for v in overrides:
            if v not in versions:
                problems.add(("overrides", v), "bad-version",
                             f"{v!r} is not one of framework.versions ({', '.join(versions)})")

    arch_parts = [(("arch",), data.get("arch"))] + [
        (("overrides", v, "arch"), o.get("arch")) for v, o in overrides.items() if isinstance(o, dict)]
    for key, arch in arch_parts:
        if isinstance(arch, dict) and not arch.get("sass") and not arch.get("ptx"):
            problems.add(key, "missing", "lists no compute capability: give sass, ptx or both")

    from cuenv.trust import envvars
    from cuenv.trust import requirements as trusted

    for var, value in _dict(data.get("env")).items():  # shared input: the allowlist (issue 14)
        why = envvars.name_problem(var, extra=trusted_env)
        if why is not None:
            problems.add(("env", var), "bad-name", f"a recipe cannot set it: {why}")
        elif isinstance(value, str) and envvars.value_problem(var, value):
            problems.add(("env", var), "bad-value", str(envvars.value_problem(var, value)))

    for engine, section in _dict(data.get("install")).items():
        if not isinstance(section, dict):
            continue
        engine_versions = section.get("versions")
        if isinstance(engine_versions, list):
            if not isinstance(framework, dict):
                problems.add(("install", engine, "versions"), "bad-value", "versions need a framework")
            for i, v in enumerate(engine_versions):
                if isinstance(v, str) and v not in versions:
                    problems.add(("install", engine, "versions", i), "bad-version",
                                 f"{v!r} is not one of framework.versions ({', '.join(versions)})")
        list_key = "requirements" if engine == "venv" else "specs"
        for i, text in enumerate(_list(section.get(list_key))):
            if not isinstance(text, str):
                continue
            at: tuple[str | int, ...] = ("install", engine, list_key, i)
            bad = [p for p in PLACEHOLDER_RE.findall(text) if p != "version"]
            if bad:
                problems.add(at, "bad-value", f"unknown placeholder {{{bad[0]}}} (only {{version}} is known)")
                continue
            if "{version}" in text and not isinstance(framework, dict):
                problems.add(at, "bad-value", "{version} needs a framework")
                continue
            sample = text.replace("{version}", versions[0] if versions else "0")
            why = (trusted.requirement_problem(sample, parse=thorough) if engine == "venv"
                   else trusted.conda_spec_problem(sample))
            if why is not None:
                problems.add(at, "bad-value", f"{text!r} {why}")
        for i, channel in enumerate(_list(section.get("channels")) if engine == "conda" else ()):
            why = trusted.channel_problem(channel) if isinstance(channel, str) else None
            if why is not None:
                problems.add(("install", engine, "channels", i), "bad-value", f"{channel!r} {why}")


def _list(value: object) -> list[object]:
    return value if isinstance(value, list) else []


def _dict(value: object) -> dict[str, object]:
    return value if isinstance(value, dict) else {}


# ---------------------------------------------------------------------------------------------
# Entry points
# ---------------------------------------------------------------------------------------------

def check_text(text: str, file: str, *, stem: str | None = None, thorough: bool = True,
               trusted_env: Iterable[str] = ()) -> tuple[dict[str, Any] | None, Problems]:
    """Parse and validate one recipe's text. Returns (data, problems); data is None when not a mapping.

    ``thorough=False`` (loading) skips parsing requirement strings and Python specifiers."""
    problems = Problems(file)
    data = load_yaml(text, problems)
    if problems and data is None:
        return None, problems
    if not isinstance(data, dict):
        problems.add((), "wrong-type", "a recipe must be a mapping of keys (name, summary, cuda, ...)",
                     line=problems.line_of(()))
        return None, problems
    validate_schema(data, problems)
    _semantics(data, problems, stem, thorough, tuple(trusted_env))
    return data, problems


def lint_file(path: Path, *, trusted_env: Iterable[str] = ()) -> list[Problem]:
    """Every problem of one recipe file (an unreadable, oversized or non-UTF-8 file is one problem)."""
    from cuenv.errors import NotFound
    from cuenv.trust import Untrusted, limits

    problems = Problems(str(path))
    try:
        text = limits.read_text(path, what="Recipe file", limit=limits.RECIPE)
    except NotFound:
        problems.add((), "io", "no such file")
        return problems.items
    except Untrusted as exc:
        why = exc.message.replace(f"Cannot read recipe file {path}: ", "cannot read: ").replace(f"Recipe file {path} ", "")
        problems.add((), "io", why.rstrip("."))
        return problems.items
    stem = path.name[:-5] if path.name.endswith(".yaml") else path.stem
    _, found = check_text(text, str(path), stem=stem, trusted_env=trusted_env)
    return sorted(found.items, key=lambda p: (p.line or 0, p.key))
