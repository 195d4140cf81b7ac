"""CUENV_DRIVER, CUENV_GPUS and CONDA_OVERRIDE_CUDA: validated, applied after detection, never cached."""

from __future__ import annotations

import re
import sys

from cuenv.errors import UsageError
from cuenv.knowledge import matrix, versions
from cuenv.machine.model import Driver, Gpu, Machine
from cuenv.plain import Plain

TYPE_CHECKING = False  # no `typing` at run time: `check` reads the overrides at start-up (issue 29)
if TYPE_CHECKING:
    from typing import Mapping


class Overrides(Plain):
    __slots__ = ("driver_set", "driver", "gpus", "notes")

    def __init__(self, driver_set: bool = False, driver: Driver | None = None, gpus: tuple[Gpu, ...] | None = None,
                 notes: tuple[str, ...] = ()) -> None:
        self.driver_set = driver_set  # True: the driver below replaces the detected one (None = no driver)
        self.driver = driver
        self.gpus = gpus  # None: keep the detected GPUs
        self.notes = notes

    @property
    def complete(self) -> bool:
        """Nothing left to probe: driver and GPUs are both given."""
        return self.driver_set and self.gpus is not None


def current_os() -> str:
    """This machine's OS as the knowledge base names it."""
    return "windows" if sys.platform.startswith("win") else "linux" if sys.platform.startswith("linux") else sys.platform


def gpu_from_text(index: int, item: str, where: str) -> Gpu:
    """One GPU as a person writes it: a compute capability ("8.6", "sm_86"), a name the catalogue
    knows ("RTX 4090"), or NAME=X.Y for a name it does not. An unknown name stays a GPU without a
    compute capability: checks then report it (gpu-unknown-cc) with the NAME=X.Y hint."""
    from cuenv.knowledge import gpus as catalogue

    name, sep, cc_text = item.rpartition("=")
    if sep:
        name = name.strip()
        try:
            cc = versions.cc(cc_text.strip())
        except UsageError:
            raise UsageError(f"{item!r} in {where} is not NAME=X.Y.",
                             hint=f"Write the compute capability after the name: '{name or 'RTX 4090'}=8.9'.") from None
        text_cc = f"{cc.major}.{cc.minor}"
        model = catalogue.lookup(name)
        return Gpu(index, name or f"compute capability {text_cc}", text_cc,
                   model.memory_mib if model else None, architecture=catalogue.architecture_for(text_cc))
    if re.fullmatch(r"\d+\.\d+|(?:sm_|compute_)\d{2,3}[afp]?|\d{2,3}", item, re.IGNORECASE):
        cc = versions.cc(item)
        text_cc = f"{cc.major}.{cc.minor}"
        return Gpu(index, f"compute capability {text_cc}", text_cc, architecture=catalogue.architecture_for(text_cc))
    model = catalogue.lookup(item)
    if model is None:
        return Gpu(index, item, None)
    return Gpu(index, item, model.compute_capability, model.memory_mib, architecture=model.architecture)


def _gpus_override(text: str) -> tuple[Gpu, ...]:
    items = [p.strip() for p in text.split(",")]
    return tuple(gpu_from_text(index, item, "CUENV_GPUS") for index, item in enumerate(i for i in items if i))


