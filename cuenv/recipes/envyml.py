"""conda's environment.yml as conda reads it, parsed into data (issue 15 §1). Pure apart from reading files.

Keys: ``name``, ``channels``, ``dependencies`` (match specs, and ``pip:`` lists: conda installs the last), ``variables``;
``prefix`` is ignored (cuenv decides where environments live) but for what it tells (a Windows path: the
file was exported on Windows), as are keys conda itself ignores.

Channels follow conda: ``nodefaults`` removes ``defaults``; ``defaults`` is Anaconda's own repository
(``repo.anaconda.com``: pkgs/main and pkgs/r, under Anaconda's terms of service), listed where it
stands; a file without ``channels:`` gets ``defaults``, as a stock conda configuration gives it. Unlike
``conda env create``, no channel from a user's ``.condarc`` is added: the file alone decides (conda's
``--override-channels``). A spec's own channel (``pytorch::pytorch-cuda=11.8``) is searched as well,
as conda does.

Every spec is validated with rattler's MatchSpec parser (the one the rattler engine solves with) and
every refusal names the line.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Final

from cuenv.recipes.pipreqs import RequestFileError, RequirementsFile, Where, parse_lines

if TYPE_CHECKING:
    import yaml

# What ``defaults`` means on Linux and macOS (conda's DEFAULT_CHANNELS_UNIX).
DEFAULTS: Final = ("https://repo.anaconda.com/pkgs/main", "https://repo.anaconda.com/pkgs/r")
DEFAULTS_NOTE: Final = ("`defaults` is Anaconda's repository (repo.anaconda.com, pkgs/main and pkgs/r), whose "
                        "terms of service may require a paid licence for organisations; to use only "
                        "community channels, replace `defaults` with `nodefaults` in the file")
_KNOWN_KEYS: Final = ("name", "channels", "dependencies", "variables", "prefix")


@dataclass(frozen=True)
class CondaSpec:
    """One conda dependency as written, and what rattler's parser reads in it."""

    text: str  # as written (the engines get this)
    name: str
    version: str | None = None  # rattler's reading: "11.8.*", ">=3.8", "==1.11.0"
    build: str | None = None  # "py3.9_cuda11.3*", "*cuda*"
    channel: str | None = None  # "pytorch" for pytorch::pytorch-cuda
    where: Where = field(default_factory=lambda: Where("<environment.yml>"))


@dataclass(frozen=True)
class EnvironmentFile:
    name: str | None
    channels: tuple[str, ...]  # in priority order, ``defaults`` expanded, spec channels appended
    specs: tuple[CondaSpec, ...]
    pip: RequirementsFile | None  # the ``pip:`` section, installed after the conda packages
    variables: tuple[tuple[str, str], ...] = ()
    file: str = "environment.yml"
    notes: tuple[str, ...] = ()
    windows_prefix: Where | None = None  # `prefix: C:\\...`: `conda env export` ran on Windows

    def spec(self, name: str) -> CondaSpec | None:
        return next((s for s in self.specs if s.name == name), None)

    @property
    def exported(self) -> bool:
        """Whether every conda package is pinned to one version and build (``name=1.0=h1234_0``), as `conda env
        export` writes an environment that existed."""
        return bool(self.specs) and all(s.build and not any(c in s.build for c in "*?[") and s.version
                                        and s.version.startswith("==") for s in self.specs)

    @property
    def kind(self) -> str:
        """conda (conda packages only), mixed (conda + pip) or pip (a ``pip:`` list and Python alone)."""
        names = {s.name for s in self.specs} - {"python", "pip"}
        if self.pip and self.pip.requirements and not names:
            return "pip"
        return "mixed" if self.pip and self.pip.requirements else "conda"


def parse_file(path: Path) -> EnvironmentFile:
    from cuenv.trust import limits

    # shared input (issue 14); conda reads one written as UTF-16 too (conda.env.env.load_file)
    text = limits.read_text(path, what="Environment file", limit=limits.REQUEST_FILE, marked=True)
    return parse_text(text, file=str(path), base=path.resolve().parent)


