"""What cuenv knows about a machine: its NVIDIA driver and GPUs. Facts only, no policy.

Detection lives in ``cuenv.machine.driver``; these frozen records are what every check consumes,
whether they describe this machine or one given by flags (``--driver``, ``--gpu``).
"""

from __future__ import annotations

from dataclasses import asdict, dataclass, field


@dataclass(frozen=True)
class Gpu:
    index: int
    name: str
    compute_capability: str | None  # "8.0"; None when no source told it
    memory_mib: int | None = None
    uuid: str | None = None
    architecture: str | None = None  # "Ampere"
    mig: bool = False


@dataclass(frozen=True)
class Driver:
    version: str  # "535.104.05"; "" when only the CUDA level is known (CONDA_OVERRIDE_CUDA)
    max_cuda: str | None  # newest CUDA this driver supports: "12.2"
    source: str  # nvml | libcuda | nvidia-smi | nvidia-smi-table | proc | override


@dataclass(frozen=True)
class Machine:
    driver: Driver | None
    gpus: tuple[Gpu, ...] = ()
    os: str = "linux"  # linux | windows
    arch: str = "x86_64"
    glibc: str | None = None
    notes: tuple[str, ...] = field(default=())  # why a source was skipped; shown by info/doctor

    def to_json(self) -> dict[str, object]:
        return {
            "driver": asdict(self.driver) if self.driver else None,
            "gpus": [asdict(g) for g in self.gpus],
            "os": self.os,
            "arch": self.arch,
            "glibc": self.glibc,
            "notes": list(self.notes),
        }
