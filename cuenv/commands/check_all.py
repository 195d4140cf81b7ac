"""`cuenv check --all`: one verdict per environment, built or adopted, for this machine or a described one."""

from __future__ import annotations

from typing import TYPE_CHECKING

from cuenv.errors import EXIT_OK, EXIT_PROBLEMS
from cuenv.result import Result

if TYPE_CHECKING:
    from cuenv.cli.main import Context


def run_all(ctx: Context) -> Result:
    from cuenv.cli.machine_flags import machine_from_args
    from cuenv.cli.table import render
    from cuenv.envs.store import Store
    from cuenv.envs.survey import FAILS, survey
    from cuenv.knowledge.compat import describe_machine

    machine, warnings = machine_from_args(ctx)
    rows = survey(Store.from_settings(ctx.settings), machine, cache_dir=ctx.settings.cache_dir)
    data = {"machine": describe_machine(machine), "environments": [r.to_json() for r in rows]}
    if not rows:
        return Result(data=data, text="No environments yet: `cuenv create RECIPE`, or `cuenv adopt PATH` for one you have.",
                      warnings=warnings)
    table = render(["NAME", "CUDA", "FRAMEWORK", "VERDICT", "CAUSE"],
                   [[r.name + (" (adopted)" if r.adopted else ""), r.cuda or "-", r.framework or "-", r.verdict,
                     r.cause.code if r.cause else "-"] for r in rows])
    lines = [f"Environments on: {describe_machine(machine)}", "", table]
    for r in rows:
        if r.cause is not None:
            lines += ["", f"{r.name}: {r.cause.message}"]
            if r.cause.fix:
                lines.append(f"  fix: {r.cause.fix}")
    failed = any(r.verdict == FAILS for r in rows)
    return Result(data=data, text="\n".join(lines), exit_code=EXIT_PROBLEMS if failed else EXIT_OK, warnings=warnings)