def parse_text(text: str, *, file: str = "environment.yml", base: Path | None = None) -> EnvironmentFile:
    """``base``: the folder the file is in (``pip:`` entries such as ``-r requirements.txt`` resolve there)."""
    root = _compose(text, file)
    if not isinstance(root, _Map):
        raise RequestFileError(Where(file, root.line if root else None), "the document",
                               "is not a conda environment file (no `dependencies:` mapping at the top).",
                               hint="An environment.yml has `name:`, `channels:` and `dependencies:` keys.")
    notes: list[str] = []
    for key, (_node, line) in root.items.items():
        if key not in _KNOWN_KEYS:
            notes.append(f"{file}:{line}: key `{key}` is ignored (conda ignores it too).")
    name = _scalar(root.get("name"), file, "name")
    windows_prefix = None
    if "prefix" in root.items:
        prefix = root.get("prefix")
        if isinstance(prefix, _Scalar) and re.match(r"^(?:[A-Za-z]:[\\/]|\\\\)", prefix.value):
            windows_prefix = Where(file, root.items["prefix"][1])
        notes.append(f"{file}:{root.items['prefix'][1]}: `prefix:` is ignored; cuenv keeps environments in its "
                     "own folder (`cuenv list` shows where).")
    channels = _channels(root.get("channels"), root.items.get("channels", (None, None))[1], file, notes)
    deps_node = root.get("dependencies")
    if deps_node is None:
        raise RequestFileError(Where(file), "dependencies", "is missing: the file lists no packages.",
                               hint="Add a `dependencies:` list.")
    if not isinstance(deps_node, _Seq):
        raise RequestFileError(Where(file, deps_node.line), "dependencies", "must be a list.",
                               hint="Write one `- spec` per line under `dependencies:`.")
    specs: list[CondaSpec] = []
    pip: RequirementsFile | None = None
    pip_lists: list[tuple[_Node, Where]] = []
    for item in deps_node.items:
        where = Where(file, item.line)
        if isinstance(item, _Scalar):
            specs.append(parse_spec(item.value, where))
        elif isinstance(item, _Map) and set(item.items) == {"pip"}:
            pip_lists.append((item.items["pip"][0], where))
        else:
            keys = ", ".join(item.items) if isinstance(item, _Map) else "a list"
            raise RequestFileError(where, f"dependency ({keys})", "is neither a package spec nor a `pip:` list.",
                                   hint="Write `- name=version` for a conda package, or `- pip: [...]`.")
    if pip_lists:
        # conda reads `dependencies` into a dict, one `pip` key: each `pip:` list replaces the one before
        # (conda.env.env.Dependencies.parse), so conda installs the last list only. cuenv reads it the same
        # way, and says which lines conda leaves out.
        node, where = pip_lists[-1]
        pip = _pip_section(node, where, file, base)
        if len(pip_lists) > 1:
            dropped = ", ".join(str(w.line) for _, w in pip_lists[:-1])
            notes.append(f"{where}: the file has {len(pip_lists)} `pip:` lists; conda installs only the last one "
                         f"(this one) and ignores those at line{'s' if len(pip_lists) > 2 else ''} {dropped}, and so "
                         "does cuenv. Merge them into one list if all are meant.")
    for spec in specs:
        if spec.channel and spec.channel not in channels and _channel_url(spec.channel) not in channels:
            channels = (*channels, spec.channel)
    if pip is not None and not any(s.name == "pip" for s in specs):
        notes.append(f"{file}: has a `pip:` section but no `pip` dependency; conda would warn, cuenv installs "
                     "the pip packages with uv, which needs no pip.")
    variables = _variables(root.get("variables"), file)
    return EnvironmentFile(name=name, channels=channels, specs=tuple(specs), pip=pip, variables=variables,
                           file=file, notes=tuple(notes) + (pip.notes if pip else ()), windows_prefix=windows_prefix)


