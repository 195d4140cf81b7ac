"""`cuenv pack NAME -o FILE` and `cuenv unpack FILE [-n NAME]`: move an environment to a machine
without network (cuenv.export.pack)."""

from __future__ import annotations

import argparse
from pathlib import Path
from typing import TYPE_CHECKING

from cuenv.errors import CuenvError
from cuenv.result import Result

if TYPE_CHECKING:
    from cuenv.cli.main import Context
    from cuenv.envs.store import EnvRecord
    from cuenv.knowledge.findings import Finding
    from cuenv.result import JSONObject


def configure(parser: argparse.ArgumentParser, name: str) -> None:
    if name == "pack":
        parser.add_argument("name", metavar="NAME", help="environment to pack")
        parser.add_argument("-o", "--output", type=Path, metavar="FILE", help="archive to write (default: NAME.cuenv.tar)")
        parser.add_argument("--force", action="store_true", help="overwrite FILE")
    else:
        parser.add_argument("archive", type=Path, metavar="FILE", help="archive made by `cuenv pack`")
        parser.add_argument("-n", "--name", metavar="NAME", help="name of the environment here (default: its packed name)")
        parser.add_argument("--force", action="store_true",
                            help="unpack even if the check finds it cannot run here; replace an environment of that name")


def _progress(ctx: Context):
    from cuenv.cli.progress import for_command

    return for_command(ctx)


def run(ctx: Context) -> Result[Packed] | Result[Unpacked]:
    if ctx.args.command == "pack":
        return _pack(ctx)
    return _unpack(ctx)


def _pack(ctx: Context) -> Result[Packed]:
    from cuenv.envs.store import Store
    from cuenv.errors import UsageError
    from cuenv.export.pack import pack

    a = ctx.args
    record = Store.from_settings(ctx.settings).get(a.name)
    out = (a.output or Path(f"{a.name}.cuenv.tar")).expanduser().absolute()
    if out.exists() and not a.force:
        raise UsageError(f"{out} already exists.", hint="Choose another file with -o, or add --force to overwrite it.")
    progress = _progress(ctx)
    try:
        try:
            manifest = pack(record, out, cache_dir=ctx.settings.cache_dir, progress=progress)
        except OSError as exc:  # the archive's own path, not the temporary file beside it (issue 30 §4)
            raise CuenvError(f"Cannot write {out}: {exc.strerror or exc}.",
                             hint=f"Pack into a folder you can write to, e.g. `cuenv pack {a.name} -o {Path.home() / out.name}`.") from None
    finally:
        progress.done()
    return Result(Packed(a.name, out, str(manifest["kind"]), str(manifest["method"]), out.stat().st_size), _packed_text)


class Packed:
    """`cuenv pack`: ``{"name", "archive", "kind", "method", "size_bytes"}``."""

    __slots__ = ("archive", "kind", "method", "name", "size_bytes")

    def __init__(self, name: str, archive: Path, kind: str, method: str, size_bytes: int) -> None:
        self.name, self.archive, self.kind, self.method, self.size_bytes = name, archive, kind, method, size_bytes

    def to_json(self) -> JSONObject:
        return {"name": self.name, "archive": str(self.archive), "kind": self.kind, "method": self.method,
                "size_bytes": self.size_bytes}


def _packed_text(done: Packed) -> str:
    return (f"Packed {done.name} ({done.kind}, {done.method}) into {done.archive} ({done.size_bytes / 1e6:.1f} MB).\n"
            f"On the other machine: cuenv unpack {done.archive.name}")


def _unpack(ctx: Context) -> Result[Unpacked]:
    from cuenv.export.pack import unpack
    from cuenv.machine.driver import detect

    a = ctx.args
    machine = detect(ctx.environ, cache_dir=ctx.settings.cache_dir)
    progress = _progress(ctx)
    try:
        record, findings = unpack(a.archive.expanduser().absolute(), name=a.name, settings=ctx.settings,
                                  environ=ctx.environ, machine=machine, force=a.force, progress=progress)
    finally:
        progress.done()
    warnings = [f.message for f in findings if f.severity in ("error", "warning")]
    from cuenv.envs.meta import TRUST_SMOKE_FLAG

    unpacked = record.meta.unpacked_from
    proven, total = (unpacked.proven_packages if unpacked else None) or (None, None)
    if proven is not None and total is not None and proven < total:
        warnings.append(f"{total - proven} of {total} packages were checked against their records in the archive only "
                        "(the packages themselves are not in cuenv's cache); see docs/concepts/security.md.")
    held = list(unpacked.held_back_scripts) if unpacked else []
    if held:
        warnings.append(f"{len(held)} conda activation scripts of packages checked against the archive only will not run "
                        f"on `cuenv use`: {', '.join(repr(s) for s in held[:4])}{' ...' if len(held) > 4 else ''}.")
    if record.meta.archived_smoke_test():
        warnings.append(f"The archive's smoke test is not run until you trust it: `cuenv test {record.name} {TRUST_SMOKE_FLAG}`.")
    return Result(Unpacked(record, findings), _unpacked_text, warnings=warnings)


class Unpacked:
    """`cuenv unpack`: ``{"name", "path", "findings"}``, the environment registered and its verdict here."""

    __slots__ = ("findings", "record")

    def __init__(self, record: EnvRecord, findings: list[Finding]) -> None:
        self.record, self.findings = record, findings

    def to_json(self) -> JSONObject:
        return {"name": self.record.name, "path": str(self.record.path), "findings": [f.to_json() for f in self.findings]}


def _unpacked_text(done: Unpacked) -> str:
    name = done.record.name
    return f"Unpacked {name} at {done.record.path}.\nUse it with `cuenv use {name}` or `cuenv run {name} -- python -V`."