def read_overrides(environ: Mapping[str, str], os_name: str | None = None) -> Overrides:
    """Validate CUENV_DRIVER, CUENV_GPUS and CONDA_OVERRIDE_CUDA; raise UsageError on bad values."""
    os_name = os_name or current_os()
    driver_set, driver, notes = False, None, []
    raw = environ.get("CUENV_DRIVER", "").strip()
    if raw:
        driver_set = True
        if raw.lower() == "none":
            notes.append("CUENV_DRIVER=none: planning a machine without a driver")
        else:
            try:
                versions.driver(raw)
            except UsageError:
                raise UsageError(
                    f"CUENV_DRIVER={raw!r} is not a driver version.",
                    hint="Write it like 535.104.05, or `none` for a machine without an NVIDIA driver.",
                ) from None
            driver = Driver(raw, matrix.max_cuda_for_driver(raw, os_name), "override")
            notes.append(f"driver {raw} from CUENV_DRIVER")
    if "CONDA_OVERRIDE_CUDA" in environ:
        raw_cuda = environ["CONDA_OVERRIDE_CUDA"].strip()
        driver_set = True
        if raw_cuda == "":
            # conda's rule: an empty CONDA_OVERRIDE_CUDA means "no __cuda", i.e. no usable driver.
            driver = None
            notes.append("CONDA_OVERRIDE_CUDA is empty: no driver, as conda reads it")
        else:
            try:
                cuda = versions.cuda(raw_cuda)
            except UsageError:
                raise UsageError(
                    f"CONDA_OVERRIDE_CUDA={raw_cuda!r} is not a CUDA version.",
                    hint="Set it like conda expects (CONDA_OVERRIDE_CUDA=12.4), set it empty for no driver, or unset it.",
                ) from None
            max_cuda = f"{cuda.major}.{cuda.minor}"
            driver = Driver(driver.version if driver else "", max_cuda, "override")
            notes.append(f"newest CUDA {max_cuda} from CONDA_OVERRIDE_CUDA")
    gpus = None
    raw_gpus = environ.get("CUENV_GPUS", "").strip()
    if raw_gpus:
        gpus = () if raw_gpus.lower() == "none" else _gpus_override(raw_gpus)
        notes.append("GPUs from CUENV_GPUS")
    return Overrides(driver_set, driver, gpus, tuple(notes))


def read_target(environ: Mapping[str, str], os_name: str | None = None) -> Overrides:
    """CUENV_TARGET_DRIVER and CUENV_TARGET_GPUS: the machine a GPU-less one (a login node, a CI runner,
    a laptop) builds for (issue 30 §4). Unlike CUENV_DRIVER they apply only where no driver is found,
    so one shell rc shared by a login node and its GPU nodes judges each right."""
    os_name = os_name or current_os()
    raw = environ.get("CUENV_TARGET_DRIVER", "").strip()
    raw_gpus = environ.get("CUENV_TARGET_GPUS", "").strip()
    if not raw and not raw_gpus:
        return Overrides()
    driver = None
    if raw:
        try:
            versions.driver(raw)
        except UsageError:
            raise UsageError(f"CUENV_TARGET_DRIVER={raw!r} is not a driver version.",
                             hint="Write it like 550.54.14: the driver of the GPU machines this one builds for.") from None
        driver = Driver(raw, matrix.max_cuda_for_driver(raw, os_name), "target")
    gpus = tuple(gpu_from_text(i, item, "CUENV_TARGET_GPUS") for i, item in
                 enumerate(p.strip() for p in raw_gpus.split(",") if p.strip())) if raw_gpus else None
    what = " and ".join(w for w, v in (("driver " + raw, raw), ("GPUs " + raw_gpus, raw_gpus)) if v)
    return Overrides(driver_set=driver is not None, driver=driver, gpus=gpus,
                     notes=(f"no GPU here: judged for the target machine ({what}, from CUENV_TARGET_DRIVER/GPUS)",))


def for_target(machine: Machine, environ: Mapping[str, str]) -> Machine:
    """The machine to judge for: this one, or the CUENV_TARGET_DRIVER/GPUS machine where this one has no driver.
    An explicit CUENV_DRIVER (``none`` included: planning a machine without one) is never replaced."""
    if machine.driver is not None or environ.get("CUENV_DRIVER", "").strip() or "CONDA_OVERRIDE_CUDA" in environ:
        return machine
    target = read_target(environ, machine.os)
    return apply_overrides(machine, target) if target.notes else machine


def apply_overrides(machine: Machine, overrides: Overrides) -> Machine:
    """Pure: the machine with the overridden parts replaced."""
    return machine.replace(
        driver=overrides.driver if overrides.driver_set else machine.driver,
        gpus=overrides.gpus if overrides.gpus is not None else machine.gpus,
        notes=machine.notes + overrides.notes,
    )
