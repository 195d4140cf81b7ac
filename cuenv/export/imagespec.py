"""What a container image of an environment holds, whatever writes its definition (issue 7 §1, §3).

The Dockerfile and the Apptainer definition are two spellings of one :class:`ImageSpec`:

- the same build files (``cuenv/`` in the build context): the environment's lock
  (``solution.json``, byte for byte, so its sha256 is the image's ``io.cuenv.lock.hash``), the
  exact install list derived from it (``requirements.txt`` with a sha256 per wheel, or conda's
  ``explicit.txt``) and ``install.sh``, which rebuilds the environment from them with no solve;
- the same activation: :func:`cuenv.activation.plan.apply` over the base image's variables, with the
  environment moved to ``/opt/cuenv/envs/NAME`` (the in-image CUENV_HOME is ``/opt/cuenv``);
- the same hardware contract (labels, ``NVIDIA_REQUIRE_CUDA``) and smoke test.
"""

from __future__ import annotations

import json
import os
import shlex
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any, Final, Mapping

from cuenv.envs import folder
from cuenv.envs.folder import BIN_DIR, META_DIR, META_FILE, SHIMS_DIR, SMOKE_SCRIPT, SMOKE_TOOL, SOLUTION_FILE
from cuenv.errors import UsageError

if TYPE_CHECKING:
    from cuenv.envs.meta import EnvMeta, Tool
from cuenv.export import ExportSource, Output

IMAGE_HOME: Final = "/opt/cuenv"
BUILD_DIR: Final = "/opt/cuenv/.build"  # where the context's cuenv/ lands while building
CONTEXT_DIR: Final = "cuenv"  # the build files' folder in the context (and in an Apptainer build dir)
DEFAULT_PATH: Final = "/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin"  # docker's and apptainer's default
# micromamba installs the @EXPLICIT list in a build stage; only the prefix reaches the final image.
# 2.x reads `URL#sha256` lines (explicit_file's format). Overridable with --builder-image.
CONDA_BUILDER: Final = "mambaorg/micromamba:2.0.5"
SLIM_DISTRO: Final = "debian:bookworm-slim"
LABEL_PREFIX: Final = "io.cuenv."


@dataclass(frozen=True)
class ImageSpec:
    name: str
    prefix: str  # the environment's prefix inside the image
    kind: str  # venv | conda
    base: str  # the final image's base
    base_reason: str
    builder: str | None  # a build-stage image (conda: micromamba); None = build in the final stage
    env: tuple[tuple[str, str], ...]  # activation, in order
    labels: tuple[tuple[str, str], ...]
    require_cuda: str | None  # NVIDIA_REQUIRE_CUDA
    smoke_test: str | None  # path of the smoke-test script in the image
    files: tuple[Output, ...]  # the build files, paths under CONTEXT_DIR
    notes: tuple[str, ...] = ()


def image_prefix(name: str) -> str:
    return f"{IMAGE_HOME}/envs/{name}"


# -- the base image ---------------------------------------------------------------------------
def carries_runtime(meta: EnvMeta) -> bool:
    """Whether the environment brings its own libcudart (cuenv's recipes all do)."""
    return bool(meta.resolved.get("libcudart"))


def cuda_base_tag(cuda: str) -> str:
    """NVIDIA's ``nvidia/cuda:X.Y.0-base-DISTRO`` tag for a CUDA release (the tag scheme of the
    nvidia/cuda repository: Ubuntu 24.04 images from 12.5, 22.04 from 11.7, else 20.04)."""
    major, minor = (int(x) for x in cuda.split(".")[:2])
    distro = "ubuntu24.04" if (major, minor) >= (12, 5) else "ubuntu22.04" if (major, minor) >= (11, 7) else "ubuntu20.04"
    return f"nvidia/cuda:{major}.{minor}.0-base-{distro}"


def choose_base(meta: EnvMeta, *, override: str | None = None) -> tuple[str, str]:
    """(image, why). A venv needs the Python its lock was made for; a conda prefix brings its own."""
    if override:
        return override, "given with --base"
    kind, cuda = meta.layout.kind, meta.cuda or ""
    if kind == "venv":
        py = meta.python or ""
        return f"python:{py}-slim-bookworm", f"the venv needs Python {py}; its wheels bring the CUDA runtime"
    if carries_runtime(meta) or not cuda:
        return SLIM_DISTRO, "the prefix carries its own CUDA runtime"
    return cuda_base_tag(cuda), f"the prefix relies on a system CUDA {cuda} runtime"


