"""What cuenv knows about a machine: its NVIDIA driver and GPUs. Facts only, no policy.

Detection lives in ``cuenv.machine.driver``; these read-only records are what every check consumes,
whether they describe this machine or one given by flags (``--driver``, ``--gpu``). Plain classes
(cuenv.plain): `check` and `suggest` build them at start-up (issue 29).
"""

from __future__ import annotations

from cuenv.plain import Plain


class Gpu(Plain):
    __slots__ = ("index", "name", "compute_capability", "memory_mib", "uuid", "architecture", "mig")

    def __init__(self, index: int, name: str, compute_capability: str | None, memory_mib: int | None = None,
                 uuid: str | None = None, architecture: str | None = None, mig: bool = False) -> None:
        self.index = index
        self.name = name
        self.compute_capability = compute_capability  # "8.0"; None when no source told it
        self.memory_mib = memory_mib
        self.uuid = uuid
        self.architecture = architecture  # "Ampere"
        self.mig = mig


class Driver(Plain):
    __slots__ = ("version", "max_cuda", "source")

    def __init__(self, version: str, max_cuda: str | None, source: str) -> None:
        self.version = version  # "535.104.05"; "" when only the CUDA level is known (CONDA_OVERRIDE_CUDA)
        self.max_cuda = max_cuda  # newest CUDA this driver supports: "12.2"
        self.source = source  # nvml | libcuda | nvidia-smi | nvidia-smi-table | proc | override


class Machine(Plain):
    __slots__ = ("driver", "gpus", "os", "arch", "glibc", "notes")

    def __init__(self, driver: Driver | None, gpus: tuple[Gpu, ...] = (), os: str = "linux", arch: str = "x86_64",
                 glibc: str | None = None, notes: tuple[str, ...] = ()) -> None:
        self.driver = driver
        self.gpus = gpus
        self.os = os  # linux | windows
        self.arch = arch
        self.glibc = glibc
        self.notes = notes  # why a source was skipped; shown by info/doctor

    def to_json(self) -> dict[str, object]:
        return {
            "driver": self.driver.fields() if self.driver else None,
            "gpus": [g.fields() for g in self.gpus],
            "os": self.os,
            "arch": self.arch,
            "glibc": self.glibc,
            "notes": list(self.notes),
        }
