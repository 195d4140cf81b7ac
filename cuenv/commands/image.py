"""`cuenv image build NAME [-t TAG] [--output KIND:FILE] [--push DEST]` and `cuenv image push SOURCE DEST`.

build exports the environment's Dockerfile context to a temporary folder and builds it with docker,
podman or buildah (cuenv.export.image), then optionally writes the image to an archive and pushes it.
push puts an archive, an OCI layout or a builder's image into a registry (cuenv.export.push).
"""

from __future__ import annotations

import argparse
import sys
from typing import TYPE_CHECKING

from cuenv.result import Result

if TYPE_CHECKING:
    from cuenv.cli.main import Context
    from cuenv.export.push import Pushed
    from cuenv.result import JSONObject


def configure(parser: argparse.ArgumentParser, name: str) -> None:
    from cuenv.cli.parser import common_options
    from cuenv.export.image import BUILDERS
    from cuenv.export.push import PUSHERS

    sub = parser.add_subparsers(dest="action", metavar="ACTION", required=True)
    p = sub.add_parser("build", parents=[common_options()], help="build a container image of an environment",
                       description="Build a container image that rebuilds the environment from its lock.")
    p.add_argument("name", metavar="NAME", help="environment")
    p.add_argument("-t", "--tag", metavar="TAG", help="image tag (default: cuenv-NAME)")
    p.add_argument("--output", metavar="KIND:FILE", help="also write the image to oci-archive:FILE or docker-archive:FILE")
    p.add_argument("--base", metavar="IMAGE", help="base image (default: python:X.Y-slim-bookworm for a venv, debian:bookworm-slim for conda)")
    p.add_argument("--builder", choices=BUILDERS, help="use this builder (default: the first that works of " + ", ".join(BUILDERS) + ")")
    p.add_argument("--push", metavar="DEST", help="then push the image to registry DEST (registry.example.com/team/env:1.0)")
    _registry_options(p)
    q = sub.add_parser("push", parents=[common_options()], help="push an image to an OCI registry",
                       description="Push an image archive, an OCI layout or a builder's image to a registry; credentials "
                       "come from the tool's own login (skopeo/podman/buildah/docker login), never from cuenv.")
    q.add_argument("source", metavar="SOURCE", help="oci-archive:FILE, docker-archive:FILE, oci:DIR[:TAG], or a local image tag")
    q.add_argument("dest", metavar="DEST", help="registry destination, e.g. registry.example.com/team/env:1.0")
    q.add_argument("--tool", choices=PUSHERS, help="push with this tool (default: skopeo for an archive, else the first "
                   "of buildah, podman, docker)")
    _registry_options(q)


def _registry_options(p: argparse.ArgumentParser) -> None:
    p.add_argument("--authfile", metavar="FILE", help="registry credentials file (default: the tool's own, e.g. "
                   "${XDG_RUNTIME_DIR}/containers/auth.json or REGISTRY_AUTH_FILE)")
    p.add_argument("--insecure", action="store_true", help="allow plain http or an unverified certificate "
                   "(automatic for 127.0.0.1 and localhost)")


def run(ctx: Context) -> Result[Pushed] | Result[Built]:
    if ctx.args.action == "push":
        return _push(ctx)
    return _build(ctx)


def _push(ctx: Context) -> Result[Pushed]:
    from pathlib import Path

    from cuenv.export import push

    a = ctx.args
    source, dest = push.parse_source(a.source), push.parse_destination(a.dest)
    if not ctx.json:
        sys.stderr.write(f"Pushing {source.transport} to {dest.ref} ...\n")
    done = push.push(source, dest, ctx.environ, tool=a.tool, insecure=a.insecure,
                     authfile=Path(a.authfile).expanduser() if a.authfile else None)
    return Result(done, _pushed_text)


def _pushed_text(done: Pushed) -> str:
    pinned = f"{done.destination.rsplit(':', 1)[0]}@{done.digest}" if done.digest else done.destination
    return f"Pushed {done.destination} with {done.tool}" + (f" ({done.digest})" if done.digest else "") + \
        f".\nPull it: skopeo copy docker://{pinned} oci:DIR  (or docker pull {pinned})"


