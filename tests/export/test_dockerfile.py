"""`--format dockerfile` and `--format apptainer`: the build context, its activation, contract and quoting."""

from __future__ import annotations

import hashlib
import json
import os
import subprocess
from pathlib import Path

import pytest

from cuenv.activation.plan import activated_env
from cuenv.activation.target import ActivationTarget, CudaLayout
from cuenv.envs.meta import EnvMeta, RecipeRef, layout_from_json
from cuenv.export.dockerfile import quote
from cuenv.export.imagespec import choose_base, cuda_base_tag, image_prefix
from cuenv.export.relocate import moved_layout
from cuenv.knowledge.stack import Stack
from tests.export.exportkit import HOSTILE, cuenv, meta_of

pytestmark = pytest.mark.network


def env_lines(dockerfile: str) -> dict[str, str]:
    """The ENV instruction's pairs, unquoted the way Docker's lexer does (\\ escapes the next char)."""
    block = dockerfile.split("\nENV ", 1)[1].split("\n\n", 1)[0]
    out = {}
    for part in block.split(" \\\n    "):
        key, raw = part.strip().split("=", 1)
        assert raw[0] == raw[-1] == '"'
        body, value, i = raw[1:-1], [], 0
        while i < len(body):
            if body[i] == "\\":
                i += 1
            value.append(body[i])
            i += 1
        out[key] = "".join(value)
    return out


@pytest.mark.parametrize(
    ("value", "quoted"),
    [
        ("plain", '"plain"'),
        ('say "hi"', '"say \\"hi\\""'),
        ("$HOME and ${X}", '"\\$HOME and \\${X}"'),
        ("back\\slash\\", '"back\\\\slash\\\\"'),
        ("it's ünï", '"it\'s ünï"'),
    ],
)
def test_dockerfile_quoting_table(value: str, quoted: str) -> None:
    assert quote(value) == quoted


def test_newline_is_refused(cli) -> None:
    from cuenv.errors import UsageError

    with pytest.raises(UsageError, match="line break"):
        quote("two\nlines", "X")


def _meta(kind: str, cuda: str, resolved: dict[str, str], python: str | None = None) -> EnvMeta:
    return EnvMeta(name="e", recipe=RecipeRef("r"), engine=kind, stack=Stack(label="e", cuda=cuda), python=python,
                   layout=CudaLayout(prefix=Path("/e"), kind=kind), resolved=resolved)


def test_base_choice() -> None:
    venv = _meta("venv", "12.4", {"libcudart": "12.4.127"}, python="3.12")
    conda = _meta("conda", "12.1", {"libcudart": "12.1.105"})
    system = _meta("conda", "11.8", {})
    assert choose_base(venv)[0] == "python:3.12-slim-bookworm"
    assert choose_base(conda)[0] == "debian:bookworm-slim"
    assert choose_base(system)[0] == "nvidia/cuda:11.8.0-base-ubuntu22.04"
    assert choose_base(system, override="registry.local/base:1") == ("registry.local/base:1", "given with --base")
    assert cuda_base_tag("12.6") == "nvidia/cuda:12.6.0-base-ubuntu24.04"
    assert cuda_base_tag("11.4") == "nvidia/cuda:11.4.0-base-ubuntu20.04"