# -- activation and the hardware contract ------------------------------------------------------
def container_env(source: ExportSource, prefix: str, base_env: Mapping[str, str]) -> tuple[tuple[str, str], ...]:
    """The variables the image sets: `cuenv use` applied inside the image over ``base_env``."""
    from cuenv.activation.plan import apply, plan_for
    from cuenv.activation.target import ActivationTarget
    from cuenv.export.relocate import moved_layout

    record = source.record
    target = ActivationTarget(name=record.name, layout=moved_layout(record.layout(), prefix),
                              env_vars=dict(record.meta.env_vars),
                              shims_dir=Path(prefix) / META_DIR / SHIMS_DIR)
    plan = plan_for(target, envs_dir=Path(IMAGE_HOME) / "envs")
    new, _ = apply(base_env, plan)
    new["PATH"] = new.get("PATH", "") + f":{prefix}/{META_DIR}/{BIN_DIR}"  # last: the image's cuenv-smoke-test
    return tuple((k, new[k]) for k in plan.touched if k in new and new[k] != base_env.get(k))


def require_cuda(meta: EnvMeta) -> str | None:
    """The NVIDIA container runtime refuses to start the container on a driver below this CUDA."""
    cuda = meta.cuda
    return f"cuda>={cuda}" if cuda else None


def labels(meta: EnvMeta, *, base: str) -> tuple[tuple[str, str], ...]:
    from cuenv.knowledge import matrix

    stack = meta.stack
    cuda = meta.cuda
    ref = meta.recipe.label()
    rows = {
        "org.opencontainers.image.title": meta.name,
        "org.opencontainers.image.description": f"cuenv environment {meta.name} ({stack.label or ref}, CUDA {cuda})",
        "org.opencontainers.image.base.name": base,
        LABEL_PREFIX + "recipe": ref,
        LABEL_PREFIX + "recipe.hash": meta.recipe.hash,
        LABEL_PREFIX + "engine": meta.engine,
        LABEL_PREFIX + "python": meta.python,
        LABEL_PREFIX + "cuda": cuda,
        LABEL_PREFIX + "cudnn": meta.cudnn,
        LABEL_PREFIX + "framework": meta.framework,
        LABEL_PREFIX + "driver.min": matrix.min_driver(cuda) if cuda else None,
        LABEL_PREFIX + "driver.min-compat": matrix.family_floor(int(str(cuda).split(".")[0])) if cuda else None,
        LABEL_PREFIX + "compute-capabilities": ",".join(stack.sass) or None,
        LABEL_PREFIX + "ptx": ",".join(stack.ptx) or None,
        LABEL_PREFIX + "lock.hash": meta.lock_hash,
    }
    return tuple((k, str(v)) for k, v in rows.items() if v)


# -- the build files ----------------------------------------------------------------------------
def sh(value: str) -> str:
    return shlex.quote(value)


def cuda_home_links(source: ExportSource) -> tuple[tuple[str, str], ...]:
    """(path under the prefix, link target) of the venv's CUDA_HOME symlink tree (relative links)."""
    from cuenv.export.relocate import moved

    layout = source.record.layout()
    home = layout.cuda_home
    if home is None or layout.kind != "venv" or not Path(home).is_dir():
        return ()
    prefix = Path(layout.prefix)
    links = []
    for root, dirs, files in os.walk(home):
        for entry in sorted([*dirs, *files]):
            path = Path(root) / entry
            if path.is_symlink():
                target = os.readlink(path)
                links.append((str(path.relative_to(prefix)), moved(target, prefix, image_prefix(source.record.name))))
    return tuple(sorted(links))


