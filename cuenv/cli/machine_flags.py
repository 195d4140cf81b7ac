"""The machine a check is about: flags describe another machine, otherwise this one is detected.

Shared by ``cuenv check`` and ``cuenv suggest``. ``--driver``/``--gpu``/``--cc`` describe a
machine completely (no detection mixes in: planning for a cluster node from a laptop must not
pick up the laptop's GPU); ``--os`` alone only overrides the detected OS.
"""

from __future__ import annotations

import sys

from cuenv.cli.quick import suppress
from cuenv.knowledge import versions
from cuenv.machine.model import Driver, Gpu, Machine
from cuenv.machine.overrides import gpu_from_text

TYPE_CHECKING = False  # no `typing` or argparse at run time: `check` and `suggest` start here (issue 29)
if TYPE_CHECKING:
    import argparse

    from cuenv.cli.main import Context
    from cuenv.knowledge.gpus import GpuModel


def add_machine_flags(parser: argparse.ArgumentParser) -> None:
    g = parser.add_argument_group("machine (default: this one, detected)")
    # SUPPRESS defaults: a parent parser and a subparser may both carry these flags (cuenv recipes [list]).
    hidden = suppress(parser)
    g.add_argument("--driver", default=hidden, metavar="VERSION", help="NVIDIA driver version of the target machine, e.g. 535.104.05")
    g.add_argument("--gpu", action="append", default=hidden, metavar="NAME",
                   help="a GPU of the target machine by name, e.g. 'RTX 4090', or NAME=X.Y for one cuenv does not know"
                        " (repeat for several)")
    g.add_argument("--cc", action="append", default=hidden, metavar="X.Y",
                   help="a GPU of the target machine by compute capability, e.g. 8.6 (repeat for several)")
    g.add_argument("--os", choices=("linux", "windows"), default=hidden, help="target OS (default: this one)")


def machine_from_args(ctx: Context) -> tuple[Machine, list[str]]:
    """(machine, warnings) from the flags, or from detection when none describes the machine."""
    driver, gpus, ccs = (getattr(ctx.args, k, None) for k in ("driver", "gpu", "cc"))
    os_flag = getattr(ctx.args, "os", None)
    os_name = os_flag or ("windows" if sys.platform.startswith("win") else "linux")
    if driver or gpus or ccs:
        return described_machine(driver, gpus or [], ccs or [], os_name), []
    machine, warnings = _detect(ctx)
    if os_flag:
        machine = Machine(machine.driver, machine.gpus, os=os_flag, arch=machine.arch, glibc=machine.glibc, notes=machine.notes)
    return machine, warnings


def described_machine(driver: str | None, gpus: list[str], ccs: list[str], os_name: str = "linux") -> Machine:
    """The machine that flags describe (``--driver``/``--gpu``/``--cc``, or create's ``--target-*``)."""
    return Machine(driver=_driver_flag(driver, os_name), gpus=_gpus_from_flags(gpus, ccs), os=os_name)


def _driver_flag(text: str | None, os_name: str) -> Driver:
    if not text:
        # GPUs given without a driver: the driver axis is unknown, not absent (check says so as info).
        return Driver(version="", max_cuda=None, source="unknown")
    versions.driver(text)  # validates; the text is kept as written ("470.82.01", not 470.82.1)
    value = text.strip()
    from cuenv.knowledge import matrix

    return Driver(version=value, max_cuda=matrix.max_cuda_for_driver(value, os_name), source="flag")


def _gpus_from_flags(names: list[str], ccs: list[str]) -> tuple[Gpu, ...]:
    gpus: list[Gpu] = []
    for name in names:
        gpu = gpu_from_text(len(gpus), name, "--gpu")
        model = _lookup_gpu(name) if gpu.compute_capability and "=" not in name else None
        gpus.append(gpu.replace(name=model.name) if model is not None else gpu)
    for text in ccs:
        cc = versions.cc(text)
        value = f"{cc.major}.{cc.minor}"
        gpus.append(Gpu(index=len(gpus), name=f"GPU {len(gpus)}", compute_capability=value))
    return tuple(gpus)


def _lookup_gpu(name: str) -> GpuModel | None:
    from cuenv.knowledge.gpus import lookup

    try:
        return lookup(name)
    except LookupError:
        return None


def _detect(ctx: Context) -> tuple[Machine, list[str]]:
    from cuenv.machine.driver import detect

    return detect(ctx.environ, cache_dir=ctx.settings.cache_dir), []
