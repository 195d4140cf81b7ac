"""Mirrors: where each upstream (PyPI, a vendor's wheel index, a conda channel) is really fetched from.

One map, ``upstream URL prefix -> mirror URL prefix``, with where each entry came from (a cuenv flag,
``CUENV_MIRRORS``, the config file's ``mirrors:``, or the settings a user already gave uv, pip or
conda). Engines solve and download through :meth:`Mirrors.to_mirror`; everything they report goes
back through :meth:`Mirrors.to_upstream`, so a lock always names the canonical URLs and hashes: a
lock made behind a mirror installs anywhere, and the other way round (issue 19 §1). Pure, except
:func:`discover`, which reads the users' own tool settings (files and variables) it is given.

Why prefixes: conda channels (``{channel}/{subdir}/{file}``) and vendor wheel indexes
(``{index}/{file}``) keep their paths on every mirror (TUNA, SJTU, Aliyun, Artifactory, Nexus), so a
prefix rewrite is exact both ways. PyPI's file URLs are the exception: a mirror serves them at its
own host; bandersnatch, devpi, Nexus and Artifactory keep PyPI's ``packages/xx/yy/<blake2b>/FILE``
tail, which maps back exactly (:func:`canonical_pypi_file`). Where it does not, the lock keeps the
project page on the canonical index and the installer fetches ``name==version`` by hash.
"""

from __future__ import annotations

import os
import re
import sys
import urllib.parse
from collections.abc import Iterable, Mapping, Sequence
from pathlib import Path
from typing import Any, Final

from cuenv.errors import UsageError
from cuenv.knowledge.packages import canonical
from cuenv.plain import Plain
from cuenv.trust import limits

PYPI_SIMPLE: Final = "https://pypi.org/simple"  # uv's and pip's default index
PYPI_FILES: Final = "https://files.pythonhosted.org/packages"  # where PyPI serves its files
CHANNEL_ALIAS: Final = "https://conda.anaconda.org"  # conda's default channel_alias: a bare channel name lives here
# Short names a user may write instead of an upstream URL. A bare name not listed here is a conda channel.
UPSTREAMS: Final = {
    "pypi": PYPI_SIMPLE,
    "pytorch": "https://download.pytorch.org/whl",
    "paddle": "https://www.paddlepaddle.org.cn/packages",
    "conda": CHANNEL_ALIAS,
}
# PyPI's file layout: packages/<2 hex>/<2 hex>/<60 hex>/<file> (the file's blake2b-256, warehouse).
_PYPI_FILE_TAIL: Final = re.compile(r"/packages/([0-9a-f]{2}/[0-9a-f]{2}/[0-9a-f]{60}/[^/?#]+)(?:[?#].*)?$")
_NAME: Final = re.compile(r"^[A-Za-z0-9][A-Za-z0-9_.-]*$")
# A channel by name, with an optional label path: conda-forge, nvidia/label/cuda-11.8.0.
_CHANNEL: Final = re.compile(r"^[A-Za-z0-9][A-Za-z0-9_.-]*(?:/[A-Za-z0-9][A-Za-z0-9_.-]*)*$")


class Rule(Plain):
    """One mirror: what replaces an upstream URL prefix, and whose setting it is."""

    __slots__ = ("upstream", "mirror", "source")

    def __init__(self, upstream: str, mirror: str, source: str) -> None:
        self.upstream = upstream  # canonical URL prefix, no trailing slash
        self.mirror = mirror  # what replaces it, no trailing slash
        self.source = source  # "flag --mirror", "environment CUENV_MIRRORS", "config file F", "pip: /etc/pip.conf", ...

    def to_json(self) -> dict[str, str]:
        return {"upstream": self.upstream, "mirror": self.mirror, "source": self.source}


def _strip(url: str) -> str:
    return url.rstrip("/")


def _under(url: str, prefix: str) -> bool:
    return url == prefix or url.startswith(prefix + "/")