def image_tools(meta: EnvMeta, prefix: str) -> tuple[dict[str, Tool], tuple[Output, ...]]:
    """The image's CUDA tool record and its shims (issue 17 §1): the environment's own tools, moved to
    ``prefix``; every other tool a shim (which still runs a same-release tool it finds on PATH)."""
    from cuenv.activation import shims
    from cuenv.envs import cudatools
    from cuenv.envs.meta import Tool
    from cuenv.export.relocate import moved

    old = meta.layout.prefix
    own = {t: moved(v.path, old, prefix) for t, v in (meta.tools or {}).items() if v.source == "env" and v.path}
    rel = cudatools.env_release(meta)
    shims_dir = f"{prefix}/{META_DIR}/{SHIMS_DIR}"
    choices = shims.choose(env_tools=own, env_release=rel, toolkits=())
    files = []
    for c in shims.shimmed(choices):
        remedies = ("rebuild the environment with its compiler where cuenv runs (`cuenv create` with --with-nvcc)"
                    " and export it again" if c.tool == "nvcc" else f"this image has no CUDA {rel or ''} {c.tool}",
                    f"run the other one anyway: {shims.ESCAPE_VAR}=1 {c.tool} ...")
        text = shims.script(choice=c, env_name=meta.name, env_release=rel, shims_dir=shims_dir, remedies=remedies)
        files.append(Output(f"{CONTEXT_DIR}/{SHIMS_DIR}/{c.tool}", text, mode=0o755))
    return {c.tool: Tool(c.source, c.path, None) for c in choices}, tuple(files)


def smoke_files(meta: EnvMeta, prefix: str) -> tuple[Output, ...]:
    test = meta.runnable_smoke_test()  # an archive's only after the user's consent (issue 31 §4)
    if test is not None and test.python:
        script = f"exec python {sh(f'{prefix}/{META_DIR}/{SMOKE_SCRIPT}')} \"$@\"\n"
        extra: tuple[Output, ...] = (Output(f"{CONTEXT_DIR}/{SMOKE_SCRIPT}", test.python),)
    elif test is not None and test.command:
        script = "exec " + " ".join(sh(a) for a in test.command) + "\n"
        extra = ()
    else:
        return ()
    head = f"#!/bin/sh\n# The smoke test of cuenv environment {meta.name} (the image's health check).\n"
    return (Output(f"{CONTEXT_DIR}/smoke-test", head + script, mode=0o755), *extra)


def install_script(source: ExportSource, prefix: str, *, links: tuple[tuple[str, str], ...], smoke: bool,
                   shims: bool = False) -> str:
    """POSIX sh that rebuilds the environment at ``prefix`` from the lock, run inside the build."""
    meta = source.record.meta
    kind = meta.layout.kind
    lock_hash = meta.lock_hash or ""
    lines = [
        "#!/bin/sh",
        f"# Generated by cuenv: rebuild environment {meta.name} exactly from its lock. No solve:",
        "# every package is the locked artifact, checked against its hash by the installer.",
        "set -eu",
        'here=$(cd "$(dirname "$0")" && pwd)',
        f"prefix={sh(prefix)}",
    ]
    if lock_hash.startswith("sha256:"):
        lines.append(f'echo {sh(lock_hash[7:] + "  " + SOLUTION_FILE)} | (cd "$here" && sha256sum -c - >/dev/null) '
                     f'|| {{ echo "{SOLUTION_FILE} does not match the lock hash of the export" >&2; exit 1; }}')
    if kind == "venv":
        py = f"python{meta.python or '3'}"
        lines += [
            f"python={sh(py)}",
            'command -v "$python" >/dev/null || { echo "$python is not in the base image" >&2; exit 1; }',
            '"$python" -m venv --without-pip "$prefix"',
            '"$python" -m pip --python "$prefix/bin/python" install --no-deps --require-hashes --only-binary=:all: '
            '--no-cache-dir --no-input --disable-pip-version-check -r "$here/requirements.txt"',
        ]
    else:
        lines.append('"${MAMBA_EXE:-micromamba}" create --yes --prefix "$prefix" --file "$here/explicit.txt"')
    lines.append(f'mkdir -p "$prefix/{META_DIR}/{BIN_DIR}"')
    for path in sorted({str(Path(p).parent) for p, _ in links}):
        lines.append(f'mkdir -p "$prefix"/{sh(path)}')
    for path, target in links:
        lines.append(f'ln -sfn {sh(target)} "$prefix"/{sh(path)}')
    lines.append(f'cp "$here/{SOLUTION_FILE}" "$here/{META_FILE}" "$prefix/{META_DIR}/"')
    if shims:
        lines.append(f'cp -R "$here/{SHIMS_DIR}" "$prefix/{META_DIR}/"')
    if smoke:
        lines += [
            f'cp "$here/smoke-test" "$prefix/{META_DIR}/{BIN_DIR}/{SMOKE_TOOL}"',
            f'[ ! -f "$here/{SMOKE_SCRIPT}" ] || cp "$here/{SMOKE_SCRIPT}" "$prefix/{META_DIR}/"',
            f'chmod 755 "$prefix/{META_DIR}/{BIN_DIR}/{SMOKE_TOOL}"',
        ]
    return "\n".join(lines) + "\n"


