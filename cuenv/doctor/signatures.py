"""The well-known CUDA error messages, recognised in pasted reports and in framework output.

Each signature maps a message (a regex over one line, case-insensitive) to a stable finding
code, its cause and its fix. The messages and causes are those collected in the reference's
``errors:`` section (/work/shared/reference/cuda-facts.yaml) plus the framework and container
variants seen in public bug reports (tests/doctor/fixtures/SOURCES.yaml). Pure data and matching.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Final, Iterable

from cuenv.doctor.model import ErrorHit


@dataclass(frozen=True)
class Signature:
    pattern: str
    code: str
    severity: str
    cause: str  # may use {1}, {2} for the pattern's groups
    fix: str

    def match(self, line: str) -> re.Match[str] | None:
        return re.search(self.pattern, line, re.IGNORECASE)


_DRIVER_FIX: Final = ("Install a driver at least as new as the build's CUDA needs (`cuenv check` names the minimum), "
                      "or use a build for an older CUDA (e.g. cu118/cu121 instead of cu126/cu128).")
_RELOAD: Final = ("Reboot, or stop every GPU process and reload the module: `sudo rmmod nvidia_drm nvidia_modeset "
                  "nvidia_uvm nvidia && sudo modprobe nvidia`; keep one driver installation (distribution package or .run, not both).")

SIGNATURES: Final = (
    Signature(r"CUDA driver version is insufficient for CUDA runtime version|cudaErrorInsufficientDriver",
              "driver-too-old", "error",
              "The driver is older than the CUDA runtime the program was built with (cudaErrorInsufficientDriver, 35).",
              _DRIVER_FIX),
    Signature(r"The NVIDIA driver on your system is too old \(found version (\d+)\)",
              "driver-too-old", "error",
              "PyTorch found a driver that supports only CUDA {1}, older than the CUDA it was built with.",
              _DRIVER_FIX),
    Signature(r"the provided PTX was compiled with an unsupported toolchain|cudaErrorUnsupportedPtxVersion|"
              r"CUDA_ERROR_UNSUPPORTED_PTX_VERSION",
              "driver-too-old", "error",
              "The program carries only PTX made by a newer toolkit than the driver can JIT-compile "
              "(minor-version compatibility covers SASS, not PTX).",
              "Upgrade the driver to one of the toolkit's release, or use a build with SASS for this GPU."),
    Signature(r"no kernel image is available for execution on the device|cudaErrorNoKernelImageForDevice",
              "arch-unsupported", "error",
              "The binary has no SASS for this GPU's compute capability and no PTX the driver can use.",
              "Find the library without kernels for it: `cuenv check` of the environment (or of one file, with the"
              " GPU's --cc) reads them; install a build whose arch list covers the GPU,"
              " or rebuild with TORCH_CUDA_ARCH_LIST / -gencode for its sm."),
    Signature(r"with CUDA capability (sm_\d+) is not compatible with the current PyTorch installation",
              "arch-unsupported", "error",
              "This PyTorch build carries no kernels for {1}.",
              "Install a PyTorch build whose arch list includes {1} (for sm_120: cu128 or newer; "
              "for sm_37/sm_50-sm_61: an older cu11x/cu12x build)."),
    Signature(r"Failed to initialize NVML: Driver/library version mismatch|NVML library version: ?[\d.]+",
              "driver-library-mismatch", "error",
              "The user-space driver libraries (libnvidia-ml, libcuda) were upgraded but the old kernel module is "
              "still loaded, typically after an unattended driver upgrade.",
              _RELOAD),
    Signature(r"API mismatch: the NVIDIA kernel module has version ([\d.]+)",
              "driver-library-mismatch", "error",
              "The loaded kernel module ({1}) is not the version of the user-space driver libraries.",
              _RELOAD),
    Signature(r"NVIDIA-SMI has failed because it couldn't communicate with the NVIDIA driver|"
              r"Found no NVIDIA driver on your system",
              "no-driver", "error",
              "No NVIDIA kernel driver is loaded (not installed, not built for the running kernel after a kernel "
              "update, or blocked by Secure Boot).",
              "Install the NVIDIA driver for the running kernel and reboot; check `lsmod | grep nvidia` and "
              "`dmesg | grep -i nvidia`."),
    Signature(r"no CUDA-capable device is detected|cudaErrorNoDevice|CUDA_ERROR_NO_DEVICE",
              "no-gpu", "error",
              "The driver answered but no GPU is visible to this process: CUDA_VISIBLE_DEVICES is empty or wrong, "
              "or a container was started without GPU access.",
              "Unset or fix CUDA_VISIBLE_DEVICES; start containers with `--gpus all` (Docker) or "
              "`--device nvidia.com/gpu=all` (CDI)."),
    Signature(r"Error: libcuda\.so: cannot open shared object file",
              "library-not-found", "error",
              "cuDNN 8 opens the unversioned libcuda.so, which only the driver's development link provides; it is "
              "often missing on WSL and in containers although libcuda.so.1 is there.",
              "Add the driver's folder to LD_LIBRARY_PATH (WSL: /usr/lib/wsl/lib), or create the link: "
              "`sudo ln -s libcuda.so.1 libcuda.so` in the folder holding libcuda.so.1."),
    Signature(r"(libcuda\.so\.1): cannot open shared object file|Could not load dynamic library '(libcuda\.so\.1)'",
              "no-driver", "error",
              "libcuda.so.1 is part of the NVIDIA driver, not of the CUDA toolkit or the wheels: no driver is "
              "installed, or its library folder is not on the loader path.",
              "Install the NVIDIA driver; in a container, use the NVIDIA Container Toolkit so the driver's libraries "
              "are mounted in."),
    Signature(r"CUDA driver is a stub library|cudaErrorStubLibrary|CUDA_ERROR_STUB_LIBRARY",
              "driver-stub-library", "error",
              "The loader found the toolkit's link-time stub libcuda.so (lib64/stubs) instead of the driver's library.",
              "Remove the `.../stubs` folder from LD_LIBRARY_PATH (it is only for linking); the real libcuda.so.1 comes "
              "with the NVIDIA driver, so install the driver if none is present."),
    Signature(r"(libcudnn_(?:ops|cnn|adv)_(?:infer|train)\.so\.8)(?:: cannot open shared object file|\.?\s*$)",
              "library-not-found", "error",
              "{1} is a cuDNN 8 library: cuDNN 8 is not installed or not on the loader path (cuDNN 9 renamed its "
              "libraries to libcudnn_ops.so.9, libcudnn_cnn.so.9, ... and does not satisfy it).",
              "Install cuDNN 8 for your CUDA major (nvidia-cudnn-cu11 or nvidia-cudnn-cu12 8.9.x, conda cudnn=8) into "
              "the environment, or move the program to a cuDNN 9 build."),
    Signature(r"(lib[\w+-]*\.so[.\d]*): cannot open shared object file",
              "library-not-found", "error",
              "{1} cannot be found by the dynamic loader: the library of that major version is not installed, or its "
              "folder is on neither LD_LIBRARY_PATH, the RUNPATH nor the linker cache.",
              "Install the library for that major version (e.g. nvidia-cuda-runtime-cu11 for libcudart.so.11.0) into "
              "the environment, or a build of the program for the CUDA you have; `cuenv doctor` with the "
              "environment's name shows where each library would come from."),
    Signature(r"Could not load (?:dynamic )?library '?(lib\w+\.so[.\d]*)'?|Unable to load any of \{(lib\w+\.so[.\d]*)",
              "library-not-found", "error",
              "{1}{2} cannot be found by the dynamic loader.",
              "Install the library for that major version into the environment (or its folder onto LD_LIBRARY_PATH); "
              "`cuenv doctor` with the environment's name shows where each library would come from."),
    Signature(r"cuDNN version (?:incompatibility|mismatch): PyTorch was compiled\s+against \(?([\d, ]+)\)? but "
              r"(?:found runtime version|linked against) \(?([\d, ]+)\)?",
              "cudnn-mismatch", "error",
              "PyTorch was built against cuDNN ({1}) but loads cuDNN ({2}): another cuDNN shadows the one it ships.",
              "Remove the other cuDNN from LD_LIBRARY_PATH (or uninstall it from the environment) so the framework "
              "loads the cuDNN it was built with."),
    Signature(r"Loaded runtime CuDNN library: ([\d.]+) but source was compiled with: ([\d.]+)",
              "cudnn-mismatch", "error",
              "TensorFlow was built with cuDNN {2} but loads cuDNN {1}.",
              "Install the cuDNN the TensorFlow release was tested with (`pip install tensorflow[and-cuda]`), and drop "
              "other cuDNN folders from LD_LIBRARY_PATH."),
    Signature(r"The installed Paddle is compiled with CUDNN ([\d.]+), but CUDNN version in your machine is ([\d.]+)",
              "cudnn-mismatch", "error",
              "Paddle was built with cuDNN {1} but loads cuDNN {2}.",
              "Install the cuDNN Paddle's release asks for (its install page lists it per CUDA variant) and drop older "
              "cuDNN folders from LD_LIBRARY_PATH and PATH."),
    Signature(r"unsupported GNU version! gcc versions later than (\d+) are not supported",
              "compiler-too-new", "error",
              "nvcc's host_config.h rejects a gcc newer than {1}.",
              "Point nvcc at a supported gcc: `nvcc -ccbin g++-{1}` or `export CUDAHOSTCXX=/usr/bin/g++-{1}` "
              "(CMake), or use a newer CUDA toolkit; -allow-unsupported-compiler is at your own risk."),
    Signature(r"Torch not compiled with CUDA enabled|CUDA is not available.*compiled without CUDA|"
              r"Cannot use GPU, CUDA is not enabled",
              "cpu-only-build", "error",
              "A CPU-only build of the framework is installed.",
              "Install a CUDA build: `cuenv create torch-cu121` (or `pip install torch --index-url "
              "https://download.pytorch.org/whl/cu121`)."),
    Signature(r"could not select device driver \"\w*\" with capabilities: \[\[gpu\]\]|"
              r"unknown or invalid runtime name: nvidia|nvidia-container-cli: (?:command )?not found|"
              r"Unknown runtime specified nvidia",
              "no-container-toolkit", "error",
              "Docker cannot pass the GPU through: the NVIDIA Container Toolkit is not installed or not configured.",
              "Install nvidia-container-toolkit, then `sudo nvidia-ctk runtime configure --runtime=docker && "
              "sudo systemctl restart docker` (Podman: `sudo nvidia-ctk cdi generate --output=/etc/cdi/nvidia.yaml`)."),
    Signature(r"nvidia-container-cli: initialization error: (?:nvml error: driver not loaded|load library failed)",
              "no-driver", "error",
              "The container runtime found no loaded NVIDIA driver on the host.",
              "Install the driver on the host and reboot; check `nvidia-smi` on the host before starting containers."),
    Signature(r"gzip: stdin: invalid compressed data--format violated",
              "installer-corrupt", "error",
              "The CUDA .run installer is truncated or corrupt (an interrupted download, or an HTML page saved "
              "under the installer's name).",
              "Compare its size and checksum with NVIDIA's and download it again; keep several GB free in the "
              "temporary folder."),
)


# Report signatures that need more than one line: a container started without GPU access (nvidia-smi is
# mounted in by the NVIDIA Container Toolkit only for `--gpus`/CDI containers), and macOS (no CUDA at all: the
# CUDA 10.2 release notes call 10.2 the last release to support macOS; PyTorch publishes no CUDA build for it,
# https://github.com/pytorch/pytorch/issues/4516 and pytorch.github.io#1028).
_SMI_MISSING: Final = re.compile(r"nvidia-smi: (?:command )?not found|'nvidia-smi' is not recognized", re.IGNORECASE)
_CONTAINER_RUN: Final = re.compile(r"^.*\b(?:docker|podman)\s+(?:container\s+)?run\b.*$", re.IGNORECASE | re.MULTILINE)
_GPU_FLAGS: Final = re.compile(r"--gpus\b|--runtime[= ]nvidia|--device[= ]nvidia\.com/gpu|nvidia-docker|NVIDIA_VISIBLE_DEVICES")
# [ \t]*, not \s*: with MULTILINE a \s* run crosses lines and every line start rescans it (quadratic on blank lines)
_MACOS: Final = re.compile(r"^[ \t]*(?:OS:[ \t]*(?:macOS|Mac OSX?)\b.*|sys\.platform[ \t]+darwin\b.*|Platform:[ \t]*macOS.*)$",
                           re.IGNORECASE | re.MULTILINE)


def context(text: str) -> tuple[ErrorHit, ...]:
    """What a report shows across lines: a container run without GPU access; a macOS machine."""
    hits: list[ErrorHit] = []
    runs = _CONTAINER_RUN.findall(text)
    smi = _SMI_MISSING.search(text)
    if smi and runs and not any(_GPU_FLAGS.search(r) for r in runs):
        hits.append(ErrorHit(
            text=runs[0].strip()[:300], code="container-no-gpu", severity="error",
            message="The container was started without GPU access (no --gpus or CDI device), so the NVIDIA"
                    " Container Toolkit mounted neither the GPUs nor nvidia-smi and the driver's libraries into it.",
            fix="Start it with --gpus all (Podman and CDI: `--device nvidia.com/gpu=all`); in Compose,"
                " reserve the GPU under deploy.resources.reservations.devices. Test with"
                " `docker run --rm --gpus all ubuntu nvidia-smi`."))
    mac = _MACOS.search(text)
    if mac:
        hits.append(ErrorHit(
            text=mac.group(0).strip()[:300], code="macos-no-cuda", severity="error",
            message="This is macOS, which has no CUDA (NVIDIA's last macOS toolkit was 10.2, and PyTorch builds none"
                    " for it): CUDA cannot be available there, whatever build is installed.",
            fix="Use Apple's GPU through MPS: `python -c 'import torch; print(torch.backends.mps.is_available())'`,"
                " then device='mps'; for CUDA, run on Linux or Windows with an NVIDIA GPU."))
    return tuple(hits)


def scan(lines: Iterable[str]) -> tuple[ErrorHit, ...]:
    """Every recognised error, once per (code, message), in the order met."""
    hits: dict[tuple[str, str], ErrorHit] = {}
    for raw in lines:
        line = raw.strip()
        if not line:
            continue
        for sig in SIGNATURES:
            m = sig.match(line)
            if m is None:
                continue
            groups = [g or "" for g in m.groups()]
            cause, fix = _fill(sig.cause, groups), _fill(sig.fix, groups)
            if sig.code == "driver-too-old" and "found version" in sig.pattern and groups[0].isdigit():
                value = int(groups[0])
                cause = cause.replace(groups[0], f"{value // 1000}.{(value % 1000) // 10}")
            key = (sig.code, cause)
            hits.setdefault(key, ErrorHit(text=line[:300], code=sig.code, severity=sig.severity, message=cause, fix=fix))
            break
    return tuple(hits.values())


def _fill(template: str, groups: list[str]) -> str:
    """``{1}``, ``{2}``... in a signature's text -> the matched groups (empty when absent)."""
    return re.sub(r"\{(\d)\}", lambda g: groups[int(g.group(1)) - 1] if int(g.group(1)) <= len(groups) else "", template)
