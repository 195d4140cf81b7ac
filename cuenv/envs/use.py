"""`cuenv use`'s decisions, with no printing (issue 24 §4).

Which environment a `use` means (the name given, or the nearest allowed ``.cuenv`` file's), whether it
may be activated here, and what to say first, as typed values. The edge (cuenv.commands.shell, the
hook's `shell-env`) prints the notices on stderr and writes the shell code.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Mapping

from cuenv.envs.verdict import Notice
from cuenv.errors import CuenvError, NotFound, UsageError

if TYPE_CHECKING:
    from cuenv.activation.target import ActivationTarget
    from cuenv.config import Settings
    from cuenv.envs.project import ProjectPin
    from cuenv.envs.store import EnvRecord


@dataclass(frozen=True)
class Activation:
    """What `use` activates, and what it says first. ``refused``: the error that stops it (--strict and
    an error found); the notices are still said before it."""

    name: str
    target: ActivationTarget
    said: tuple[Notice, ...] = ()  # severities as they apply: an error that does not stop activation is a warning
    record: EnvRecord | None = None  # None for system:X.Y
    refused: CuenvError | None = None
    pin: ProjectPin | None = None  # the allowed .cuenv file it was chosen by, if no name was given


def chosen(name: str | None, settings: Settings, environ: Mapping[str, str]) -> tuple[str, ProjectPin | None]:
    """The environment to use: the argument, or the nearest .cuenv file's, once the user allowed it.
    The pin is read once, here (the hook asks no separate `pin` question first)."""
    from cuenv.envs import project

    if name:
        return name, None
    from cuenv.trust import consent

    cwd = consent.logical_cwd(environ)
    pin = project.find(cwd)
    if pin is None:
        raise UsageError(f"No environment named, and no {project.PROJECT_FILE} file in {cwd} or above.",
                         hint="Name one of `cuenv list`'s environments after `cuenv use`, or pin one in a .cuenv file in your project.")
    project.approved(pin, settings.home)
    return pin.env, pin


def judged(name: str, said: list[Notice], *, strict: bool) -> tuple[tuple[Notice, ...], CuenvError | None]:
    """(the notices as said, the refusal): without --strict an error does not stop activation, so it is
    said as a warning (issue 17 §4); with --strict an error refuses."""
    from cuenv.envs.verdict import has_error

    if strict and has_error(said):
        return tuple(said), CuenvError(f"Not activating {name}: it cannot run on this machine (--strict).",
                                       hint="Fix the error above, or activate without --strict.")
    return tuple(n.replace(severity="warning") if n.severity == "error" else n for n in said), None


def verdict(record: EnvRecord, environ: Mapping[str, str], cache_dir: Path | None, *,
            strict: bool) -> tuple[tuple[Notice, ...], CuenvError | None]:
    """`shell-env SHELL verdict NAME`: what the hook says when its cached verdict is stale."""
    from cuenv.envs import verdict as verdicts

    return judged(record.name, verdicts.notices(verdicts.findings_for(record, environ, cache_dir)), strict=strict)


def prepare(name: str | None, settings: Settings, environ: Mapping[str, str], *, strict: bool) -> Activation:
    """Everything `use` decides before it writes shell code; raises what stops it before any notice
    (no such environment, a pin not allowed)."""
    from cuenv.activation.system import is_system, system_target
    from cuenv.envs.store import Store

    name, pin = chosen(name, settings, environ)
    if is_system(name):
        return Activation(name, system_target(name, environ), pin=pin)
    try:
        record = Store.from_settings(settings).get(name)
    except NotFound as exc:
        raise _missing(name, pin) or exc from None
    said, refused = verdict(record, environ, settings.cache_dir, strict=strict)
    return Activation(name, record.target(), said, record, refused, pin)


def _missing(name: str, pin: ProjectPin | None) -> NotFound | None:
    """The pinned environment does not exist: say which file pins it and how to make it."""
    if pin is None:
        return None
    from cuenv.envs.store import FIRST_ENVIRONMENT

    if pin.lock:  # name the lockfile only when it is there: `cuenv sync` of a missing file fails (issue 17 §4)
        hint = (f"Create it from its lockfile: `cuenv sync {pin.lock} -n {name}`." if Path(pin.lock).is_file() else
                f"Its lockfile {pin.lock} is missing too: create it from a recipe, with -n {name}: {FIRST_ENVIRONMENT}.")
        return NotFound(f"Environment {name!r} (pinned by {pin.file}) does not exist yet.", hint=hint)
    # the pin names it: a create under another name would not be found either
    return NotFound(f"Environment {name!r} (pinned by {pin.file}) does not exist yet.",
                    hint=f"Create it from a recipe, with -n {name}: {FIRST_ENVIRONMENT}.")


def repair_scripts(record: EnvRecord, shell: str, settings: Settings, environ: Mapping[str, str]) -> None:
    """Render the hook's activation scripts again when this shell's is missing (an older cuenv, or
    removed): the next `use` takes the fast path again. A read-only environment just stays slow."""
    from cuenv.activation.render import render_scripts
    from cuenv.envs import folder

    if folder.activate_script(record.meta_dir, shell).exists():
        return
    try:
        folder.write_activation(record.meta_dir, render_scripts(record.target(), envs_dir=settings.envs_dir,
                                                                prompt=settings.prompt, environ=environ))
    except OSError:
        pass
