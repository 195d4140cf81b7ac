"""`cuenv doctor [NAME] [--report FILE|-]`: the acceptance checklist, each failure explained (issue 8).

Exit 0 when no check is an error, 1 otherwise (2 for bad input). ``--json`` prints
``{"ok", "origin", "checks": [{"name", "status", "detail", "findings": [...]}]}``, plus
``missing`` for a report.
"""

from __future__ import annotations

import argparse
import shlex
import sys
from pathlib import Path
from typing import TYPE_CHECKING

from cuenv.errors import NotFound, UsageError
from cuenv.result import Result

if TYPE_CHECKING:
    from cuenv.cli.main import Context
    from cuenv.doctor.model import Diagnosis, Facts


def configure(parser: argparse.ArgumentParser, name: str) -> None:
    parser.add_argument("name", nargs="?", help="an environment to look inside (default: the active one, if any)")
    parser.add_argument("--report", metavar="FILE", help="diagnose pasted text (nvidia-smi, collect_env, errors...) "
                        "instead of this machine; - reads stdin")
    parser.add_argument("--no-framework", action="store_true", help="do not import the environment's framework")
    parser.add_argument("--timeout", type=float, default=None, metavar="S",
                        help="seconds each framework probe may take (default 120)")
    parser.add_argument("--root", metavar="DIR", default="/",
                        help="read /proc, /sys, /dev and /etc under DIR (a mounted image, or tests)")
    parser.add_argument("--ld-cache", metavar="FILE", help="linker cache to read instead of /etc/ld.so.cache")


def run(ctx: Context) -> Result[Diagnosis]:
    from cuenv import doctor

    args = ctx.args
    if args.report is not None:
        if args.name:
            raise UsageError("--report diagnoses pasted text; it does not take an environment name.",
                             hint=f"Run `cuenv doctor --report {shlex.quote(args.report)}` alone.")
        from cuenv.doctor import report

        facts = report.parse(_read_report(args.report))
    else:
        if args.name and Path(args.name).is_file() and not (ctx.settings.envs_dir / args.name).is_dir():
            raise UsageError(f"{args.name} is a file here, not an environment.",
                             hint=f"Diagnose the text in it: `cuenv doctor --report {shlex.quote(args.name)}`.")
        facts = _gather(ctx)
    found = doctor.diagnosis(facts)
    return Result(found, render, exit_code=0 if found.ok else 1)


def _read_report(source: str) -> str:
    """Pasted text, at most 32 MiB (`--report /dev/zero` grew to 24 GB before); invalid UTF-8 is replaced."""
    from cuenv.trust import limits

    hint = "Give the file you saved the output in, or - for stdin."
    if source == "-":
        binary = getattr(sys.stdin, "buffer", None)  # a text-only stdin (tests, IDEs) has none
        data = binary.read(limits.REPORT + 1) if binary is not None else sys.stdin.read(limits.REPORT + 1).encode()
        if len(data) > limits.REPORT:
            raise UsageError(f"The report on stdin is larger than {limits.size_text(limits.REPORT)}.", hint=hint)
        return data.decode("utf-8", errors="replace")
    try:
        data = limits.read_bytes(Path(source), what="Report file", limit=limits.REPORT, hint=hint)
    except NotFound:
        raise NotFound(f"No report file {source!r}.", hint=hint) from None
    return data.decode("utf-8", errors="replace")


def _gather(ctx: Context) -> Facts:
    from cuenv.doctor.gather import examine

    a = ctx.args
    return examine(ctx.settings, ctx.environ, name=a.name, root=Path(a.root),
                   ld_cache=Path(a.ld_cache) if a.ld_cache else None, frameworks=not a.no_framework,
                   framework_timeout=a.timeout)


_MARK = {"ok": "ok", "warning": "warning", "error": "error"}


def render(found: Diagnosis) -> str:
    """Pure: the text people read; each problem with its cause and its fix."""
    lines = []
    head = "Diagnosis of the report" if found.origin == "report" else "cuenv doctor"
    if found.environment:
        head += f" (environment {found.environment})"
    lines.append(head)
    for c in found.checks:
        lines.append("")
        lines.append(f"{_MARK[c.status]:<8} {c.name}")
        for d in c.detail:
            lines.append(f"         {d}")
        for f in c.findings:
            lines.append(f"  {f.severity}[{f.code}]: {f.message}")
            if f.fix:
                lines.append(f"    fix: {f.fix}")
    if found.missing:
        lines.append("")
        lines.append("Not in the report:")
        lines += [f"  - {m}" for m in found.missing]
    counts = {s: sum(c.status == s for c in found.checks) for s in ("error", "warning")}
    lines.append("")
    if found.ok:
        tail = f" ({counts['warning']} warning{'s' if counts['warning'] != 1 else ''})" if counts["warning"] else ""
        lines.append(f"All checks passed{tail}.")
    else:
        lines.append(f"{counts['error']} check{'s' if counts['error'] != 1 else ''} failed, {counts['warning']} with warnings.")
    return "\n".join(lines)