class Mirrors(Plain):
    """The rules in force; the longest matching prefix wins in each direction."""

    __slots__ = ("rules",)

    def __init__(self, rules: tuple[Rule, ...] = ()) -> None:
        self.rules = rules

    def __bool__(self) -> bool:
        return bool(self.rules)

    def rule_for(self, url: str) -> Rule | None:
        """The rule that rewrites the canonical ``url``, if any."""
        url = _strip(url)
        hits = [r for r in self.rules if _under(url, r.upstream)]
        return max(hits, key=lambda r: len(r.upstream)) if hits else None

    def to_mirror(self, url: str) -> str:
        """A canonical URL -> where to fetch it. Unmirrored URLs come back unchanged."""
        rule = self.rule_for(url)
        if rule is None:
            return url
        return rule.mirror + url[len(rule.upstream):]

    def to_upstream(self, url: str) -> str:
        """A URL an engine reported (perhaps a mirror's) -> its canonical URL."""
        stripped = _strip(url)
        hits = [r for r in self.rules if _under(stripped, r.mirror)]
        if not hits:
            return url
        rule = max(hits, key=lambda r: len(r.mirror))
        return rule.upstream + url[len(rule.mirror):]

    def pypi_file(self, url: str, *, index: str, project: str) -> str:
        """A wheel URL a (mirrored) index gave -> the canonical URL to lock.

        Under a mirrored prefix: the prefix rewritten back. PyPI's layout tail: PyPI's own file URL.
        Anything else: the project's page on the canonical index (the installer then asks the index
        for the locked version by hash).
        """
        back = self.to_upstream(url)
        if back != url:
            return back
        canonical_index = _strip(self.to_upstream(index))
        if canonical_index == PYPI_SIMPLE or _strip(index) == PYPI_SIMPLE:
            exact = canonical_pypi_file(url)
            if exact:
                return exact
        if canonical_index != _strip(index):  # a mirrored index serving files from elsewhere
            return f"{canonical_index}/{canonical(project)}/"
        return url

    def without_credentials(self) -> tuple[Mirrors, tuple[str, ...]]:
        """These rules with no user or password in any mirror URL (what an export may write), and the
        mirrors that had some (without them), so the export can say how to pass them at build time."""
        from cuenv.trust.shown import strip_credentials

        rules, stripped = [], []
        for r in self.rules:
            bare = strip_credentials(r.mirror)
            if bare != r.mirror:
                stripped.append(bare)
            rules.append(Rule(r.upstream, bare, r.source))
        return Mirrors(tuple(rules)), tuple(dict.fromkeys(stripped))

    def describe(self) -> list[str]:
        return [f"{r.upstream} -> {r.mirror} ({r.source})" for r in self.rules]

    def to_json(self) -> list[dict[str, str]]:
        return [r.to_json() for r in self.rules]


def canonical_pypi_file(url: str) -> str | None:
    """``https://mirror/any/prefix/packages/ab/cd/<60 hex>/FILE`` -> PyPI's URL of that file."""
    match = _PYPI_FILE_TAIL.search(urllib.parse.urlsplit(url).path)
    return f"{PYPI_FILES}/{match.group(1)}" if match else None


# -- parsing what users write ----------------------------------------------------------------------
def upstream_url(key: str) -> str:
    """``pypi`` / ``pytorch`` / ``conda`` / a conda channel name / a URL -> the canonical URL prefix."""
    key = key.strip()
    if key in UPSTREAMS:
        return UPSTREAMS[key]
    if "://" in key:
        return _url(key, what="upstream")
    if _CHANNEL.match(key):
        return f"{CHANNEL_ALIAS}/{key}"
    raise ValueError(f"{key!r} is not an upstream (write pypi, pytorch, paddle, conda, a conda channel name or a URL)")


def _url(text: str, *, what: str) -> str:
    parsed = urllib.parse.urlsplit(text.strip())
    if parsed.scheme not in ("http", "https", "file") or not (parsed.netloc or parsed.scheme == "file"):
        raise ValueError(f"{what} {text!r} is not an http(s) or file URL")
    if any(c.isspace() for c in text.strip()):
        raise ValueError(f"{what} {text!r} contains a space")
    return _strip(text.strip())


def parse_pairs(value: object) -> tuple[tuple[str, str], ...]:
    """``{upstream: mirror}`` (config file), or ``UPSTREAM=MIRROR`` items (flags, CUENV_MIRRORS:
    separated by spaces, commas or new lines) -> (canonical upstream, mirror) pairs. Raises ValueError."""
    items: list[tuple[str, str]] = []
    if isinstance(value, Mapping):
        raw: Iterable[tuple[object, object]] = value.items()
    else:
        if isinstance(value, str):
            parts: Sequence[object] = [p for p in re.split(r"[\s,]+", value) if p]
        elif isinstance(value, (list, tuple)):
            parts = value
        else:
            raise ValueError(f"{value!r} is not a mapping of upstream: mirror")  # noqa: TRY004 - one error type for every bad value
        raw = []  # (upstream, mirror) as written
        for part in parts:
            if not isinstance(part, str) or "=" not in part:
                raise ValueError(f"{part!r} is not UPSTREAM=MIRROR")
            upstream, _, url = part.partition("=")
            raw.append((upstream, url))
    for key, mirror in raw:
        if not isinstance(key, str) or not isinstance(mirror, str):
            raise ValueError(f"{key!r}: {mirror!r} is not an upstream and a mirror URL")  # noqa: TRY004 - as above
        items.append((upstream_url(key), _url(mirror, what="mirror")))
    return tuple(items)


