"""Detect the NVIDIA driver, the newest CUDA it supports, and the GPUs. Facts, no policy.

The entry point: probe the driver (cuenv.machine.probes, parsing with cuenv.machine.nvsmi), cache the
probed machine as JSON keyed by the machine fingerprint so repeated commands do not initialise NVML
again, then apply CUENV_DRIVER, CUENV_GPUS and CONDA_OVERRIDE_CUDA (cuenv.machine.overrides), which are
never stored. No driver at all is a normal result: ``Machine(driver=None, notes=(why each source failed,))``.
"""

from __future__ import annotations

from pathlib import Path

from cuenv.machine.fingerprint import OVERRIDES, fingerprint
from cuenv.machine.model import Driver, Gpu, Machine
from cuenv.machine.overrides import apply_overrides, current_os, for_target, read_overrides

TYPE_CHECKING = False  # no `typing` at run time; probing, JSON and logging load on use (start-up, issue 29)
if TYPE_CHECKING:
    from typing import Any, Final, Mapping

CACHE_FILE: Final = "machine.json"
_CACHE_FORMAT: Final = "1"


def cache_key(environ: Mapping[str, str], root: Path = Path("/")) -> str:
    """Fingerprint without overrides, plus what decides which driver pieces are found."""
    import shutil

    base = {k: v for k, v in environ.items() if k not in OVERRIDES}
    smi = shutil.which("nvidia-smi", path=environ.get("PATH", "")) or "-"
    return "|".join((_CACHE_FORMAT, fingerprint(base, root), smi, environ.get("LD_LIBRARY_PATH", "")))


def machine_from_json(data: Mapping[str, Any]) -> Machine:
    driver = Driver(**data["driver"]) if data.get("driver") else None
    return Machine(
        driver=driver,
        gpus=tuple(Gpu(**g) for g in data.get("gpus", ())),
        os=data.get("os", "linux"),
        arch=data.get("arch", "x86_64"),
        glibc=data.get("glibc"),
        notes=tuple(data.get("notes", ())),
    )


def _read_cache(path: Path, key: str) -> Machine | None:
    import json

    from cuenv.trust import limits

    try:
        data = json.loads(limits.read_small(path))
        if data.get("key") != key:
            return None
        return machine_from_json(data["machine"])
    except (OSError, ValueError, KeyError, TypeError):
        return None  # absent, stale format or damaged: detect again


def _write_cache(path: Path, key: str, machine: Machine) -> None:
    import json

    from cuenv import atomic

    try:
        atomic.write_text(path, json.dumps({"key": key, "machine": machine.to_json()}))
    except OSError as exc:  # a read-only cache must not break detection
        import logging

        logging.getLogger(__name__).debug("could not write %s: %s", path, exc)


def probe(environ: Mapping[str, str], root: Path) -> Machine:
    """Ask the driver itself (cuenv.machine.probes, loaded only when no override or cache answers)."""
    from cuenv.machine import probes

    return probes.probe(environ, root)


def detect(environ: Mapping[str, str], *, root: Path = Path("/"), cache_dir: Path | None = None,
           refresh: bool = False) -> Machine:
    """This machine's driver and GPUs, with CUENV_DRIVER / CUENV_GPUS / CONDA_OVERRIDE_CUDA applied.

    With ``cache_dir``, a probe is reused while the cache key matches; ``refresh`` probes anyway
    and rewrites the cache.
    """
    known = None if refresh else known_now(environ, root=root, cache_dir=cache_dir)
    if known is not None:
        return known
    machine = probe(environ, root)
    if cache_dir is not None:
        _write_cache(Path(cache_dir) / CACHE_FILE, cache_key(environ, root), machine)
    return for_target(apply_overrides(machine, read_overrides(environ)), environ)


def known_now(environ: Mapping[str, str], *, root: Path = Path("/"), cache_dir: Path | None = None) -> Machine | None:
    """What detect answers without probing (the overrides say it all, or the cache still holds), else
    None: a probe may take seconds (NVML's first start after a reboot), and the TUI draws meanwhile."""
    overrides = read_overrides(environ)
    if overrides.complete:
        from cuenv.machine import host

        base = Machine(driver=None, os=current_os(), arch=host.arch(), glibc=host.glibc())
        return for_target(apply_overrides(base, overrides), environ)
    if cache_dir is None:
        return None
    cached = _read_cache(Path(cache_dir) / CACHE_FILE, cache_key(environ, root))
    return None if cached is None else for_target(apply_overrides(cached, overrides), environ)
