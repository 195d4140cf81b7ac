"""`check FILE`'s typed result and its --json: one shape for every kind of file, a lockfile or a project file (issue 25).

Every key is always there (null or [] when it does not apply): a script reads ``cuda`` from the
same place for a pixi.lock and a requirements.txt. docs/reference/findings.md lists the keys;
`suggest --for FILE --json` carries the same object under ``file``.
"""

from __future__ import annotations

from cuenv.knowledge.compat import state_of

TYPE_CHECKING = False  # no `typing` at run time: `suggest` imports this (issue 29)
if TYPE_CHECKING:
    from cuenv.knowledge.findings import Finding
    from cuenv.knowledge.stack import Stack
    from cuenv.lock.check import LockCheck
    from cuenv.recipes.projectfile import ProjectNeed
    from cuenv.result import JSONObject


def file_json(target: str, ok: bool, findings: list[Finding], *, kind: str, locked: bool, stack: Stack, how: str,
              environment: str | None = None, platform: str | None = None, python: str | None = None,
              evidence: list[str] | None = None, conflicts: list[str] | None = None, notes: list[str] | None = None,
              warnings: list[str] | None = None, unusable: list[str] | None = None, engine_family: str | None = None,
              mixed: bool = False, contract: dict | None = None, closest_recipe: str | None = None) -> dict:
    """`check FILE`'s typed result and its --json: one shape for every kind of file, a lockfile or a project file (issue 25).
    Every key is always there (null or [] when it does not apply); docs/reference/findings.md lists them."""
    return {
        "target": target, "ok": ok, "verdict": state_of(findings, ok), "findings": [f.to_json() for f in findings],
        "kind": kind, "locked": locked, "environment": environment, "platform": platform, "python": python,
        "cuda": stack.cuda, "cudnn": stack.cudnn, "has_nvcc": stack.has_nvcc, "framework": stack.framework,
        "framework_version": stack.framework_version, "how": how, "evidence": list(evidence or ()),
        "conflicts": list(conflicts or ()), "notes": list(notes or ()), "warnings": list(warnings or ()),
        "unusable": list(unusable or ()), "engine_family": engine_family, "mixed": mixed, "contract": contract,
        "closest_recipe": closest_recipe,
    }


def project_json(target: str, ok: bool, findings: list[Finding], need: ProjectNeed, closest: Stack | None) -> dict:
    """`check FILE --json` of an environment.yml, requirements or project file."""
    return file_json(target, ok, findings, kind=need.kind, locked=False, stack=need.stack, how=need.how,
                     evidence=[str(e) for e in need.evidence], notes=list(need.notes),
                     unusable=[str(u) for u in need.unsupported], engine_family=need.engine_family, mixed=need.mixed,
                     closest_recipe=closest.label if closest else None)


def lock_json(target: str, done: LockCheck) -> dict:
    """`check LOCKFILE --json`, in the same shape as a project file's."""
    read, foreign = done.read, done.read.foreign
    kinds = {p.kind for p in foreign.packages} if foreign is not None else set()
    return file_json(
        target, done.ok, list(done.findings), kind="cuenv-lock" if read.kind == "cuenv" else read.kind, locked=True,
        stack=done.stack, how="the lock's contract" if foreign is None else "read from the locked packages",
        environment=foreign.environment if foreign is not None else None, platform=done.platform,
        python=read.lock.python, evidence=list(read.derived.evidence) if read.derived else [],
        conflicts=list(read.derived.conflicts) if read.derived else [], notes=list(read.notes),
        warnings=list(read.warnings),
        unusable=[f"{u.name} {u.why}" for u in foreign.unusable] if foreign is not None else [],
        engine_family="venv" if read.lock.engine == "venv" else "conda", mixed=kinds == {"conda", "pypi"},
        contract=read.to_json()["contract"], closest_recipe=done.closest.label if done.closest else None)


class FileCheck:
    """`cuenv check FILE` of a lockfile or a project file: one shape for every kind (cuenv.commands.filejson)."""

    __slots__ = ("findings", "machine", "ok", "target")

    def __init__(self, target: str, findings: list[Finding], ok: bool, machine: str) -> None:
        self.target, self.findings, self.ok, self.machine = target, findings, ok, machine

    def lines(self) -> list[str]:
        """What was read, said under the verdict."""
        return []


class ProjectCheck(FileCheck):
    """An environment.yml or requirements file, with the catalogue recipe closest to its stack."""

    __slots__ = ("closest", "need")

    def __init__(self, target: str, findings: list[Finding], ok: bool, machine: str, need: ProjectNeed,
                 closest: Stack | None) -> None:
        super().__init__(target, findings, ok, machine)
        self.need, self.closest = need, closest

    def lines(self) -> list[str]:
        return self.need.describe(self.closest)

    def to_json(self) -> JSONObject:
        return project_json(self.target, self.ok, self.findings, self.need, self.closest)


class LockfileCheck(FileCheck):
    """A lockfile, cuenv's own or another tool's (cuenv.lock.check)."""

    __slots__ = ("lock",)

    def __init__(self, target: str, lock: LockCheck, machine: str) -> None:
        super().__init__(target, list(lock.findings), lock.ok, machine)
        self.lock = lock

    def lines(self) -> list[str]:
        return self.lock.lines()

    def to_json(self) -> JSONObject:
        return lock_json(self.target, self.lock)
