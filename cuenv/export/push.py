"""Putting an image into an OCI registry (issue 19 §3): skopeo, buildah, podman or docker.

Two kinds of source:

* an archive or layout that ``cuenv image build --output`` (or any tool) wrote: ``oci-archive:FILE``,
  ``docker-archive:FILE``, ``oci:DIR[:TAG]``; skopeo copies it, no daemon and no image store needed;
* a tag in a builder's own store (right after ``cuenv image build``): that builder pushes it.

Credentials stay where the tools keep them (``skopeo login``/``podman login``/``buildah login`` write
``${XDG_RUNTIME_DIR}/containers/auth.json``, ``docker login`` writes ``~/.docker/config.json``;
``REGISTRY_AUTH_FILE`` or ``--authfile`` name another file). cuenv never takes a password on its
command line (other users could read it in ``ps``) and never prints one: only the file's *path* is
passed on.

TLS: a registry on a loopback address is reached without TLS verification, the rule Docker applies
to ``127.0.0.0/8`` on its own; any other host needs ``--insecure`` for plain http.
The argv builders are pure; :func:`push` and :func:`inspect` run them through cuenv.runner.
"""

from __future__ import annotations

import ipaddress
import json
import re
import shutil
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Final

from cuenv.errors import ToolError, UsageError

PUSH_TIMEOUT: Final = 3 * 3600.0  # a framework image is several GB
INSPECT_TIMEOUT: Final = 120.0
PUSHERS: Final = ("skopeo", "buildah", "podman", "docker")
SOURCE_KINDS: Final = ("oci-archive", "docker-archive", "oci")
# A registry reference: host[:port]/path[:tag]; the host part must look like a host (a dot, a port
# or localhost), as docker decides whether the first component is a registry.
_DEST: Final = re.compile(
    r"(?P<host>(?:[a-zA-Z0-9.-]+\.[a-zA-Z0-9-]+|localhost|\[[0-9a-fA-F:]+\]|[a-zA-Z0-9-]+)(?::[0-9]+)?)"
    r"/(?P<path>[a-z0-9]+(?:[._-][a-z0-9]+)*(?:/[a-z0-9]+(?:[._-][a-z0-9]+)*)*)"
    r"(?::(?P<tag>[A-Za-z0-9_][A-Za-z0-9._-]{0,127}))?"
)


@dataclass(frozen=True)
class Destination:
    host: str  # registry host[:port]
    path: str  # repository path
    tag: str

    @property
    def ref(self) -> str:
        return f"{self.host}/{self.path}:{self.tag}"

    @property
    def loopback(self) -> bool:
        name = self.host.rsplit(":", 1)[0] if not self.host.startswith("[") else self.host[1:].split("]")[0]
        if name == "localhost":
            return True
        try:
            return ipaddress.ip_address(name).is_loopback
        except ValueError:
            return False


@dataclass(frozen=True)
class Source:
    kind: str  # oci-archive | docker-archive | oci | local (a tag in a builder's store)
    ref: str  # a path (with :TAG for oci), or the local tag

    @property
    def transport(self) -> str:
        return f"{self.kind}:{self.ref}"


def parse_destination(text: str) -> Destination:
    """``registry.example:5000/team/env[:tag]`` (an optional ``docker://`` in front) -> Destination."""
    raw = text.strip().removeprefix("docker://")
    m = _DEST.fullmatch(raw)
    host_like = m is not None and ("." in m.group("host") or ":" in m.group("host") or m.group("host") in ("localhost",)
                                   or m.group("host").startswith("["))
    if m is None or not host_like:
        raise UsageError(f"{text!r} is not a registry destination.",
                         hint="Write it like registry.example.com/team/env:1.0 or 127.0.0.1:5000/env:1.0 (lower case path).")
    return Destination(m.group("host"), m.group("path"), m.group("tag") or "latest")


def parse_source(text: str) -> Source:
    """``oci-archive:FILE``, ``docker-archive:FILE``, ``oci:DIR[:TAG]``, or a local image tag."""
    kind, sep, rest = text.partition(":")
    if sep and kind in SOURCE_KINDS:
        if not rest:
            raise UsageError(f"{text!r} names no file.", hint=f"Write {kind}:PATH.")
        path, _, tag = rest.partition(":") if kind == "oci" else (rest, "", "")
        resolved = Path(path).expanduser().absolute()
        if not resolved.exists():
            raise UsageError(f"{resolved} does not exist.", hint=f"Write it first: `cuenv image build` with --output {kind}-archive:{resolved}.")
        return Source(kind, str(resolved) + (f":{tag}" if tag else ""))
    return Source("local", text)


def tls_args(tool: str, dest: Destination, *, insecure: bool) -> list[str]:
    if not (insecure or dest.loopback) or tool == "docker":  # docker reads insecure registries from its daemon
        return []
    return {"skopeo": ["--dest-tls-verify=false"], "buildah": ["--tls-verify=false"],
            "podman": ["--tls-verify=false"]}[tool]


def auth_args(tool: str, authfile: Path | None) -> list[str]:
    if authfile is None or tool == "docker":
        return []
    return ["--dest-authfile" if tool == "skopeo" else "--authfile", str(authfile)]


