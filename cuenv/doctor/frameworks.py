"""Ask a framework inside an environment what it was built with and what it sees (issue 8 §6).

Each framework is imported in its own child process (a hung or crashing import costs only
that probe), with the environment's activated variables and a timeout. The child prints one
JSON line after a marker; warnings it emits are kept, since they often carry the real cause
("... with CUDA capability sm_120 is not compatible with the current PyTorch installation").
"""

from __future__ import annotations

import json
from dataclasses import replace
from pathlib import Path
from typing import Final, Mapping

from cuenv.doctor.model import FrameworkFacts, FrameworkProbe

MARKER: Final = "@@cuenv-doctor@@"
TIMEOUT: Final = 120.0  # a cold `import torch` on a network filesystem can take a minute

# name -> (import name, folder under site-packages that says it is installed)
FRAMEWORKS: Final = (("torch", "torch"), ("paddle", "paddle"), ("tensorflow", "tensorflow"), ("jax", "jax"))

PROBE: Final = r'''
import io, json, sys, warnings, contextlib
name = sys.argv[1]
out = {"name": name}
buf = io.StringIO()
def cudnn_text(v):
    if not v:
        return None
    v = int(v)
    return "%d.%d.%d" % (v // 10000, v // 100 % 100, v % 100) if v >= 10000 else "%d.%d.%d" % (v // 1000, v // 100 % 10, v % 100)
with warnings.catch_warnings(record=True) as caught, contextlib.redirect_stderr(buf):
    warnings.simplefilter("always")
    try:
        if name == "torch":
            import torch
            out["version"] = torch.__version__
            out["cuda"] = torch.version.cuda
            out["cudnn"] = cudnn_text(torch.backends.cudnn.version()) if torch.version.cuda else None
            out["available"] = torch.cuda.is_available()
            out["device_count"] = torch.cuda.device_count()
            out["arch_list"] = list(torch.cuda.get_arch_list()) if torch.version.cuda else []
        elif name == "paddle":
            import paddle
            out["version"] = paddle.__version__
            out["cuda"] = paddle.version.cuda() if paddle.is_compiled_with_cuda() else None
            out["cudnn"] = cudnn_text(paddle.version.cudnn()) if out["cuda"] else None
            out["device_count"] = paddle.device.cuda.device_count() if out["cuda"] else 0
            out["available"] = bool(out["device_count"])
        elif name == "tensorflow":
            import tensorflow as tf
            info = tf.sysconfig.get_build_info()
            out["version"] = tf.__version__
            out["cuda"] = info.get("cuda_version")
            out["cudnn"] = info.get("cudnn_version")
            gpus = tf.config.list_physical_devices("GPU")
            out["device_count"] = len(gpus)
            out["available"] = bool(gpus)
        elif name == "jax":
            import jax
            out["version"] = jax.__version__
            try:
                devices = jax.devices("gpu")
            except RuntimeError as exc:
                devices = []
                out["error"] = str(exc).splitlines()[0]
            out["device_count"] = len(devices)
            out["available"] = bool(devices)
    except Exception as exc:
        out["error"] = "%s: %s" % (type(exc).__name__, str(exc).splitlines()[0] if str(exc) else "")
out["messages"] = [str(w.message) for w in caught] + [l for l in buf.getvalue().splitlines() if l.strip()][-20:]
sys.stdout.write("\n@@cuenv-doctor@@" + json.dumps(out, default=str) + "\n")
'''


def installed(site_packages: tuple[Path, ...]) -> tuple[str, ...]:
    """Frameworks present in these site-packages folders, found without importing anything."""
    found = []
    for name, folder in FRAMEWORKS:
        if any((sp / folder / "__init__.py").is_file() for sp in site_packages):
            found.append(name)
    return tuple(found)


def parse_output(name: str, stdout: str) -> FrameworkProbe:
    """The probe's JSON line -> FrameworkProbe (a missing line is an error probe)."""
    for line in reversed(stdout.splitlines()):
        if line.startswith(MARKER):
            try:
                data = json.loads(line[len(MARKER):])
            except ValueError:
                break
            return FrameworkProbe(
                name=name, version=data.get("version"), cuda=data.get("cuda"), cudnn=data.get("cudnn"),
                available=data.get("available"), device_count=data.get("device_count"),
                arch_list=tuple(data.get("arch_list") or ()), error=data.get("error"),
                messages=tuple(data.get("messages") or ()),
            )
    return FrameworkProbe(name=name, error="the probe printed no result")


def probe(python: Path, site_packages: tuple[Path, ...], environ: Mapping[str, str],
          timeout: float = TIMEOUT) -> FrameworkFacts:
    """Run the probe for every framework installed in the environment."""
    from cuenv import runner
    from cuenv.errors import ToolError

    if not python.exists():
        return FrameworkFacts(python=str(python), error=f"{python} does not exist")
    probes = []
    for name in installed(site_packages):
        try:
            done = runner.run([python, "-c", PROBE, name], timeout=timeout, env=environ, check=False)
        except ToolError as exc:
            probes.append(FrameworkProbe(name=name, error=exc.message))
            continue
        found = parse_output(name, done.stdout)
        extra = tuple(line for line in done.stderr.splitlines() if line.strip())[-20:]
        if extra:
            found = replace(found, messages=found.messages + extra)
        if found.error == "the probe printed no result":
            tail = (done.stderr or done.stdout).strip().splitlines()[-3:]
            found = FrameworkProbe(name=name, error=f"the probe exited {done.returncode}: " + " | ".join(tail),
                                   messages=tuple(tail))
        probes.append(found)
    return FrameworkFacts(python=str(python), probes=tuple(probes))
