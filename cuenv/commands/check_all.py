"""`cuenv check --all`: one verdict per environment, built or adopted, for this machine or a described one."""

from __future__ import annotations

from typing import TYPE_CHECKING

from cuenv.errors import EXIT_OK, EXIT_PROBLEMS
from cuenv.result import Result

if TYPE_CHECKING:
    from cuenv.cli.main import Context
    from cuenv.envs.survey import EnvVerdict
    from cuenv.result import JSONObject


class Survey:
    """`cuenv check --all`: ``{"machine": "...", "environments": [...]}``, one verdict per environment."""

    __slots__ = ("machine", "rows")

    def __init__(self, machine: str, rows: list[EnvVerdict]) -> None:
        self.machine, self.rows = machine, rows  # machine: as cuenv.knowledge.compat.describe_machine says it

    def to_json(self) -> JSONObject:
        return {"machine": self.machine, "environments": [r.to_json() for r in self.rows]}


def run_all(ctx: Context) -> Result[Survey]:
    from cuenv.cli.machine_flags import machine_from_args
    from cuenv.envs.store import Store
    from cuenv.envs.survey import FAILS, survey
    from cuenv.knowledge.compat import describe_machine

    machine, warnings = machine_from_args(ctx)
    rows = survey(Store.from_settings(ctx.settings), machine, cache_dir=ctx.settings.cache_dir)
    failed = any(r.verdict == FAILS for r in rows)
    return Result(Survey(describe_machine(machine), rows), render, exit_code=EXIT_PROBLEMS if failed else EXIT_OK,
                  warnings=warnings)


def render(found: Survey) -> str:
    from cuenv.cli.table import render as table

    rows = found.rows
    if not rows:
        from cuenv.envs.store import FIRST_ENVIRONMENT

        return f"No environments yet: {FIRST_ENVIRONMENT}; `cuenv adopt --scan .` finds ones you have."
    lines = [f"Environments on: {found.machine}", "", table(
        ["NAME", "CUDA", "FRAMEWORK", "VERDICT", "CAUSE"],
        [[r.name + (" (adopted)" if r.adopted else ""), r.cuda or "-", r.framework or "-", r.verdict,
          r.cause.code if r.cause else "-"] for r in rows])]
    for r in rows:
        if r.cause is not None:
            lines += ["", f"{r.name}: {r.cause.message}"]
            if r.cause.fix:
                lines.append(f"  fix: {r.cause.fix}")
    return "\n".join(lines)