def _build(ctx: Context) -> Result[Built]:
    import tempfile
    from pathlib import Path

    from cuenv import runner
    from cuenv.export import format_module
    from cuenv.export.image import (
        BUILD_TIMEOUT,
        build_argv,
        find_builder,
        parse_output,
        save_argv,
        validate_tag,
    )
    from cuenv.export.write import load_source, write_outputs

    a = ctx.args
    tag = validate_tag(a.tag or f"cuenv-{a.name.lower()}")
    output = parse_output(a.output) if a.output else None
    dest = None
    if a.push:
        from cuenv.export import push

        dest = push.parse_destination(a.push)  # a bad destination stops before the long build
    source = load_source(ctx.settings, a.name)
    from cuenv.envs.change import drift_warning

    drifted = drift_warning(ctx.settings, ctx.environ, a.name)
    if drifted:  # issue 26 §3
        sys.stderr.write(f"warning: {drifted}\n")
    outputs = format_module("dockerfile").export(source, {"base": a.base})
    builder = find_builder(ctx.environ, wanted=a.builder)
    if output is not None:
        save_argv(builder, tag=tag, output=output)  # refuses an unsupported pair before the long build
        output.path.parent.mkdir(parents=True, exist_ok=True)
    with tempfile.TemporaryDirectory(prefix="cuenv-image-") as tmp:
        context = Path(tmp)
        write_outputs(outputs, context, force=True)
        if not ctx.json:
            sys.stderr.write(f"Building {tag} from {a.name} with {builder.name} ...\n")
        try:
            runner.run(build_argv(builder, context=context, tag=tag), timeout=BUILD_TIMEOUT, env=ctx.environ)
        except runner.ToolFailed as exc:
            raise _explain(exc, builder.name) from None
    if output is not None:
        runner.run(save_argv(builder, tag=tag, output=output), timeout=BUILD_TIMEOUT, env=ctx.environ)
    pushed = None
    if dest is not None:
        pushed = push.push(push.Source("local", tag), dest, ctx.environ, tool=builder.name, insecure=a.insecure,
                           authfile=Path(a.authfile).expanduser() if a.authfile else None, global_args=builder.global_args)
    return Result(Built(a.name, tag, builder.name, f"{output.kind}:{output.path}" if output else None, pushed), _built_text)


class Built:
    """`cuenv image build`: ``{"name", "tag", "builder", "output"}``, plus ``pushed`` (`image push`'s shape) with --push."""

    __slots__ = ("builder", "name", "output", "pushed", "tag")

    def __init__(self, name: str, tag: str, builder: str, output: str | None, pushed: Pushed | None) -> None:
        self.name, self.tag, self.builder, self.output, self.pushed = name, tag, builder, output, pushed

    def to_json(self) -> JSONObject:
        data: JSONObject = {"name": self.name, "tag": self.tag, "builder": self.builder, "output": self.output}
        if self.pushed is not None:
            data["pushed"] = self.pushed.to_json()
        return data


def _built_text(done: Built) -> str:
    text = f"Built {done.tag} with {done.builder}" + (f"; wrote {done.output}" if done.output else "") + "."
    if done.pushed is not None:
        return text + "\n" + _pushed_text(done.pushed)
    return text + "\n" + f"Run it: docker run --rm --gpus all {done.tag} cuenv-smoke-test"


_PULL_FAILED = ("pinging container registry", "Trying to pull", "pull access denied", "failed to resolve source metadata")


def _explain(exc, builder: str):
    """A base image that cannot be pulled is the usual failure offline: say so, and how to give a local one."""
    from cuenv.errors import ToolError

    text = exc.stderr or exc.stdout
    if any(marker in text for marker in _PULL_FAILED):
        return ToolError(f"{builder} could not pull the base image ({exc.message})",
                         hint=f"Without a reachable registry, build on an image you have here (--base; `{builder} images` lists them).")
    return exc