def parse_spec(text: str, where: Where) -> CondaSpec:
    """One match spec, in any form conda accepts: ``name``, ``name=1.2``, ``name==1.2.*``, ``name 1.2 build``,
    ``name=1.2=build``, ``name>=1,<2``, ``name[version='>=1']``, ``channel::name...``, ``chan/subdir::name``."""
    import rattler
    from rattler.exceptions import InvalidMatchSpecError

    text = text.strip()
    if not text:
        raise RequestFileError(where, "an empty dependency", "names no package.", hint="Remove the empty entry.")
    try:
        spec = rattler.MatchSpec(text)
    except (InvalidMatchSpecError, ValueError, TypeError) as exc:
        first = str(exc).strip().splitlines()
        reason = first[-1].strip() if first else "invalid"
        # rattler's strict reading; conda's own parser is more lenient (it reads `python=>3.11` as `>3.11*`),
        # so this says what cuenv cannot read, not that conda cannot (held-out-14)
        raise RequestFileError(where, repr(text), f"is a match spec cuenv cannot read ({reason}), though conda's "
                               "lenient parser may accept it.",
                               hint="Write it like `cudatoolkit=11.8`, `pytorch::pytorch-cuda=11.8`, "
                               "`pytorch 2.1.* *cuda*` or `numpy>=1.24,<2`.") from None
    if spec.name is None:
        raise RequestFileError(where, repr(text), "names no package.", hint="Start the spec with a package name.")
    channel = spec.channel.name if spec.channel is not None else None
    if channel and "://" in text.split("::", 1)[0]:
        channel = text.split("::", 1)[0]
    version = str(spec.version) if spec.version is not None else None
    build = str(spec.build) if spec.build is not None else None
    return CondaSpec(text=text, name=spec.name.normalized, version=version, build=build, channel=channel, where=where)


def expand_channels(listed: list[str]) -> tuple[tuple[str, ...], bool]:
    """conda's channel list: ``nodefaults`` drops ``defaults``; ``defaults`` becomes Anaconda's URLs.
    Returns (channels, whether Anaconda's repository is among them)."""
    no_defaults = "nodefaults" in listed
    out: list[str] = []
    anaconda = False
    for c in listed:
        if c == "nodefaults" or (c == "defaults" and no_defaults):
            continue
        if c == "defaults":
            out.extend(DEFAULTS)
            anaconda = True
        else:
            out.append(c)
    return tuple(dict.fromkeys(out)), anaconda


def _channel_url(name: str) -> str:
    return name if "://" in name else f"https://conda.anaconda.org/{name}"


def _channels(node: _Node | None, line: int | None, file: str, notes: list[str]) -> tuple[str, ...]:
    if node is None:
        notes.append(f"{file}: lists no `channels:`; conda then uses `defaults`, and so does cuenv. {DEFAULTS_NOTE}.")
        return DEFAULTS
    items = node.items if isinstance(node, _Seq) else []
    named = [i for i in items if isinstance(i, _Scalar) and i.value.strip()]
    if not isinstance(node, _Seq) or len(named) != len(items):
        raise RequestFileError(Where(file, line), "channels", "must be a list of channel names or URLs.",
                               hint="Write one `- conda-forge` per line.")
    listed = [i.value.strip() for i in named]
    for item in named:
        value = item.value.strip()
        if not (value.replace("/", "").replace("-", "").replace("_", "").replace(".", "").isalnum()
                or value.startswith(("https://", "http://", "file://"))):
            raise RequestFileError(Where(file, item.line), f"channel {value!r}", "is not a channel name or URL.",
                                   hint="Write a name such as conda-forge, or an https:// (or file://) URL.")
        if value.startswith("file://") and _not_a_folder(value):
            # A channel is a folder; `file:///proc/self/environ` would have the solver read that file (issue 31).
            from cuenv.trust.shown import shown

            raise RequestFileError(Where(file, item.line), f"channel {shown(value)!r}", "is a file, not a channel folder.",
                                   hint="Name the channel's folder (the one holding noarch/repodata.json).")
    channels, anaconda = expand_channels(listed)
    if anaconda:
        notes.append(f"{file}:{line}: {DEFAULTS_NOTE}.")
    if not channels:
        raise RequestFileError(Where(file, line), "channels", "leaves no channel once `nodefaults` removes `defaults`.",
                               hint="List a channel, e.g. conda-forge.")
    return channels


def _not_a_folder(url: str) -> bool:
    """A file:// URL that names something other than a folder (a missing one is left to the solver)."""
    import os
    import stat
    import urllib.parse
    import urllib.request

    try:
        mode = os.stat(urllib.request.url2pathname(urllib.parse.urlsplit(url).path)).st_mode
    except (OSError, ValueError):
        return False
    return not stat.S_ISDIR(mode)