def merge(layers: Sequence[tuple[str, Sequence[tuple[str, str]]]]) -> Mirrors:
    """Layers from strongest to weakest, each ``(source, pairs)``: per upstream, the strongest wins."""
    chosen: dict[str, Rule] = {}
    for source, pairs in layers:
        for upstream, mirror in pairs:
            chosen.setdefault(upstream, Rule(upstream, mirror, source))
    return Mirrors(tuple(sorted(chosen.values(), key=lambda r: r.upstream)))


# -- what users already configured in uv, pip and conda ---------------------------------------------
# Which variables and files the tools themselves read, in their own order (first wins):
# uv: UV_DEFAULT_INDEX, then the deprecated UV_INDEX_URL, then uv.toml's index-url
#     (docs.astral.sh/uv/reference/environment/, /reference/settings/#index-url);
# pip: PIP_INDEX_URL, then PIP_CONFIG_FILE or the user's, then the site's pip.conf [global] index-url
#     (pip.pypa.io/en/stable/topics/configuration/);
# conda: CONDA_CHANNEL_ALIAS, then .condarc channel_alias and custom_channels
#     (docs.conda.io/projects/conda/en/stable/user-guide/configuration/settings.html).
_UV_VARS: Final = ("UV_DEFAULT_INDEX", "UV_INDEX_URL")


def _home(environ: Mapping[str, str]) -> Path:
    return Path(environ.get("HOME") or os.path.expanduser("~"))


def pip_config_files(environ: Mapping[str, str]) -> list[Path]:
    """pip's files, strongest first; PIP_CONFIG_FILE=os.devnull turns them all off, as in pip."""
    named = environ.get("PIP_CONFIG_FILE")
    if named == os.devnull:
        return []
    home = _home(environ)
    xdg = Path(environ.get("XDG_CONFIG_HOME") or home / ".config")
    files = [Path(named)] if named else []
    files += [xdg / "pip" / "pip.conf", home / ".pip" / "pip.conf"]
    files += [Path(d) / "pip" / "pip.conf" for d in (environ.get("XDG_CONFIG_DIRS") or "/etc/xdg").split(":") if d]
    return files + [Path("/etc/pip.conf")]


def condarc_files(environ: Mapping[str, str]) -> list[Path]:
    """conda's search path, strongest (the user's, CONDARC) first."""
    home = _home(environ)
    files = [Path(environ["CONDARC"])] if environ.get("CONDARC") else []
    xdg = Path(environ.get("XDG_CONFIG_HOME") or home / ".config")
    files += [home / ".condarc", home / ".conda" / "condarc", home / ".conda" / ".condarc",
              xdg / "conda" / "condarc", xdg / "conda" / ".condarc", Path("/etc/conda/.condarc"),
              Path("/etc/conda/condarc")]
    return files


def _pip_index(path: Path) -> str | None:
    if not path.is_file():
        return None  # most of these places hold none: no INI reader to import (issue 26's benchmark)
    import configparser

    parser = configparser.RawConfigParser()
    try:
        parser.read(path, encoding="utf-8")
    except (configparser.Error, OSError, UnicodeDecodeError):
        return None
    for section in ("install", "global"):
        if parser.has_option(section, "index-url"):
            return parser.get(section, "index-url").strip() or None
    return None


def _uv_index(path: Path) -> str | None:
    try:
        text = limits.read_small(path)
    except (OSError, ValueError, UnicodeDecodeError):
        return None
    if sys.version_info >= (3, 11):  # only for a file that is there: most machines have none (start-up, issue 29)
        import tomllib
    else:  # the same API on Python 3.10
        import tomli as tomllib
    try:
        data = tomllib.loads(text)
    except ValueError:
        return None
    for entry in data.get("index") or ():
        default = entry.get("url") if isinstance(entry, dict) and entry.get("default") else None
        if isinstance(default, str):
            return default
    url = data.get("index-url") or (data.get("pip") or {}).get("index-url")
    return url if isinstance(url, str) else None


