"""The edge between activation plans and files: scripts per environment, and the hook text."""

from __future__ import annotations

from pathlib import Path
from typing import Final, Mapping, Sequence

from cuenv.activation import fish, posix
from cuenv.activation.plan import Plan, plan_for
from cuenv.activation.target import ActivationTarget

TYPE_CHECKING = False
if TYPE_CHECKING:
    from cuenv.machine.toolkits import SystemToolkit

SHELLS: Final = ("bash", "zsh", "fish")
HOOK_FILES: Final = {"bash": "cuenv.sh", "zsh": "cuenv.sh", "fish": "cuenv.fish"}


def _conda_scripts(prefix: Path, phase: str, suffix: str, allowed: frozenset[str] | None) -> list[Path]:
    """conda's etc/conda/{activate,deactivate}.d/*.sh (or *.fish), in conda's (sorted) order; only those in
    ``allowed`` (paths relative to the prefix) unless it is None (see ActivationTarget.conda_scripts)."""
    folder = prefix / "etc" / "conda" / f"{phase}.d"
    try:
        found = sorted(p for p in folder.iterdir() if p.name.endswith(suffix) and p.is_file())
    except OSError:
        return []
    return [p for p in found if allowed is None or p.relative_to(prefix).as_posix() in allowed]


def _rel(path: Path, prefix: Path) -> str | None:
    try:
        return path.relative_to(prefix).as_posix()
    except ValueError:
        return None


def render(
    plan: Plan,
    shell: str,
    *,
    prompt: bool,
    activate_scripts: Sequence[Path] = (),
    deactivate_scripts: Sequence[Path] = (),
) -> str:
    if shell == "fish":
        return fish.render(plan, prompt=prompt, activate_scripts=activate_scripts, deactivate_scripts=deactivate_scripts)
    return posix.render(
        plan, shell=shell, prompt=prompt, activate_scripts=activate_scripts, deactivate_scripts=deactivate_scripts
    )


def render_target(target: ActivationTarget, shell: str, *, envs_dir: Path, prompt: bool, other_roots: Sequence[Path] = ()) -> str:
    """The activation script of one target for one shell (conda hook scripts included)."""
    plan = plan_for(target, envs_dir=envs_dir, other_roots=other_roots)
    prefix = target.layout.prefix
    if target.layout.kind != "conda":
        return render(plan, shell, prompt=prompt)
    allowed = target.conda_scripts
    if shell == "fish":
        act, deact = _conda_scripts(prefix, "activate", ".fish", allowed), _conda_scripts(prefix, "deactivate", ".fish", allowed)
    else:
        recorded = [p for p in target.activate_scripts if allowed is None or _rel(p, prefix) in allowed]
        act = recorded or _conda_scripts(prefix, "activate", ".sh", allowed)
        deact = _conda_scripts(prefix, "deactivate", ".sh", allowed)
    return render(plan, shell, prompt=prompt, activate_scripts=act, deactivate_scripts=deact)


def render_scripts(target: ActivationTarget, *, envs_dir: Path, prompt: bool, environ: Mapping[str, str],
                   found: Sequence[SystemToolkit] | None = None) -> dict[str, str]:
    """The activate.{bash,zsh,fish} texts: what the hook sources on `cuenv use` (no Python).

    `cuenv create` has cuenv.envs.folder.write_activation write them after an install, before the completion
    marker. ``environ`` is the command's own (the system toolkits it names are stripped on activation), as
    `cuenv use` passes it when it renders the same script itself: the fast and the slow path write the same
    text (issue 24 §4). ``found``: the system toolkits ``discover(environ)`` found already.
    """
    from cuenv.activation.system import toolkit_roots

    roots = toolkit_roots(environ, found)
    return {shell: render_target(target, shell, envs_dir=envs_dir, prompt=prompt, other_roots=roots) for shell in SHELLS}


def _shell_dir() -> Path:
    here = Path(__file__).resolve().parents[1]
    for candidate in (here / "_data" / "shell", here.parent / "shell"):
        if candidate.is_dir():
            return candidate
    raise FileNotFoundError("cuenv's shell hook files are missing from this installation")


def hook_text(shell: str, *, home: Path, auto_activate: bool) -> str:
    """The hook for ``eval``, with the resolved default CUENV_HOME baked in."""
    text = (_shell_dir() / HOOK_FILES[shell]).read_text(encoding="utf-8")
    quote = fish.quote if shell == "fish" else posix.quote
    text = text.replace("'@CUENV_HOME@'", quote(str(home)))
    return text.replace("'@CUENV_AUTO_ACTIVATE@'", quote("1" if auto_activate else "0"))