def lock_files(source: ExportSource) -> tuple[Output, ...]:
    """solution.json as the environment recorded it, the exact install list derived from it, and the
    environment's cuenv.lock (packages plus the hardware contract, for `cuenv create --from-lock`)."""
    record, solution = source.record, source.solution
    raw = folder.read_solution_text(record.path)
    if record.meta.layout.kind == "venv":
        from cuenv.engines.venv import requirements_lines

        listed = Output(f"{CONTEXT_DIR}/requirements.txt",
                        source.credentials_note() + requirements_lines(solution.packages, mirrors=source.mirrors))
    else:
        from cuenv.engines.conda import explicit_file

        listed = Output(f"{CONTEXT_DIR}/explicit.txt", source.credentials_note() + explicit_file(solution, mirrors=source.mirrors))
    from cuenv.envs.lockmake import for_environment
    from cuenv.lock.model import dump
    from cuenv.machine.model import Machine

    lock = dump(for_environment(record.meta, [solution], Machine(driver=None)))
    return Output(f"{CONTEXT_DIR}/{SOLUTION_FILE}", raw), listed, Output(f"{CONTEXT_DIR}/cuenv.lock", lock)


def image_spec(source: ExportSource, options: Mapping[str, Any], *, base_env: Mapping[str, str]) -> ImageSpec:
    from cuenv.export.relocate import moved_meta

    record = source.record
    meta = record.meta
    kind = meta.layout.kind
    if kind not in ("venv", "conda"):
        raise UsageError(f"Environment {record.name!r} has layout kind {kind!r}; only venv and conda prefixes go into images.")
    prefix = image_prefix(record.name)
    base, why = choose_base(meta, override=options.get("base"))
    notes = []
    if kind == "venv" and not carries_runtime(meta):
        notes.append(f"{record.name} has no CUDA runtime of its own: give --base an image that has Python "
                     f"{meta.python} and the CUDA {meta.cuda} runtime.")
    local = [p.name for p in source.solution.packages if p.url.startswith(("file:", "/"))]
    if local:
        notes.append(f"The lock names local files ({', '.join(local[:3])}{', ...' if len(local) > 3 else ''}), "
                     "which a container build cannot reach: serve that channel over HTTP or build where the path exists.")
    if meta.activate_scripts:
        notes.append("The prefix's conda activate.d scripts do not run in the image (only its variables are set).")
    smoke = smoke_files(meta, prefix)
    from cuenv.envs.meta import TRUST_SMOKE_FLAG, Validation

    if meta.archived_smoke_test():
        notes.append(f"The smoke test of {record.name} came in an archive and is not the image's health check; "
                     f"run it once with `cuenv test {record.name} {TRUST_SMOKE_FLAG}` to make it one.")
    links = cuda_home_links(source)
    tools, shim_files = image_tools(meta, prefix)
    # the validation is about the exporting machine, not the image's: judged there on first use
    moved = moved_meta(meta, name=record.name, new=prefix).replace(tools=tools, validation=Validation())
    files = (
        *lock_files(source),
        Output(f"{CONTEXT_DIR}/{META_FILE}", json.dumps(moved.to_json(), indent=2, sort_keys=True) + "\n"),
        Output(f"{CONTEXT_DIR}/install.sh", install_script(source, prefix, links=links, smoke=bool(smoke),
                                                           shims=bool(shim_files)), mode=0o755),
        *smoke,
        *shim_files,
    )
    return ImageSpec(
        name=record.name,
        prefix=prefix,
        kind=kind,
        base=base,
        base_reason=why,
        builder=(options.get("builder_image") or CONDA_BUILDER) if kind == "conda" else None,
        env=container_env(source, prefix, base_env),
        labels=labels(meta, base=base),
        require_cuda=require_cuda(meta),
        smoke_test=f"{prefix}/{META_DIR}/{BIN_DIR}/{SMOKE_TOOL}" if smoke else None,
        files=files,
        notes=tuple(notes),
    )


def single_line(value: str, what: str) -> str:
    """Dockerfile and Apptainer lines cannot carry a newline or NUL in a value."""
    if "\n" in value or "\r" in value or "\0" in value:
        raise UsageError(f"The value of {what} has a line break or NUL byte, which a container definition cannot carry.",
                         hint="Remove it from the recipe's env section, then recreate the environment.")
    return value
