"""Building a container image with whichever builder is here: docker, podman or buildah (issue 7 §2).

The argv builders are pure; :func:`find_builder` probes the tools through cuenv.runner. buildah
runs daemonless: with ``--isolation chroot`` (no runc or user namespaces needed), and as root on a
machine without an overlay store, with the ``vfs`` storage driver. buildah's own variables
(STORAGE_DRIVER, BUILDAH_ISOLATION) win when set.
"""

from __future__ import annotations

import os
import re
from dataclasses import dataclass
from pathlib import Path
from typing import Final, Mapping

from cuenv.errors import ToolError, UsageError

BUILDERS: Final = ("docker", "podman", "buildah")
ARCHIVES: Final = ("oci-archive", "docker-archive")
PROBE_TIMEOUT: Final = 30.0
BUILD_TIMEOUT: Final = 3 * 3600.0  # a framework stack downloads several GB
# docker's reference grammar, simplified: registry/path:tag, lower case; no spaces or shell words
_TAG: Final = re.compile(r"[a-z0-9][a-z0-9._-]*(?::[0-9]+)?(?:/[a-z0-9][a-z0-9._-]*)*(?::[A-Za-z0-9_][A-Za-z0-9._-]{0,127})?")


@dataclass(frozen=True)
class Builder:
    name: str  # docker | podman | buildah
    exe: str
    global_args: tuple[str, ...] = ()  # buildah: --storage-driver
    isolation: str | None = None  # buildah: chroot


@dataclass(frozen=True)
class ArchiveOutput:
    kind: str  # oci-archive | docker-archive
    path: Path


def validate_tag(tag: str) -> str:
    if not _TAG.fullmatch(tag):
        raise UsageError(f"{tag!r} is not a valid image tag.", hint="Write it like myenv, myenv:1.0 or registry.example/team/myenv:1.0 (lower case).")
    return tag


def parse_output(text: str) -> ArchiveOutput:
    kind, sep, path = text.partition(":")
    if not sep or kind not in ARCHIVES or not path:
        raise UsageError(f"{text!r} is not an image output.",
                         hint=f"Write a kind, ':' and a file: oci-archive:{path or 'image.tar'} or docker-archive:{path or 'image.tar'}.")
    return ArchiveOutput(kind, Path(path).expanduser().absolute())


def buildah_flags(environ: Mapping[str, str], *, euid: int, store: Path = Path("/var/lib/containers/storage")) -> tuple[tuple[str, ...], str | None]:
    """(global args, isolation) for a daemonless buildah on this machine."""
    driver: tuple[str, ...] = ()
    if "STORAGE_DRIVER" not in environ and euid == 0 and not (store / "overlay").is_dir():
        driver = ("--storage-driver", "vfs")  # overlay needs a kernel mount a container often may not do
    isolation = None if "BUILDAH_ISOLATION" in environ else "chroot"
    return driver, isolation


def build_argv(b: Builder, *, context: Path, tag: str) -> list[str]:
    dockerfile = str(context / "Dockerfile")
    if b.name == "docker":
        return [b.exe, "build", "--tag", tag, "--file", dockerfile, str(context)]
    # --format docker: the OCI image format has no HEALTHCHECK (the smoke test)
    argv = [b.exe, *b.global_args, "build" if b.name == "podman" else "bud", "--format", "docker"]
    if b.isolation:
        argv += ["--isolation", b.isolation]
    return argv + ["--tag", tag, "--file", dockerfile, str(context)]


def save_argv(b: Builder, *, tag: str, output: ArchiveOutput) -> list[str]:
    if b.name == "buildah":
        dest = f"{output.kind}:{output.path}" + (f":{tag}" if output.kind == "docker-archive" else "")
        return [b.exe, *b.global_args, "push", tag, dest]
    if b.name == "docker" and output.kind != "docker-archive":
        raise UsageError("docker saves docker-archive files only.",
                         hint=f"Use --output docker-archive:{output.path}, or podman/buildah with --builder.")
    if b.name == "docker":
        return [b.exe, "save", "--output", str(output.path), tag]
    return [b.exe, "save", "--format", output.kind, "--output", str(output.path), tag]


def _probe(name: str, environ: Mapping[str, str]) -> tuple[Builder | None, str]:
    import shutil

    from cuenv import runner

    exe = shutil.which(name, path=environ.get("PATH"))
    if exe is None:
        return None, "not installed"
    argv = {
        "docker": [exe, "version", "--format", "{{.Server.Version}}"],  # fails without a daemon
        "podman": [exe, "info", "--format", "{{.Host.Arch}}"],
        "buildah": [exe, "version"],
    }[name]
    try:
        done = runner.run(argv, timeout=PROBE_TIMEOUT, env=environ, check=False)
    except ToolError as exc:
        return None, exc.message
    if done.returncode != 0:
        why = "no Docker daemon answers" if name == "docker" else runner.stderr_tail(done.stderr or done.stdout, lines=1)
        return None, f"installed, but {why}"
    if name == "buildah":
        args, isolation = buildah_flags(environ, euid=os.geteuid())
        return Builder(name, exe, args, isolation), "ok"
    return Builder(name, exe), "ok"


def find_builder(environ: Mapping[str, str], *, wanted: str | None = None) -> Builder:
    """The first builder that works (or ``wanted``); an error naming each one and why not."""
    names = (wanted,) if wanted else BUILDERS
    reasons = []
    for name in names:
        builder, why = _probe(name, environ)
        if builder is not None:
            return builder
        reasons.append(f"{name}: {why}")
    raise ToolError(
        "No container builder works here (" + "; ".join(reasons) + ").",
        hint="Install one of docker (with its daemon running), podman or buildah; "
        "or export the build context (`cuenv export` with --format dockerfile) and build it elsewhere.",
    )