def test_dockerfile_context_venv(venv_env: str, tmp_path: Path) -> None:
    out = tmp_path / "ctx"
    cuenv("export", venv_env, "--format", "dockerfile", "-o", str(out))
    meta = meta_of(venv_env)
    home = Path(os.environ["CUENV_HOME"])
    text = (out / "Dockerfile").read_text()
    assert "FROM python:3.11-slim-bookworm\n" in text
    # the lock travels byte for byte: its sha256 is the environment's lock hash (and a label)
    lock = (out / "cuenv" / "solution.json").read_bytes()
    assert lock == (home / "envs" / venv_env / ".cuenv" / "solution.json").read_bytes()
    assert "sha256:" + hashlib.sha256(lock).hexdigest() == meta["lock_hash"]
    reqs = (out / "cuenv" / "requirements.txt").read_text().splitlines()
    solution = json.loads(lock)
    assert sorted(reqs) == sorted(f"{p['name']} @ {p['url']} --hash=sha256:{p['sha256']}" for p in solution["packages"])
    install = (out / "cuenv" / "install.sh").read_text()
    assert "--require-hashes" in install and "--no-deps" in install
    subprocess.run(["sh", "-n", str(out / "cuenv" / "install.sh")], check=True)
    # the image's nvcc is the environment's shim, never the base image's other CUDA (issue 17 §1)
    assert (out / "cuenv" / "shims" / "nvcc").read_text().startswith("#!/bin/sh\n# cuenv-shim nvcc")
    assert 'cp -R "$here/shims" "$prefix/.cuenv/"' in install
    # ENV is exactly `cuenv use` inside the image (over the image's default PATH), plus the NVIDIA contract
    prefix = image_prefix(venv_env)
    target = ActivationTarget(venv_env, moved_layout(layout_from_json(meta["layout"]), prefix), meta["env_vars"],
                              shims_dir=Path(prefix) / ".cuenv" / "shims")
    base = {"PATH": "/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin"}
    expected = activated_env(base, target, Path("/opt/cuenv"))
    expected["PATH"] += f":{prefix}/.cuenv/bin"
    env = env_lines(text)
    assert {k: v for k, v in env.items() if not k.startswith("NVIDIA_")} == {k: v for k, v in expected.items() if base.get(k) != v}
    assert env["NCCL_SOCKET_IFNAME"] == HOSTILE
    assert env["NVIDIA_REQUIRE_CUDA"] == "cuda>=12.1"
    assert env["NVIDIA_VISIBLE_DEVICES"] == "all" and env["NVIDIA_DRIVER_CAPABILITIES"] == "compute,utility"
    assert env["LD_LIBRARY_PATH"].startswith(f"{prefix}/lib/python3.11/site-packages/nvidia/")
    assert '"io.cuenv.driver.min"="530.30.02"' in text and f'"io.cuenv.lock.hash"="{meta["lock_hash"]}"' in text
    assert '"io.cuenv.compute-capabilities"="5.0,5.2,5.3,6.0,6.1,6.2,7.0,7.2,7.5,8.0,8.6,8.7,8.9,9.0"' in text
    assert f'HEALTHCHECK --interval=10m --timeout=2m --start-period=30s CMD ["{prefix}/.cuenv/bin/cuenv-smoke-test"]' in text
    moved = json.loads((out / "cuenv" / "meta.json").read_text())
    assert moved["layout"]["prefix"] == prefix and str(home) not in json.dumps(moved)


def test_dockerfile_conda_is_multi_stage(conda_env: str, tmp_path: Path) -> None:
    out = tmp_path / "ctx"
    done = cuenv("export", conda_env, "--format", "dockerfile", "-o", str(out), "--base", "registry.local/slim:1")
    text = (out / "Dockerfile").read_text()
    prefix = image_prefix(conda_env)
    assert "FROM mambaorg/micromamba:2.0.5 AS build\n" in text and "FROM registry.local/slim:1\n" in text
    assert f"COPY --from=build {prefix} {prefix}\n" in text
    explicit = (out / "cuenv" / "explicit.txt").read_text().splitlines()
    assert explicit[2] == "@EXPLICIT" and all("#" in line for line in explicit[3:]) and len(explicit) == 3 + 5
    assert env_lines(text)["CONDA_PREFIX"] == prefix
    assert "cannot reach" in done.stdout  # the local channel's file:// URLs are said, not hidden


def test_export_refuses_to_overwrite(venv_env: str, tmp_path: Path) -> None:
    out = tmp_path / "ctx"
    cuenv("export", venv_env, "--format", "dockerfile", "-o", str(out))
    before = (out / "Dockerfile").read_text()
    done = cuenv("export", venv_env, "--format", "dockerfile", "-o", str(out), check=False)
    assert done.returncode == 2 and done.stderr.startswith("error: ") and "Traceback" not in done.stderr
    assert (out / "Dockerfile").read_text() == before


def test_apptainer_definition(venv_env: str, tmp_path: Path) -> None:
    out = tmp_path / "def"
    cuenv("export", venv_env, "--format", "apptainer", "-o", str(out))
    text = (out / f"{venv_env}.def").read_text()
    prefix = image_prefix(venv_env)
    assert text.count("Bootstrap: docker") == 1 and "From: python:3.11-slim-bookworm" in text
    assert "%files\n    cuenv /opt/cuenv/.build\n" in text
    assert f"%test\n    exec {prefix}/.cuenv/bin/cuenv-smoke-test\n" in text
    assert "    io.cuenv.cuda 12.1\n" in text
    # %environment is sh: source it in a real sh and read the values back
    block = text.split("%environment\n", 1)[1].split("\n\n", 1)[0]
    script = block + '\nprintf "%s\\0" "$NCCL_SOCKET_IFNAME" "$LD_LIBRARY_PATH" "$CUDA_HOME"'
    values = subprocess.run(["sh", "-c", script], capture_output=True, text=True, check=True, env={}).stdout.split("\0")
    assert values[0] == HOSTILE
    assert values[1].endswith(":/.singularity.d/libs")  # `--nv` driver libraries stay reachable
    assert values[2] == f"{prefix}/.cuenv/cuda"
