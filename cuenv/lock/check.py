"""`cuenv check LOCKFILE`: the stack a lockfile's packages need, against a machine (issue 15 §4).

Any lockfile cuenv reads (cuenv.lock, conda-lock.yml, pixi.lock, pylock.toml, uv.lock): its
contract checked by the same pure ``check`` as a recipe or a spec, how the contract was derived,
what an install would stop at, and the closest catalogue recipe. Prints nothing.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING, Callable, Mapping, Sequence

from cuenv.knowledge.findings import Finding
from cuenv.knowledge.stack import Stack

if TYPE_CHECKING:
    from cuenv.lock.io import LockRead
    from cuenv.machine.model import Machine


@dataclass(frozen=True)
class LockCheck:
    read: LockRead
    stack: Stack
    machine: Machine  # with the lock's OS
    platform: str
    findings: tuple[Finding, ...]
    ok: bool
    closest: Stack | None

    def lines(self) -> list[str]:
        """What the lockfile adds to check's report: the contract, its evidence, the closest recipe, warnings."""
        from cuenv.lock.model import contract_line

        out = [contract_line(self.read.lock)]
        out += [f"  {line}" for line in (self.read.derived.evidence if self.read.derived else ())]
        if self.closest is not None:
            label = self.closest.label
            if "==" in label:  # a package spec (cuda==12.9), not a recipe: `cuenv create` has no such name (issue 17)
                out.append(f"Closest build: {label} (`cuenv check {label}`; `cuenv recipes` lists what `cuenv create` makes)")
            else:
                out.append(f"Closest recipe: {label} (`cuenv create {label}`)")
        out += [f"warning: {w}" for w in self.read.warnings] + [f"note: {n}" for n in self.read.notes]
        return out


def check_lockfile(path: str, *, machine: Machine, os_given: bool, candidates: Callable[[str], Sequence[Stack]],
                   environ: Mapping[str, str], platform: str | None = None, environment: str | None = None,
                   python: str | None = None, gcc: str | None = None) -> LockCheck:
    """Check lockfile ``path`` on ``machine`` (its OS taken from the lock's platform unless ``os_given``).
    ``candidates(framework)`` lists the catalogue's stacks for the closest recipe."""
    from cuenv.knowledge.compat import check, verdict
    from cuenv.lock.io import host_platform, read_any
    from cuenv.lock.model import PLATFORMS, os_of

    read = read_any(path, platform=platform or host_platform(), environment=environment, python=python,
                    environ=environ, install=False)
    stack = read.lock.contract.stack()
    chosen = read.lock.platforms[0] if len(read.lock.platforms) == 1 else host_platform()
    if not os_given and chosen in PLATFORMS:
        machine = machine.replace(os=os_of(chosen))  # a lock's platform says the OS it is for
    findings = tuple(check(stack, machine, gcc=gcc)) + _system_requirement(read, machine)
    pool = [c for c in candidates(stack.framework or "cuda") if c.cuda] if stack.cuda else []
    return LockCheck(read=read, stack=stack, machine=machine, platform=chosen, findings=findings,
                     ok=verdict(list(findings)), closest=closest(stack, pool))


def _system_requirement(read: LockRead, machine: Machine) -> tuple[Finding, ...]:
    """What the project's tool requires of ``machine``'s driver before it installs (pixi's system requirement)."""
    from cuenv.knowledge.compat import system_requirement

    found = system_requirement(*read.machine_cuda, machine) if read.machine_cuda else None
    return (found,) if found is not None else ()


def closest(stack: Stack, pool: Sequence[Stack]) -> Stack | None:
    """The candidate nearest to ``stack``: the same framework, then the same CUDA major, the same CUDA,
    the nearest minor, then the same framework release."""
    if stack.cuda is None:
        return None
    want = tuple(int(x) for x in stack.cuda.split(".")[:2])

    def score(c: Stack) -> tuple[bool, bool, bool, int, bool]:
        have = tuple(int(x) for x in (c.cuda or "0.0").split(".")[:2])
        same_release = bool(stack.framework_version and c.framework_version
                            and c.framework_version.split(".")[:2] == stack.framework_version.split(".")[:2])
        return (c.framework == stack.framework, have[0] == want[0], have == want,
                -abs(have[1] - want[1]) if have[0] == want[0] else -99, same_release)

    return max(pool, key=score, default=None)