def push_argv(tool: str, exe: str, source: Source, dest: Destination, *, insecure: bool = False,
              authfile: Path | None = None, global_args: tuple[str, ...] = ()) -> list[list[str]]:
    """The command(s) that put ``source`` at ``dest`` with ``tool``."""
    target = f"docker://{dest.ref}"
    extra = tls_args(tool, dest, insecure=insecure) + auth_args(tool, authfile)
    if tool == "skopeo":
        if source.kind == "local":
            raise UsageError("skopeo pushes archives, not images in a builder's store.",
                             hint=f"Push it with the builder: --tool buildah (or podman, docker), or give an archive (oci-archive:{source.ref}.tar).")
        return [[exe, "copy", *extra, source.transport, target]]
    if tool == "docker":
        if source.kind != "local":
            raise UsageError("docker pushes images from its own store only.", hint="Use --tool skopeo for an archive.")
        return [[exe, "tag", source.ref, dest.ref], [exe, "push", dest.ref]]
    src = source.ref if source.kind == "local" else source.transport
    return [[exe, *global_args, "push", *extra, src, target]]


def inspect_argv(exe: str, dest: Destination, *, insecure: bool = False, authfile: Path | None = None) -> list[str]:
    tls = ["--tls-verify=false"] if insecure or dest.loopback else []
    auth = ["--authfile", str(authfile)] if authfile else []
    return [exe, "inspect", *tls, *auth, f"docker://{dest.ref}"]


def choose_tool(source: Source, environ: Mapping[str, str], *, wanted: str | None = None) -> tuple[str, str]:
    """(tool, executable): ``wanted``, or skopeo for an archive, the first builder on PATH for a tag."""
    order = (wanted,) if wanted else (("skopeo", "buildah", "podman") if source.kind != "local" else ("buildah", "podman", "docker"))
    for tool in order:
        exe = shutil.which(tool, path=environ.get("PATH"))
        if exe:
            return tool, exe
    raise ToolError(f"No image tool to push with ({' or '.join(order)} is not on PATH).",
                    hint="Install skopeo (Debian: `apt-get install skopeo`), or name another with --tool.")


_AUTH_FAILED: Final = ("unauthorized", "authentication required", "denied: requested access", "no basic auth credentials")
_TLS_FAILED: Final = ("http: server gave HTTP response to HTTPS client", "x509:", "certificate")
_UNREACHABLE: Final = ("connection refused", "no such host", "i/o timeout", "network is unreachable")


def explain(stderr: str, dest: Destination, tool: str) -> ToolError:
    """A failed push -> one line naming the registry and the fix; never the tool's whole output."""
    from cuenv import runner

    low = stderr.lower()
    login = {"docker": "docker login", "skopeo": "skopeo login"}.get(tool, f"{tool} login")
    if any(m in low for m in _AUTH_FAILED):
        return ToolError(f"{dest.host} refused the push of {dest.ref}: not logged in, or no right to push there.",
                         hint=f"Log in once: `{login} {dest.host}` (the credentials stay in the tool's auth file).")
    if any(m.lower() in low for m in _TLS_FAILED):
        return ToolError(f"{dest.host} does not speak verified TLS.",
                         hint="For a registry you trust on plain http: the same `cuenv image push` with --insecure.")
    if any(m in low for m in _UNREACHABLE):
        return ToolError(f"The registry {dest.host} cannot be reached ({runner.stderr_tail(stderr, lines=1)}).",
                         hint="Check the host and port, or that the registry is running.")
    return ToolError(f"{tool} could not push {dest.ref}: {runner.stderr_tail(stderr, lines=2)}")


@dataclass(frozen=True)
class Pushed:
    source: str
    destination: str
    tool: str
    digest: str | None  # the manifest digest the registry now serves, read back with skopeo

    def to_json(self) -> dict[str, str | None]:
        return {"source": self.source, "destination": self.destination, "tool": self.tool, "digest": self.digest}


def push(source: Source, dest: Destination, environ: Mapping[str, str], *, tool: str | None = None,
         insecure: bool = False, authfile: Path | None = None, global_args: tuple[str, ...] = ()) -> Pushed:
    """Push, then read the manifest back from the registry (skopeo inspect) to prove it arrived."""
    from cuenv import runner

    name, exe = choose_tool(source, environ, wanted=tool)
    for argv in push_argv(name, exe, source, dest, insecure=insecure, authfile=authfile, global_args=global_args):
        done = runner.run(argv, timeout=PUSH_TIMEOUT, env=environ, check=False)
        if done.returncode != 0:
            raise explain(done.stderr or done.stdout, dest, name)
    return Pushed(source.transport, dest.ref, name, inspect(dest, environ, insecure=insecure, authfile=authfile))


def inspect(dest: Destination, environ: Mapping[str, str], *, insecure: bool = False, authfile: Path | None = None) -> str | None:
    """The digest the registry serves for ``dest``; None when skopeo is not here to ask."""
    from cuenv import runner

    exe = shutil.which("skopeo", path=environ.get("PATH"))
    if exe is None:
        return None
    done = runner.run(inspect_argv(exe, dest, insecure=insecure, authfile=authfile), timeout=INSPECT_TIMEOUT,
                      env=environ, check=False)
    if done.returncode != 0:
        raise explain(done.stderr or done.stdout, dest, "skopeo")
    try:
        return str(json.loads(done.stdout).get("Digest") or "") or None
    except ValueError:
        return None
