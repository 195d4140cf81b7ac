"""`cuenv doctor [NAME] [--report FILE|-]`: the acceptance checklist, each failure explained (issue 8).

Exit 0 when no check is an error, 1 otherwise (2 for bad input). ``--json`` prints
``{"ok", "origin", "checks": [{"name", "status", "detail", "findings": [...]}]}``, plus
``missing`` for a report.
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path
from typing import Any, Mapping

from cuenv.errors import CuenvError, NotFound, UsageError
from cuenv.result import Result


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


def run(ctx) -> Result:
    from cuenv import doctor

    args = ctx.args
    if args.report is not None:
        if args.name:
            raise UsageError("--report diagnoses pasted text; it does not take an environment name.",
                             hint="Run `cuenv doctor --report FILE` alone.")
        from cuenv.doctor import report

        facts = report.parse(_read_report(args.report))
    else:
        facts = _gather(ctx)
    checks = doctor.diagnose(facts)
    data = doctor.to_json(facts, checks)
    return Result(data=data, text=render(data), exit_code=0 if data["ok"] else 1)


def _read_report(source: str) -> str:
    if source == "-":
        return sys.stdin.read()
    path = Path(source)
    try:
        return path.read_text(encoding="utf-8", errors="replace")
    except FileNotFoundError:
        raise NotFound(f"No report file {source!r}.", hint="Give the file you saved the output in, or - for stdin.") from None
    except OSError as exc:
        raise UsageError(f"Cannot read {source!r}: {exc.strerror}.") from None


def _gather(ctx):  # noqa: ANN202 - cuenv.doctor.model.Facts
    from cuenv.doctor import gather
    from cuenv.envs.store import Store

    args = ctx.args
    settings = ctx.settings
    name = args.name
    active = False
    if not name and ctx.environ.get("CUENV_ACTIVE"):
        name, active = ctx.environ["CUENV_ACTIVE"], True
    record = None
    if name:
        store = Store.from_settings(settings)
        if active:  # a system toolkit (system:13.0) or a removed env has nothing inside to probe
            try:
                record = store.get(name) if store.path(name).is_dir() else None
            except CuenvError:
                record = None
        else:
            record = store.get(name)
    root = Path(args.root)
    if not root.is_dir():
        raise UsageError(f"--root {args.root!r} is not a folder.")
    ld_cache = Path(args.ld_cache) if args.ld_cache else None
    if ld_cache is not None and not ld_cache.is_file():
        raise NotFound(f"No linker cache file {args.ld_cache!r}.", hint="Build one with `ldconfig -C FILE DIR...`.")
    return gather.gather(ctx.environ, home=settings.home, record=record, active=active, root=root,
                         ld_cache=ld_cache, frameworks=not args.no_framework, framework_timeout=args.timeout)


_MARK = {"ok": "ok", "warning": "warning", "error": "error"}


def render(data: Mapping[str, Any]) -> str:
    """Pure: the text people read; each problem with its cause and its fix."""
    lines = []
    head = "Diagnosis of the report" if data.get("origin") == "report" else "cuenv doctor"
    if data.get("environment"):
        head += f" (environment {data['environment']})"
    lines.append(head)
    for c in data["checks"]:
        lines.append("")
        lines.append(f"{_MARK[c['status']]:<8} {c['name']}")
        for d in c.get("detail", ()):
            lines.append(f"         {d}")
        for f in c["findings"]:
            lines.append(f"  {f['severity']}[{f['code']}]: {f['message']}")
            if f.get("fix"):
                lines.append(f"    fix: {f['fix']}")
    if data.get("missing"):
        lines.append("")
        lines.append("Not in the report:")
        lines += [f"  - {m}" for m in data["missing"]]
    counts = {s: sum(c["status"] == s for c in data["checks"]) for s in ("error", "warning")}
    lines.append("")
    if data["ok"]:
        tail = f" ({counts['warning']} warning{'s' if counts['warning'] != 1 else ''})" if counts["warning"] else ""
        lines.append(f"All checks passed{tail}.")
    else:
        lines.append(f"{counts['error']} check{'s' if counts['error'] != 1 else ''} failed, {counts['warning']} with warnings.")
    return "\n".join(lines)
