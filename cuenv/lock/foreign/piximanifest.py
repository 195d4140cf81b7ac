"""What a pixi manifest asks of the machine: its ``[system-requirements] cuda`` for one environment. Pure.

pixi checks a machine's virtual packages against the manifest's system requirements before it installs or
runs an environment ("The current system has a mismatching virtual package. The project requires '__cuda'
to be at least version ..."; pixi's System Requirements page): a driver that reports an older CUDA than
``cuda = "12.9"`` stops `pixi install`, whatever the lock holds. The lock does not record it (format 6), so
it is read from the manifest beside the lock.

Hand-written because no maintained Python reader of pixi manifests exists (pixi parses them in Rust, and
py-rattler exposes lockfiles, not manifests); it reads only these tables, with the TOML reader of the
other readers (cuenv.lock.foreign.model.load_toml):

- ``[system-requirements]`` (``[tool.pixi.system-requirements]`` in a pyproject.toml): the default feature's,
  which every environment holds unless it sets ``no-default-feature = true``;
- ``[feature.NAME.system-requirements]``: for the environments that list feature NAME in ``[environments]``.

Where several features of one environment name a CUDA, the machine must meet the highest.
"""

from __future__ import annotations

from typing import Any

from cuenv.knowledge.versions import Dotted


def system_cuda(text: str, *, name: str, environment: str | None = None) -> tuple[str, str] | None:
    """(the CUDA release, where it is written) that environment ``environment`` (``default`` when None) of the
    manifest ``text`` (file ``name``) requires of the machine's driver; None where it requires none."""
    from cuenv.errors import CuenvError
    from cuenv.lock.foreign.model import load_toml

    try:
        doc = load_toml(text, name, hint="")
    except CuenvError:
        return None  # the lock reader says what is wrong with the file
    root = doc.get("tool", {}).get("pixi", {}) if name != "pixi.toml" else doc
    if not isinstance(root, dict):
        return None
    env = environment or "default"
    features, with_default = _features(root.get("environments"), env)
    found: list[tuple[str, str]] = []
    table = "tool.pixi.system-requirements" if name != "pixi.toml" else "system-requirements"
    if with_default:
        found += _cuda(root.get("system-requirements"), f"{name} [{table}]")
    for feature in features:
        spec = root.get("feature", {}).get(feature) if isinstance(root.get("feature"), dict) else None
        if isinstance(spec, dict):
            found += _cuda(spec.get("system-requirements"), f"{name} [{table.replace('system-requirements', '')}"
                           f"feature.{feature}.system-requirements]")
    return max(found, key=lambda f: Dotted.parse(f[0]), default=None)


def _features(environments: Any, env: str) -> tuple[list[str], bool]:
    """The features environment ``env`` holds besides the default one, and whether it holds that one."""
    spec = environments.get(env) if isinstance(environments, dict) else None
    if isinstance(spec, list):
        return [str(f) for f in spec], True
    if isinstance(spec, dict):
        listed = spec.get("features", [])
        return [str(f) for f in listed] if isinstance(listed, list) else [], not spec.get("no-default-feature", False)
    return [], True


def _cuda(requirements: Any, where: str) -> list[tuple[str, str]]:
    value = requirements.get("cuda") if isinstance(requirements, dict) else None
    if isinstance(value, (str, int, float)) and str(value).replace(".", "").isdigit():
        return [(str(value), f'{where} cuda = "{value}"')]
    return []