def _condarc(path: Path) -> dict[str, Any]:
    try:
        text = limits.read_small(path)
    except (OSError, ValueError):
        return {}
    try:
        data = limits.parse_yaml(text)
    except limits.YamlUnreadable:  # conda's own commands say what is wrong with it
        return {}
    return data if isinstance(data, dict) else {}


def discover(environ: Mapping[str, str]) -> list[tuple[str, list[tuple[str, str]]]]:
    """Mirrors users already gave their tools, as layers for :func:`merge` (strongest first).

    Only a replacement of the *default* index or channel alias counts: pip's extra-index-url adds
    an index rather than mirroring one, so it is left alone.
    """
    layers: list[tuple[str, list[tuple[str, str]]]] = []

    def add(source: str, upstream: str, mirror: str | None) -> None:
        if not mirror:
            return
        try:
            layers.append((source, [(upstream, _url(mirror, what="mirror"))]))
        except ValueError:
            pass  # the tool's own problem; cuenv does not guess

    for var in _UV_VARS:
        add(f"uv: environment {var}", PYPI_SIMPLE, environ.get(var))
    xdg = Path(environ.get("XDG_CONFIG_HOME") or _home(environ) / ".config")
    for uv_toml in (xdg / "uv" / "uv.toml", Path("/etc/uv/uv.toml")):
        if environ.get("UV_NO_CONFIG"):
            break
        add(f"uv: {uv_toml}", PYPI_SIMPLE, _uv_index(uv_toml))
    add("pip: environment PIP_INDEX_URL", PYPI_SIMPLE, environ.get("PIP_INDEX_URL"))
    for conf in pip_config_files(environ):
        add(f"pip: {conf}", PYPI_SIMPLE, _pip_index(conf))
    add("conda: environment CONDA_CHANNEL_ALIAS", CHANNEL_ALIAS, environ.get("CONDA_CHANNEL_ALIAS"))
    for rc in condarc_files(environ):
        data = _condarc(rc)
        alias = data.get("channel_alias")
        add(f"conda: {rc} channel_alias", CHANNEL_ALIAS, alias if isinstance(alias, str) else None)
        custom = data.get("custom_channels")
        if isinstance(custom, dict):
            for name, base in sorted(custom.items()):
                if isinstance(name, str) and isinstance(base, str) and _NAME.match(name):
                    add(f"conda: {rc} custom_channels", f"{CHANNEL_ALIAS}/{name}", f"{_strip(base)}/{name}")
    return layers


def resolve(*, flag: object = None, env_value: str | None = None, file_value: object = None, config_file: Path | None = None,
            environ: Mapping[str, str] | None = None, from_tools: bool = True) -> Mirrors:
    """Every layer, strongest first: ``--mirror`` flags, CUENV_MIRRORS, the config file, then the
    tools' own settings (when ``from_tools``). A bad value is a UsageError naming where it came from."""
    layers: list[tuple[str, Sequence[tuple[str, str]]]] = []
    for raw, source in ((flag, "flag --mirror"), (env_value, "environment CUENV_MIRRORS"),
                        (file_value, f"config file {config_file}" if config_file else "config file")):
        if raw in (None, "", (), []):
            continue
        try:
            layers.append((source, parse_pairs(raw)))
        except ValueError as exc:
            raise UsageError(f"Bad mirror from {source}: {exc}.",
                             hint="Write the upstream, '=', then the mirror, e.g. pypi=https://mirror.example/simple.") from None
    if from_tools and environ is not None:
        layers += discover(environ)
    return merge(layers)


# -- engines' views ----------------------------------------------------------------------------------
def channel_url(channel: str) -> str:
    """A recipe's channel (a name or a URL) -> its canonical URL; folders stay as they are."""
    if "://" in channel:
        return _strip(channel)
    if _CHANNEL.match(channel) and not Path(channel).expanduser().is_dir():
        return f"{CHANNEL_ALIAS}/{channel}"
    return channel


def uv_index_env(environ: Mapping[str, str]) -> dict[str, str]:
    """The caller's environment without the index variables uv and pip would read: cuenv passes the
    (mirrored) indexes itself, so one source decides and `cuenv config show` can name it. An empty ``UV_*``
    variable (the shell's ``UV_OFFLINE=``) is left out as unset: uv refuses an empty boolean outright."""
    return {k: v for k, v in environ.items()
            if k not in (*_UV_VARS, "UV_EXTRA_INDEX_URL", "UV_INDEX", "PIP_INDEX_URL") and (v or not k.startswith("UV_"))}