def _pip_section(node: _Node | None, where: Where, file: str, base: Path | None) -> RequirementsFile:
    if not isinstance(node, _Seq):
        raise RequestFileError(where, "pip:", "must be a list of requirements.",
                               hint="Write one `- name==version` per line under `- pip:`.")
    lines: list[tuple[int | None, str]] = []
    for item in node.items:
        if not isinstance(item, _Scalar):
            raise RequestFileError(Where(file, item.line), "pip: entry", "is not a requirement line.",
                                   hint="Write each entry as text, e.g. `- torch==2.1.0`.")
        lines.append((item.line, item.value))
    return parse_lines(lines, file=file, base=base)


def _variables(node: _Node | None, file: str) -> tuple[tuple[str, str], ...]:
    if node is None:
        return ()
    if not isinstance(node, _Map):
        raise RequestFileError(Where(file, node.line), "variables", "must be a mapping of NAME: value.",
                               hint="Write `variables:` then one indented line per variable, e.g. `  NCCL_DEBUG: INFO`.")
    out = []
    for key, (value, line) in node.items.items():
        if not isinstance(value, _Scalar):
            raise RequestFileError(Where(file, line), f"variables.{key}", "must be a single value.",
                                   hint=f"Write `{key}: ` and one value.")
        out.append((key, value.value))
    return tuple(out)


def _scalar(node: _Node | None, file: str, key: str) -> str | None:
    if node is None:
        return None
    if not isinstance(node, _Scalar):
        raise RequestFileError(Where(file, node.line), key, "must be a single value.", hint=f"Write `{key}: ` and one value.")
    return node.value or None


# -- YAML with line numbers -------------------------------------------------------------------------
# PyYAML's composer keeps every node's position; the loaded dict would lose them, and a refusal that
# names no line is one the user must hunt for. Only plain YAML is accepted: anchors and aliases (a
# billion-laughs bomb is made of them) and tags other than the standard ones are refused.

@dataclass
class _Scalar:
    value: str
    line: int


@dataclass
class _Seq:
    items: list[_Node]
    line: int


@dataclass
class _Map:
    items: dict[str, tuple[_Node, int]]  # key -> (node, line)
    line: int

    def get(self, key: str) -> _Node | None:
        hit = self.items.get(key)
        return hit[0] if hit else None


_Node = _Scalar | _Seq | _Map


def _compose(text: str, file: str) -> _Node | None:
    import yaml

    try:
        node = yaml.compose(text, Loader=yaml.SafeLoader)
    except yaml.YAMLError as exc:
        mark = getattr(exc, "problem_mark", None)
        raise RequestFileError(Where(file, mark.line + 1 if mark else None), "YAML",
                               f"is broken: {(str(getattr(exc, 'problem', None) or exc).splitlines() or ['?'])[0]}.",
                               hint="Fix the YAML syntax (indentation, a missing colon or quote).") from None
    if node is None:
        return None
    return _convert(node, file, depth=0, seen=set())


def _convert(node: yaml.Node, file: str, *, depth: int, seen: set[int]) -> _Node:
    import yaml

    line = node.start_mark.line + 1
    if depth > 20:
        raise RequestFileError(Where(file, line), "YAML", "nests deeper than an environment file does.",
                               hint="An environment.yml is a flat mapping with two lists.")
    if id(node) in seen:  # the composer hands an alias back as the anchored node itself
        raise RequestFileError(Where(file, line), "a YAML alias (*name)", "is not part of an environment file.",
                               hint="Write the values out instead of referring to an anchor.")
    seen.add(id(node))
    if isinstance(node, yaml.ScalarNode):
        return _Scalar(str(node.value), line)
    if isinstance(node, yaml.SequenceNode):
        return _Seq([_convert(n, file, depth=depth + 1, seen=seen) for n in node.value], line)
    if isinstance(node, yaml.MappingNode):
        items: dict[str, tuple[_Node, int]] = {}
        for key_node, value_node in node.value:
            if not isinstance(key_node, yaml.ScalarNode):
                raise RequestFileError(Where(file, key_node.start_mark.line + 1), "key", "must be plain text.",
                                       hint="Use plain keys such as `dependencies:`.")
            items[str(key_node.value)] = (_convert(value_node, file, depth=depth + 1, seen=seen), key_node.start_mark.line + 1)
        return _Map(items, line)
    raise RequestFileError(Where(file, line), "YAML node", "is not a value, a list or a mapping.",
                           hint="Write plain YAML.")


__all__ = ["DEFAULTS", "DEFAULTS_NOTE", "CondaSpec", "EnvironmentFile", "expand_channels", "parse_file",
           "parse_spec", "parse_text"]
