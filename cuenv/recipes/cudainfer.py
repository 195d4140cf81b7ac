"""Which CUDA a project's pins ask for, and how cuenv knows (issue 15 §1-2). Pure.

Every pin that says something about CUDA becomes one :class:`Evidence` (the line, what it says, how
strongly), read from the selectors projects really use:

* conda: ``cuda-version``, ``cudatoolkit``, ``pytorch-cuda``, ``cuda-toolkit``, ``cuda-runtime``,
  ``cuda-cudart``, ``cuda-nvcc``/``nvcc_linux-64``, ``cudatoolkit-dev``, a ``pytorch`` build such as
  ``py3.9_cuda11.3_cudnn8.2.0_0`` or ``*cuda*``, ``cudnn``, and the metapackages that pick a PyTorch build
  (``cpuonly``, ``pytorch-cpu``, ``pytorch-mutex * cpu``: CPU; ``pytorch-gpu``: CUDA, the solver's);
* pip: ``+cuXXX`` local versions, PyTorch's ``/whl/cuXXX`` indexes for an unsuffixed torch, the PyPI
  default build of a pinned torch, ``jax[cudaNN]`` and ``jax-cudaNN-plugin``, ``jaxlib +cudaNN.cudnnNN``,
  ``tensorflow[and-cuda]``/``tensorflow`` releases, ``paddlepaddle-gpu`` ``.postXXX`` builds, NVIDIA's
  wheels (``nvidia-cuda-runtime-cu12==12.1.105``, ``nvidia-cudnn-cu12``, ``cuda-toolkit[cudart]==13.0.2`` read
  by cuenv.knowledge.wheelcuda), ``cupy-cudaXXX``, and the
  ``-cuNN`` suffix of RAPIDS-style wheels (a major only).

:func:`decide` turns the evidence into one answer or a refusal that names the disagreeing lines.
Facts about frameworks come from the knowledge base (cuenv.knowledge.matrix / builds), never from here.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, replace
from typing import Final

from cuenv.errors import UsageError
from cuenv.knowledge import builds, matrix, packages, versions
from cuenv.knowledge.stack import Stack
from cuenv.recipes.envyml import CondaSpec, EnvironmentFile
from cuenv.recipes.pipreqs import (
    PipOptions,
    PipRequirement,
    RequestFileError,
    RequirementsFile,
    Where,
)

STRENGTHS: Final = ("exact", "min", "major", "cpu", "unknown", "none")
_NVIDIA_EXACT: Final = re.compile(r"^nvidia-cuda-(runtime|nvrtc|cupti|nvcc|cccl)(-cu(\d+))?$")
_SUFFIX_MAJOR: Final = re.compile(r"^[a-z0-9][a-z0-9-]*-cu(\d{2})$")
_CUPY: Final = re.compile(r"^cupy-cuda(\d+)(x?)$")
_CUDA_EXTRA: Final = re.compile(r"^(?:cuda|cu)(\d{2})(?:[_-].*)?$")
_LOCAL_CU: Final = re.compile(r"(?:^|[^a-z])cu(\d{3,})(?:$|[^0-9])")
_PYG_PAGE: Final = re.compile(r"//data\.pyg\.org/whl/torch-(\d+(?:\.\d+)*)(?:\+|%2[Bb])(cu\d{3,}|cpu)\.html")
_LOCAL_MAJOR: Final = re.compile(r"(?:^|[^a-z])cu(\d{2})(?:$|[^0-9])")  # +cu12, +cu13: a major only
_INDEX_VARIANT: Final = re.compile(r"/(?:whl|packages/stable)/(cu\d{3,}|cpu|rocm[\d.]+)(?:/|$)")


@dataclass(frozen=True)
class Evidence:
    where: Where
    pin: str  # as written
    says: str  # "CUDA 11.8", "CUDA 12 (major only)", "a CPU-only build"
    strength: str  # exact | min | major | cpu
    cuda: str | None = None  # "11.8" (exact, min); None for major/cpu
    major: int | None = None
    cudnn: str | None = None
    nvcc: bool = False
    stack: Stack | None = None  # the framework build this pin names, when the knowledge base knows it
    layer: str = ""  # conda | pip: which layer of an environment.yml the pin is in
    bundled: bool = False  # a wheel that carries its own CUDA (+cu124 llama.cpp): it does not choose torch's
    unconfirmed: str | None = None  # a framework/CUDA pairing the knowledge base does not list, and where to ask
    uncovered: bool = False  # a GPU build whose CUDA cuenv's tables do not cover: no resolution answers it

    def __str__(self) -> str:
        return f"{self.where}: {self.pin} -> {self.says}"


@dataclass(frozen=True)
class Inference:
    """The answer: the CUDA the project needs (None: none, it is CPU-only), and why."""

    cuda: str | None
    cudnn: str | None
    has_nvcc: bool
    how: str  # one line for the user: "from pytorch-cuda=11.7.0 (conda.yaml:10)"
    evidence: tuple[Evidence, ...] = ()
    framework: Stack | None = None
    notes: tuple[str, ...] = ()
    unconfirmed: tuple[str, ...] = ()  # pairings of the answer cuenv cannot confirm: the verdict is "unknown"

    @property
    def undetermined(self) -> tuple[Evidence, ...]:
        """GPU packages whose CUDA the file leaves to the resolver (``torch`` unpinned), when nothing else
        says which CUDA: then the answer is "unknown", not "CPU-only"."""
        return tuple(e for e in self.evidence if e.strength == "unknown") if self.cuda is None else ()

    def stack(self, label: str) -> Stack:
        """The hardware contract: the framework build's when one pin names it, else the bare CUDA. A framework
        built with an older CUDA of the same major than the environment's newest (conda's pytorch
        py3.11_cuda12.1 beside cuda-version 12.8) keeps its own build (its arch list); the driver serves the newest."""
        if self.framework is not None and self.framework.cuda == self.cuda:
            return self.framework.replace(label=label, has_nvcc=self.framework.has_nvcc or self.has_nvcc,
                           cudnn=self.framework.cudnn or self.cudnn)
        if self.framework is not None and self.framework.cuda and self.cuda \
                and self.framework.cuda.split(".")[0] == self.cuda.split(".")[0] and _vkey(self.framework.cuda) < _vkey(self.cuda):
            return self.framework.replace(label=label, cuda=self.cuda, has_nvcc=self.framework.has_nvcc or self.has_nvcc,
                                          cudnn=self.framework.cudnn or self.cudnn)
        major_minor = self.cuda.replace(".", "") if self.cuda else None
        return Stack(label=label, cuda=self.cuda, cudnn=self.cudnn, has_nvcc=self.has_nvcc, os=("linux",),
                     framework=self.framework.framework if self.framework else None,
                     framework_version=self.framework.framework_version if self.framework else None,
                     variant=f"cu{major_minor}" if major_minor else "cpu")


# -- reading pins -------------------------------------------------------------------------------------

def cuda_of_version(text: str | None) -> tuple[str, str | None, int | None]:
    """A version constraint on a CUDA package -> (strength, "X.Y" or None, major or None).

    ``11.8``, ``11.8.*``, ``==11.3.*``, ``=11.7.0``, ``12.1.105`` -> exact; ``>=11.8`` -> min;
    ``12``, ``12.*``, ``>=12.0,<13.0a0`` -> major.
    """
    if not text:
        return "none", None, None
    v = text.strip().replace(" ", "")
    exact = re.fullmatch(r"(?:==?|===)?(\d+)\.(\d+)(?:\.[0-9a-z]+)*(?:\.\*)?", v)
    if exact:
        return "exact", f"{int(exact.group(1))}.{int(exact.group(2))}", int(exact.group(1))
    major = re.fullmatch(r"(?:==?)?(\d+)(?:\.\*)?", v)
    if major:
        return "major", None, int(major.group(1))
    low = re.match(r">=(\d+)(?:\.(\d+))?(?:,|$|\.)", v)  # >=11.8, >=12.0,<13.0a0, >=11,<12 (a strict > is conda_range's)
    if low:
        minor = int(low.group(2) or 0)
        bounded = re.search(r"<(\d+)(?:\.0)*(?:a0|\.0a0)?(?:,|$)", v)
        if bounded and int(bounded.group(1)) == int(low.group(1)) + 1 and minor == 0:
            return "major", None, int(low.group(1))
        return "min", f"{int(low.group(1))}.{minor}", int(low.group(1))
    return "none", None, None


def conda_range(version: str) -> tuple[str, ...]:
    """The CUDA releases (X.Y, oldest first) a conda version spec such as ``<10.2,>10.0`` admits: rattler's
    own matching of each release the driver table knows, as X.Y and as its full number (``>10.0`` admits
    10.0.130); () for a spec rattler does not read. Only for what :func:`cuda_of_version` leaves open."""
    from rattler import Version, VersionSpec

    try:
        wanted = VersionSpec(version)
    except Exception:  # noqa: BLE001 - rattler's parse errors have no common base class
        return ()
    admitted: dict[str, None] = {}
    for row in matrix.driver_rows():
        mm = ".".join(row.cuda.split(".")[:2])
        if wanted.matches(Version(mm)) or wanted.matches(Version(row.cuda)):
            admitted.setdefault(mm, None)
    return tuple(admitted)


def _conda_pin(version: str | None) -> tuple[str, str | None, int | None, str | None]:
    """A conda CUDA package's version spec -> (strength, "X.Y", major, what a range says): the simple forms
    by :func:`cuda_of_version`, any other by :func:`conda_range`. One release admitted is that release;
    several of one major, or every release from one on (``>12``), a floor at the oldest, as ``>=11.8`` is."""
    strength, cuda, major = cuda_of_version(version)
    if strength != "none" or not version:
        return strength, cuda, major, None
    admitted, known = conda_range(version), matrix.cuda_releases()
    if not admitted or not (len({a.split(".")[0] for a in admitted}) == 1 or admitted == known[known.index(admitted[0]):]):
        return "none", None, None, None
    low, major = admitted[0], int(admitted[0].split(".")[0])
    if len(admitted) == 1:
        return "exact", low, major, None
    span = "or newer" if admitted[-1] == known[-1] else f"{'or' if len(admitted) == 2 else 'to'} {admitted[-1]}"
    return "min", low, major, f"CUDA {low} {span} (the releases {version} admits)"


def conda_evidence(spec: CondaSpec) -> list[Evidence]:
    out: list[Evidence] = []
    name = spec.name
    if name in packages.CONDA_CUDA_PINS:
        strength, cuda, major, ranged = _conda_pin(spec.version)
        nvcc = name in packages.CONDA_WITH_NVCC
        if strength != "none":
            says = ranged or (f"CUDA {cuda}" if strength == "exact" else (f"CUDA {cuda} or newer" if strength == "min"
                                                                          else f"CUDA {major} (major only)"))
            out.append(Evidence(spec.where, spec.text, says + (", with nvcc" if nvcc else ""), strength, cuda,
                                major, nvcc=nvcc))
        elif nvcc:
            out.append(Evidence(spec.where, spec.text, "nvcc (CUDA from the other pins)", "none", nvcc=True))
    if name == "pytorch" and spec.build:
        cuda = _pytorch_build_cuda(spec.build)
        with_cudnn = re.search(r"cudnn(\d+)\.(\d+)", spec.build)
        if cuda:
            out.append(Evidence(spec.where, spec.text, f"a PyTorch build for CUDA {cuda}", "exact", cuda,
                                int(cuda.split(".")[0]),
                                cudnn=f"{with_cudnn.group(1)}.{with_cudnn.group(2)}" if with_cudnn else None))
        elif "cpu" in spec.build:
            out.append(Evidence(spec.where, spec.text, "a CPU-only PyTorch build", "cpu"))
    if name == "cudnn":
        strength, cudnn, _ = cuda_of_version(spec.version)
        if strength == "exact":
            out.append(Evidence(spec.where, spec.text, f"cuDNN {cudnn}", "none", cudnn=cudnn))
    if name in packages.CONDA_TORCH_CPU or (name == "pytorch-mutex" and "cpu" in (spec.build or "")):
        out.append(Evidence(spec.where, spec.text, "PyTorch's CPU-only build (the solver's pytorch follows it)", "cpu"))
    elif spec.build and name not in ("pytorch", "pytorch-mutex") and "cuda" in spec.build.lower():
        # a build string that names its CUDA (tensorflow=*=*cuda118*, cudnn=7.6.0=cuda10.1_0), or only that it is one
        from cuenv.knowledge import wheelcuda

        built = wheelcuda.from_build(spec.build.lower())
        out.append(_exact(spec.where, spec.text, f"a {name} build for CUDA {built.cuda}", built.cuda) if built.cuda
                   else Evidence(spec.where, spec.text, f"a CUDA build of {name}, whose CUDA the solver picks", "unknown"))
    exact_build = spec.build and "*" not in spec.build and not re.search(r"cuda|gpu", spec.build.lower())
    if name in packages.CONDA_BUILD_NAMES_CUDA and exact_build and not out:  # tensorflow=2.11.0=mkl_py310hb40ee82_0
        out.append(Evidence(spec.where, spec.text, f"a CPU build of {name} (its build string names no CUDA)", "cpu"))
    if (name in packages.CONDA_GPU_CAPABLE or name in packages.CONDA_RAPIDS) and not out and "cpu" not in (spec.build or ""):
        out.append(Evidence(spec.where, spec.text, f"a {name} whose CUDA build the solver picks from the driver",
                            "unknown"))
    return out


def _exact(where: Where, pin: str, says: str, cuda: str, *, cudnn: str | None = None,
           stack: Stack | None = None) -> Evidence:
    """Evidence of one exact CUDA ("12.1"); its major follows from it."""
    return Evidence(where, pin, says, "exact", cuda, int(cuda.split(".")[0]), cudnn=cudnn, stack=stack)


def _target_env(python: str) -> dict[str, str]:
    return {"sys_platform": "linux", "platform_system": "Linux", "platform_machine": "x86_64", "os_name": "posix",
            "platform_python_implementation": "CPython", "implementation_name": "cpython",
            "python_version": python, "python_full_version": python + ".0", "extra": ""}


def applies(req: PipRequirement, python: str) -> bool:
    """Whether a requirement's marker holds on Linux x86_64 with ``python`` (the platform cuenv builds for)."""
    if not req.marker:
        return True
    from packaging.markers import InvalidMarker, Marker, UndefinedComparison

    try:
        return bool(Marker(req.marker).evaluate(_target_env(python)))
    except (InvalidMarker, UndefinedComparison):
        return True


def _index_variant(options: PipOptions) -> tuple[str, str, bool] | None:
    """(variant, URL, alone) of the first index or find-links page that names a build (``.../whl/cu118``);
    ``alone``: it is the --index-url, which replaces PyPI (an extra index or page is searched with PyPI)."""
    for url in (*options.extra_index_urls, *((options.index_url,) if options.index_url else ()), *options.find_links):
        m = _INDEX_VARIANT.search(url + "/")
        if m and not (url in options.find_links and _index_root(url, m.group(1))):
            return m.group(1), url, url == options.index_url
    return None


def _index_root(url: str, variant: str) -> bool:
    """Whether a find-links URL is an index's root (``-f https://download.pytorch.org/whl/cu118``, held-out-17): a
    page of project links, not of files, where pip and uv find no wheel (a flat page such as ``.../torch_stable.html``
    or a project's ``.../cu118/torch/`` lists files)."""
    from urllib.parse import urlsplit

    return urlsplit(url).path.rstrip("/").endswith("/" + variant)


def _retired(variant: str, specifier: str) -> str | None:
    """The last torch release with a ``variant`` build when the newest release ``specifier`` allows that the
    tables confirm has none (PyTorch's cu118 index stops at 2.7), else None (cpu: every release has one)."""
    from packaging.specifiers import InvalidSpecifier, SpecifierSet

    from cuenv.knowledge.versions import Dotted

    try:
        allows = SpecifierSet(specifier)
    except InvalidSpecifier:
        return None
    releases = sorted(matrix.torch_releases(), key=Dotted.parse)
    confirmed = [r for r in releases if matrix.torch_status(r) == "confirmed"
                 and any(allows.contains(f"{r}.{patch}") for patch in range(10))]
    if variant == "cpu" or not confirmed or variant in matrix.torch_variants(confirmed[-1]):
        return None
    return next((r for r in reversed(releases) if variant in matrix.torch_variants(r)), None)


def _none_built(variant: str, specifier: str) -> str | None:
    """The last torch release with a ``variant`` build, where no release ``specifier`` allows that the tables
    confirm has one and the variant is retired (the newest confirmed release has none): an index of that
    variant alone installs no torch there. None where one allowed release has the build, none is allowed, or
    the tables cannot say."""
    from packaging.specifiers import InvalidSpecifier, SpecifierSet

    from cuenv.knowledge.versions import admitted_patch

    try:
        allows = SpecifierSet(specifier)
    except InvalidSpecifier:
        return None
    last = _retired(variant, "")  # the variant's last release, where the newest confirmed one has no such build
    allowed = [r for r in matrix.torch_releases() if admitted_patch(allows, r) is not None]
    if last is None or not any(matrix.torch_status(r) == "confirmed" for r in allowed) \
            or any(variant in matrix.torch_variants(r) for r in allowed):
        return None
    return last


def _lacks_build(version: str, variant: str) -> bool:
    """Whether the tables confirm that torch ``version`` has no ``variant`` CUDA build (1.13 has cu116 and cu117,
    no cu113); False where they do not know the release's builds, or for a CPU or ROCm index."""
    key = matrix.release_key(version, matrix.torch_releases())
    return bool(key and variant.startswith("cu") and matrix.torch_status(key) == "confirmed"
                and variant not in matrix.torch_variants(key))


def _one_pypi_cuda(specifier: str) -> tuple[str, tuple[str, ...]] | None:
    """(CUDA, the torch minors) where every torch release a range admits (``~=2.1.0``, ``>=2.5,<2.7``) has a
    PyPI Linux wheel of one CUDA, by packaging's own matching over the releases the tables know; None where
    the range admits a release newer than they know (the resolver's pick), none, or wheels of two CUDAs."""
    from packaging.specifiers import InvalidSpecifier, SpecifierSet

    try:
        spec = SpecifierSet(specifier)
    except InvalidSpecifier:
        return None
    if not specifier.strip():
        return None
    known = matrix.torch_releases()
    newest = tuple(int(x) for x in known[-1].split("."))
    beyond = (f"{newest[0]}.{newest[1] + 1}.0", f"{newest[0] + 1}.0.0")
    if any(spec.contains(v, prereleases=True) for v in beyond):
        return None
    minors = tuple(r for r in known if versions.admitted_patch(spec, r) is not None)
    cudas = {matrix.torch_pypi_default(r) for r in minors}
    if not minors or len(cudas) != 1 or None in cudas:
        return None
    cuda = matrix.variant_cuda(cudas.pop() or "")
    return (cuda, minors) if cuda else None


def spec_floor(specifier: str) -> str | None:
    """X.Y of the highest lower bound of a PEP 440 range (``>=12.9.79,<13`` -> 12.9); None where it has none."""
    from packaging.version import Version

    from cuenv.knowledge.versions import lower_bound

    low = lower_bound(specifier, (">=", ">", "~="))
    return f"{Version(low).major}.{Version(low).minor}" if low else None


def _pinned_release(req: PipRequirement) -> str | None:
    """The release a requirement pins: ``==2.18.0``, ``~=2.18.0`` or ``===2.18`` (not ranges)."""
    m = re.search(r"(?:===?|~=)\s*([0-9][0-9a-zA-Z.+!]*)", req.specifier)
    return m.group(1) if m else None


def pip_evidence(req: PipRequirement, options: PipOptions) -> list[Evidence]:
    name, w, pin = req.name, req.where, req.text
    version = req.exact_version()
    base, _, local = (version or "").partition("+")
    local = local.lower()
    out: list[Evidence] = []
    if name in packages.PYPI_TORCH_FAMILY:
        index = _index_variant(options)
        if index is not None and not local and not index[2] and version is None \
                and (last := _retired(index[0], req.specifier)):
            # pip takes the newest release of PyPI and the extra index together: where the index's builds stopped
            # (cu118 at 2.7), PyPI's newer torch of another CUDA; uv the index's first (held-out-7)
            out.append(Evidence(w, pin, f"a {name} from PyPI or the extra index {index[1]}, whose {index[0]} builds stop "
                                f"at torch {last}: pip installs PyPI's newer torch, uv the index's, so which CUDA "
                                "build installs depends on the installer", "unknown"))
            return out
        if index is not None and index[2] and not local and name == "torch" \
                and (last := _none_built(index[0], f"=={version}" if version else req.specifier)):
            # the index replaces PyPI, and no release the pin allows was built for its CUDA (held-out-13, mistral_ner)
            raise RequestFileError(w, pin, f"the index {index[1]} replaces PyPI, and its {index[0]} builds stop at torch "
                                   f"{last}: no torch it allows installs from it.",
                                   hint=f"Pin torch<={last} for that index, or use the index of a CUDA that the torch "
                                   "you want is built for (its release notes list them).")
        passed = None  # an extra index without a build of the pinned torch: pip takes PyPI's (held-out-13, ImageBind)
        if index is not None and not local and not index[2] and name == "torch" and base and _lacks_build(base, index[0]):
            passed, index = index, None
        variant = local or (index[0] if index else None)
        how = f"+{local} build" if local else (f"from the index {index[1]}" if index else None)
        cuda = matrix.variant_cuda(variant) if variant and variant.startswith("cu") else None
        paired = matrix.companion_torch(name, base) if name != "torch" and base else None  # torchvision==0.20.0: torch 2.5.0
        default = matrix.torch_pypi_default(paired or base) if (name == "torch" or paired) and base else None
        if variant and cuda:
            stack = builds.torch_stack(base, variant) if name == "torch" and base else None
            unconfirmed = None if stack is not None or name != "torch" or not base else unconfirmed_torch(base, variant)
            out.append(replace(_exact(w, pin, f"CUDA {cuda} ({how})", cuda, stack=stack), unconfirmed=unconfirmed))
        elif variant == "cpu" or (variant or "").startswith("rocm"):
            out.append(Evidence(w, pin, f"a {'CPU-only' if variant == 'cpu' else 'ROCm'} build ({how})", "cpu"))
        elif default and (default_cuda := matrix.variant_cuda(default)):
            beside = (f"; the extra index {passed[1]} has no {passed[0]} build of it, so pip takes PyPI's (uv, which "
                      "stops at the first index that has torch, finds none)") if passed else ""
            what = f"torch {paired or base} for Linux x86_64" + (f", which {name} {base} requires" if paired else "")
            out.append(_exact(w, pin, f"CUDA {default_cuda} (the PyPI wheel of {what}{beside})",
                              default_cuda, stack=builds.torch_stack(paired or base, None)))
        elif name == "torch" and not base and index is None and (one := _one_pypi_cuda(req.specifier)):
            out.append(_exact(w, pin, f"CUDA {one[0]} (PyPI's Linux wheel of every torch release {req.specifier} allows: "
                                      f"{', '.join(one[1])})", one[0], stack=builds.torch_stack(one[1][-1], None)))
        elif name == "torch" and base and not re.search(r"[*<>!~,]", req.specifier) and "==" in req.specifier:
            first = next((r for r in matrix.torch_releases() if matrix.torch_pypi_default(r)), "?")
            out.append(Evidence(w, pin, f"torch {base} from PyPI, whose CUDA build cuenv's tables do not cover "
                                f"(they know PyPI's torch wheels from {first} on)", "unknown"))
        else:  # torchvision/torchaudio install a torch too: which one (and its CUDA) is the resolver's
            out.append(_undetermined(req, name))
        return out
    if packages.family(name) == "jax" or re.match(r"^jax-cuda\d+-(plugin|pjrt)$", name):
        extras = [m.group(1) for e in req.extras for m in [re.match(r"^cuda(\d+)", e)] if m]
        plugin = re.match(r"^jax-cuda(\d+)-", name)
        local_cuda = re.match(r"cuda(\d+)(?:\.cudnn(\d)(\d+))?", local) if local else None
        major = extras[0] if extras else (plugin.group(1) if plugin else (local_cuda.group(1) if local_cuda else None))
        if major is None:
            if name == "jax" and "cpu" in req.extras:
                out.append(Evidence(w, pin, "a CPU-only jax", "cpu"))
            elif any("cuda" in e for e in req.extras) or "cuda" in local:
                # jax[cuda]==0.4.5 (its jaxlib +cuda11 from Google's page): a CUDA build, of a major the release decides
                out.append(_uncovered(req, f"{name}[{','.join(req.extras)}]" + (f" {version}" if version else "")))
            return out
        cudnn = f"{local_cuda.group(2)}.{local_cuda.group(3)}" if local_cuda and local_cuda.group(2) else None
        built = matrix.jax_plugin(f"cuda{major}")
        if built is not None and built.cuda:
            stack = builds.jax_stack(base if name == "jax" else "", f"cuda{major}")
            out.append(Evidence(w, pin, f"CUDA {built.cuda} (what the jax cuda{major} plugin is built with)",
                                "exact", built.cuda, int(major), cudnn=cudnn, stack=stack))
        else:
            out.append(Evidence(w, pin, f"CUDA {major} (major only)", "major", None, int(major), cudnn=cudnn))
        return out
    if name in packages.FRAMEWORKS["tensorflow"]:
        release = _pinned_release(req) or (req.exact_version() if req.url else None)  # a wheel URL names its release
        if name in packages.CPU_ONLY or "cpu" in req.extras:
            out.append(Evidence(w, pin, "a CPU-only TensorFlow", "cpu"))
        elif not release:
            out.append(_undetermined(req, "TensorFlow"))
        elif name == "tensorflow" and _cpu_only_tensorflow(release):
            out.append(Evidence(w, pin, "a CPU-only TensorFlow (before 2.1, TensorFlow's GPU build was tensorflow-gpu)",
                                "cpu"))
        elif (build := matrix.tf_build(release)) is not None and build.cuda:
            stack = builds.tensorflow_stack(release.split("+")[0])
            out.append(_exact(w, pin, f"CUDA {build.cuda} (TensorFlow {build.release}'s tested configuration)",
                              build.cuda, cudnn=build.cudnn, stack=stack))
        else:  # a CUDA build whose CUDA is not in the table: unknown, never CPU-only
            out.append(_uncovered(req, f"{name} {release}"))
        return out
    if name == "paddlepaddle-gpu":
        index = _index_variant(options)
        if not version:  # Paddle's per-CUDA index (/packages/stable/cu126/) serves only that CUDA's builds
            cuda = matrix.variant_cuda(index[0]) if index and index[0].startswith("cu") else None
            out.append(_exact(w, pin, f"CUDA {cuda} (from the index {index[1]})", cuda) if index and cuda
                       else _undetermined(req, name))
            return out
        post = re.match(r"^(.+?)\.(post\d{3,})$", version)
        rel, variant = (post.group(1), post.group(2)) if post else (version, index[0] if index else "default")
        stack = builds.paddle_stack(rel, variant)
        if stack is not None and stack.cuda:
            out.append(Evidence(w, pin, f"CUDA {stack.cuda} (paddlepaddle-gpu {rel} {variant} build)", "exact",
                                stack.cuda, int(stack.cuda.split(".")[0]), cudnn=stack.cudnn, stack=stack))
        else:
            out.append(_uncovered(req, f"paddlepaddle-gpu {version}"))
        return out
    if name == "cuda-toolkit" and version:  # NVIDIA's pip meta-package, as torch 2.11+ requires it
        from cuenv.knowledge import wheelcuda

        found = wheelcuda.from_requirements([f"cuda-toolkit{'[' + ','.join(req.extras) + ']' if req.extras else ''}=={version}"])
        if found.cuda:
            out.append(Evidence(w, pin, f"CUDA {found.cuda} (NVIDIA's cuda-toolkit {version})", "exact", found.cuda,
                                found.major, nvcc="nvcc" in req.extras or "all" in req.extras))
        return out
    nv = _NVIDIA_EXACT.match(name)
    if nv:
        strength, cuda, major = cuda_of_version(version) if version else ("none", None, None)
        suffix = packages.suffix_major(nv.group(3)) if nv.group(3) else None
        floor = spec_floor(req.specifier) if strength != "exact" and suffix else None
        if strength == "exact":
            out.append(Evidence(w, pin, f"CUDA {cuda} (NVIDIA's wheel)", "exact", cuda, major,
                                nvcc=False))
        elif floor and floor.split(".")[0] == str(suffix):  # >=12.9.79: the runtime installed is 12.9 or newer
            out.append(Evidence(w, pin, f"CUDA {floor} or newer (NVIDIA's wheel)", "min", floor, suffix))
        elif suffix:
            out.append(Evidence(w, pin, f"CUDA {suffix} (major only)", "major", None, suffix))
        else:  # nvidia-cuda-nvcc, unpinned: its version is the CUDA release, the resolver's pick
            out.append(_undetermined(req, "CUDA package"))
        return out
    if name.startswith("nvidia-cudnn") and version:
        m = re.match(r"(\d+)\.(\d+)", version)
        cudnn_major = packages.nvidia_major(name)
        out.append(Evidence(w, pin, f"cuDNN {m.group(1)}.{m.group(2)}" if m else "cuDNN",
                            "major" if cudnn_major is not None else "none", None, cudnn_major,
                            cudnn=f"{m.group(1)}.{m.group(2)}" if m else None))
        return out
    cupy = _CUPY.match(name)
    if cupy:
        digits, wildcard = cupy.group(1), cupy.group(2)
        if wildcard or len(digits) == 2:
            out.append(Evidence(w, pin, f"CUDA {int(digits[:2])} (major only)", "major", None, int(digits[:2])))
        elif cupy_cuda := matrix.variant_cuda("cu" + digits):
            out.append(_exact(w, pin, f"CUDA {cupy_cuda}", cupy_cuda))
        return out
    local_cu = _LOCAL_CU.search(local) if local else None
    plus_cuda = matrix.variant_cuda("cu" + local_cu.group(1)) if local_cu else None
    if plus_cuda:
        out.append(replace(_exact(w, pin, f"CUDA {plus_cuda} (+{local} build)", plus_cuda), bundled=True))
        return out
    page = next((m for url in options.find_links if (m := _PYG_PAGE.search(url))), None) \
        if name in packages.PYG_EXTENSIONS and not local else None
    if page is not None:  # pip takes the page's +ptXXcuYYY wheel (a local version above PyPI's sdist), held-out-17
        page_cuda = matrix.variant_cuda(page.group(2)) if page.group(2) != "cpu" else None
        says = f"the {page.group(2)} build on PyG's page for torch {page.group(1)}"
        out.append(replace(_exact(w, pin, f"CUDA {page_cuda} ({says})", page_cuda), bundled=True) if page_cuda
                   else Evidence(w, pin, f"a CPU-only build ({says})", "cpu"))
        return out
    local_major = _LOCAL_MAJOR.search(local) if local else None
    if local_major:  # faiss-1.14.3+cu12 (held-out-16, TorchEasyRec): a CUDA 12 build, its minor unsaid
        major = int(local_major.group(1))
        out.append(Evidence(w, pin, f"CUDA {major} (+{local} build, the major only)", "major", None, major, bundled=True))
        return out
    if name == "onnxruntime-gpu" and base and (ort := matrix.onnxruntime_gpu_cuda(base)):
        # its major, not its minor: it loads the environment's CUDA libraries, and a 12.x build runs with any 12.x
        major = int(ort.split(".")[0])
        out.append(Evidence(w, pin, f"CUDA {major} (PyPI's onnxruntime-gpu {base} is built with {ort}; it loads the "
                                    f"environment's CUDA {major} libraries)", "major", None, major))
        return out
    named = _SUFFIX_MAJOR.match(name) or next((m for e in req.extras for m in [_CUDA_EXTRA.match(e)] if m), None)
    major = packages.nvidia_major(name) or (packages.suffix_major(named.group(1)) if named else None)
    if major is not None:
        out.append(Evidence(w, pin, f"CUDA {major} (major only)", "major", None, major))
    elif name.endswith("-gpu"):  # PyPI's name for a project's GPU build (onnxruntime-gpu, faiss-gpu): CUDA, but which?
        out.append(_uncovered(req, name + (f" {version}" if version else "")))
    return out


def wheel_cuda_major(name: str, version: str) -> int | None:
    """The CUDA major a PyPI package at ``version`` is a build of (``cupy-cuda11x``, ``torch 2.5.1+cu121``,
    ``faiss 1.14.3+cu12``), read by the very rules a requirements file's ``name==version`` pin is read by;
    None for a CPU build or a package that says none (cuenv.envs.change checks each new wheel so)."""
    req = PipRequirement(name=packages.canonical(name), text=f"{name}=={version}", specifier=f"=={version}")
    try:
        found = pip_evidence(req, PipOptions())
    except UsageError:
        return None
    return next((e.major for e in found if e.major is not None and e.strength in ("exact", "min", "major")), None)


def _cpu_only_tensorflow(release: str) -> bool:
    """Whether PyPI's ``tensorflow`` at ``release`` is CPU-only: every release before 2.1 but 1.15.0 and 1.15.1
    (TensorFlow's release notes: 2.1.0 "the tensorflow pip package now includes GPU support by default"; 1.15.0
    did so first, and 1.15.2 "no longer has a single pip package for GPU and CPU", tensorflow#36347)."""
    from packaging.version import InvalidVersion, Version

    try:
        v = Version(release)
    except InvalidVersion:
        return False
    return v < Version("2.1") and not Version("1.15.0") <= v < Version("1.15.2")


def _undetermined(req: PipRequirement, what: str) -> Evidence:
    return Evidence(req.where, req.text, f"a {what} whose CUDA depends on the version the resolver picks",
                    "unknown")


def _uncovered(req: PipRequirement, what: str) -> Evidence:
    return Evidence(req.where, req.text, f"{what}, a GPU build whose CUDA cuenv's tables do not cover", "unknown",
                    uncovered=True)


def evidence_of(doc: EnvironmentFile | RequirementsFile, *, python: str) -> list[Evidence]:
    """Every pin in ``doc`` that says something about CUDA, in file order."""
    out: list[Evidence] = []
    pip: RequirementsFile | None
    if isinstance(doc, EnvironmentFile):
        conda = [(spec, e) for spec in doc.specs for e in conda_evidence(spec)]
        cpu_torch = any(spec.name not in packages.CONDA_TORCH_FAMILY and e.strength == "cpu" for spec, e in conda)
        # a CPU selector (cpuonly) decides the build of a pytorch the file leaves to the solver
        out.extend(replace(e, layer="conda") for spec, e in conda
                   if not (cpu_torch and spec.name in packages.CONDA_TORCH_FAMILY and e.strength == "unknown"))
        pip = doc.pip
    else:
        pip = doc
    if pip is not None:
        # a constraint (-c) pinning one version decides which release of a package the file installs (held-out-14:
        # `torch>=2.4` with `-c` of torch==2.7.1+cu118); it installs nothing by itself, but a torch is installed
        # wherever the file names a package of its family or one that requires it
        pinned = {c.name: c for c in pip.constraints if c.exact_version() and applies(c, python)}
        for req in pip.requirements:
            if applies(req, python):
                out.extend(replace(e, layer="pip") for e in pip_evidence(pinned.get(req.name, req), pip.options))
        named = {r.name for r in pip.requirements if applies(r, python)}
        if named & {*packages.PYPI_TORCH_FAMILY, *packages.TORCH_DEPENDENTS}:
            for name in sorted(set(pinned) - named):
                if name in packages.PYPI_TORCH_FAMILY:
                    out.extend(replace(e, layer="pip") for e in pip_evidence(pinned[name], pip.options))
        names_torch = any(r.name in packages.PYPI_TORCH_FAMILY for r in pip.requirements) or (
            isinstance(doc, EnvironmentFile) and doc.spec("pytorch") is not None)
        dependents = [r for r in pip.requirements if r.name in packages.TORCH_DEPENDENTS and applies(r, python)]
        if dependents and not names_torch:
            out.append(replace(_torch_of_dependents(dependents), layer="pip"))
    return out


def _torch_of_dependents(dependents: Sequence[PipRequirement]) -> Evidence:
    """The torch that packages requiring it install: whichever the resolver picks ("unknown" by names alone)."""
    first = dependents[0]
    return Evidence(first.where, first.text, "a package that installs torch, whose CUDA depends on the torch version "
                    "the resolver picks", "unknown")


# -- deciding -----------------------------------------------------------------------------------------

def _vkey(cuda: str) -> tuple[int, int]:
    major, minor = cuda.split(".")
    return int(major), int(minor)


def decide(evidence: Sequence[Evidence], *, file: str, cuda_flag: str | None = None, exported: bool = False) -> Inference:
    """One CUDA for the project, or a refusal naming the lines that disagree.

    Several exact pins in one major: the newest wins (it needs the newest driver; the others run on it by
    CUDA's minor-version compatibility), unless a floor is above it (``nvidia-cuda-runtime-cu12>=12.9.79``
    installs 12.9 or newer). Pins of two majors cannot share one environment, but where they do not share
    files (CUDA 13 wheels beside others) or an export shows that they did (``exported``: conda packages of
    two majors, each pinned to its build); then the newest major decides, and a note names both. A flag wins
    over the pins, but not over a pin of another major.
    """
    notes: list[str] = []
    evidence = _imported(evidence, notes)
    gpu = [e for e in evidence if e.strength in ("exact", "min", "major")]
    unknown_torch = [e for e in evidence if e.strength == "unknown" and e.layer != "conda"]
    if unknown_torch and gpu and all(e.bundled for e in gpu) and cuda_flag is None:
        # +cu124 wheels that carry their own CUDA say nothing of the torch the resolver installs beside them
        notes.append(f"{gpu[0].pin} ({gpu[0].where}) carries its own {gpu[0].says.split(' (')[0]}; the torch "
                     f"{unknown_torch[0].pin} installs brings its own CUDA, which the pins do not say.")
        gpu = []
        evidence = [e for e in evidence if not e.bundled]
    picked_torch = [e for e in unknown_torch if _TORCH_PIN.match(e.pin)]
    if picked_torch and gpu and cuda_flag is None and not any(_decides_torch(e) for e in gpu):
        # jax[cuda12] or cupy-cuda12x beside an unpinned torch (held-out-15): their CUDA says nothing of the torch
        # build the resolver installs (pip's newest may be another major's); the answer stays open
        notes.append(f"{gpu[0].pin} ({gpu[0].where}) says {gpu[0].says}, but not which torch build "
                     f"{picked_torch[0].pin} installs, and that torch brings its own CUDA.")
        gpu = []
    cudnn = next((e.cudnn for e in evidence if e.cudnn), None)
    nvcc = any(e.nvcc for e in evidence)
    majors: dict[int, Evidence] = {}
    for e in gpu:
        if e.major is not None:
            majors.setdefault(e.major, e)
    if cuda_flag is not None:
        flag_major = int(cuda_flag.split(".")[0])
        other = next((e for e in gpu if e.major != flag_major), None)
        if other is not None:
            raise RequestFileError(other.where, other.pin, f"needs {other.says}, but --cuda {cuda_flag} was given; "
                                   "one environment holds one CUDA major.",
                                   hint=f"Drop --cuda, or change that pin to a CUDA {flag_major} build.")
        return Inference(cuda_flag, cudnn, nvcc, f"from --cuda {cuda_flag}", tuple(evidence),
                         _framework(evidence, cuda_flag))
    if len(majors) > 1 and (_side_by_side(gpu, majors) or (exported and _libraries_of_each(gpu, majors))):
        # CUDA 13's wheels live under site-packages/nvidia/cu13/, apart from a cu12 wheel's nvidia/<component>/
        # (cuenv.engines.wheelfiles reads the files before an install); conda's cudatoolkit 11.8 (libcudart.so.11.0)
        # beside cuda-cudart 12.1 (libcudart.so.12) in an export: both installed, the driver serves the newest.
        newest = max(majors)
        listed = " and ".join(f"{m} ({majors[m].pin}, {majors[m].where})" for m in sorted(majors))
        notes.append(f"The pins name CUDA {' and '.join(str(m) for m in sorted(majors))} wheels; CUDA 13 wheels "
                     f"install under nvidia/cu13/, apart from the others, and the driver must serve CUDA {newest}."
                     if _side_by_side(gpu, majors) else
                     f"The export holds CUDA {listed}: the environment it was exported from held both, each "
                     f"major's libraries under their own file names, and the driver must serve CUDA {newest}.")
        gpu = [e for e in gpu if e.major == newest]
        majors = {newest: majors[newest]}
    if len(majors) > 1:
        a, b = list(majors.values())[:2]
        raise RequestFileError(b.where, b.pin, f"needs {b.says}, but {a.where} ({a.pin}) needs {a.says}; one "
                               "environment holds one CUDA major (their libraries share file names).",
                               hint="Make the pins agree on one CUDA major, or split the project into two environments.")
    exact = [(e.cuda, e) for e in gpu if e.strength == "exact" and e.cuda]
    if exact:
        cuda, best = max(exact, key=lambda pair: _vkey(pair[0]))
        others = sorted({c for c, _ in exact} - {cuda}, key=_vkey)
        if others:
            notes.append(f"The pins name CUDA {', '.join(others)} and {cuda}; the environment needs the newest, "
                         f"{cuda} (its driver runs the others too).")
        raised = max((e for e in gpu if e.strength == "min" and e.cuda and _vkey(e.cuda) > _vkey(cuda)),
                     key=lambda e: (_vkey(e.cuda or "0.0"), "runtime" in e.pin), default=None)  # the runtime's line first
        if raised is not None and raised.cuda:  # one major (checked above): a floor above the exact pins installs newer
            notes.append(f"{raised.pin} ({raised.where}) installs CUDA {raised.cuda} or newer, above {best.pin}'s "
                         f"{cuda}; the environment needs {raised.cuda} (its driver runs {cuda} too).")
            cuda, best = raised.cuda, raised
        how = f"from {best.pin} ({best.where}): {best.says}"
        unconfirmed = tuple(dict.fromkeys([*(f"{e.where}: {e.unconfirmed}" for e in gpu if e.unconfirmed),
                                           *_beside(evidence, cuda)]))
        return Inference(cuda, cudnn, nvcc, how, tuple(evidence), _framework(evidence, cuda), tuple(notes),
                         unconfirmed)
    floors = [e for e in gpu if e.strength == "min" and e.cuda]
    if floors:
        low = max(floors, key=lambda e: _vkey(e.cuda or "0.0"))
        how = (f"from {low.pin} ({low.where}): {low.says}; cuenv checks the oldest allowed, the solver may pick a "
               "newer one the driver supports")
        return Inference(low.cuda, cudnn, nvcc, how, tuple(evidence), None, tuple(notes),
                         tuple(_beside(evidence, low.cuda or "")))
    if majors:
        major, e = next(iter(majors.items()))
        picked = next((u for u in evidence if u.strength == "unknown"), None)  # an unpinned torch may bring another
        raise RequestFileError(e.where, e.pin, f"says {e.says}, but no pin says which CUDA {major}.x"
                               + (f", and {picked.pin} ({picked.where}) is {picked.says}." if picked else "."),
                               hint=f"Pass --cuda with the minor too (for example --cuda {_newest_of_major(major)}), "
                               "or pin the CUDA runtime in the file.")
    cpu = [e for e in evidence if e.strength == "cpu"]
    unknown = [e for e in evidence if e.strength == "unknown"]
    if unknown and unknown[0].uncovered:
        how = (f"{unknown[0].pin} ({unknown[0].where}) is {unknown[0].says}; pass the CUDA it was built for with "
               "--cuda (e.g. --cuda 12.1)")
    elif unknown:
        how = (f"{unknown[0].pin} ({unknown[0].where}) is not pinned to a build, so its CUDA is whichever the "
               "resolver picks; pin it (e.g. torch==2.5.1+cu121) or pass --cuda (e.g. --cuda 12.1)")
    elif cpu:
        how = f"no pin asks for CUDA ({cpu[0].pin} at {cpu[0].where} is {cpu[0].says})"
    else:
        how = "no pin asks for CUDA"
    return Inference(None, cudnn, nvcc, how, tuple(evidence), None, tuple(notes))


def _beside(evidence: Sequence[Evidence], cuda: str) -> list[str]:
    """GPU builds whose CUDA cuenv does not know, beside the pins that decide ``cuda``: they may need another."""
    return [f"{e.where}: {e.pin} is {e.says}, and may need another CUDA than {cuda}; pass the CUDA it was built "
            "for with --cuda" for e in evidence if e.uncovered]


def _decides_torch(e: Evidence) -> bool:
    """Whether a pin says which torch build installs: torch's family pinned to a build, a conda CUDA pin (the conda
    layer's pytorch follows it), or NVIDIA's CUDA wheels (each torch release pins its NVIDIA wheels exactly, so
    their versions choose the release)."""
    name = packages.canonical(re.split(r"[\s=<>~!\[;@]", e.pin, maxsplit=1)[0])
    return bool(_TORCH_PIN.match(e.pin)) or (e.stack is not None and e.stack.framework == "torch") \
        or e.layer == "conda" or name.startswith(("nvidia-", "cuda-"))


def _libraries_of_each(gpu: Sequence[Evidence], majors: dict[int, Evidence]) -> bool:
    """Whether every major is named by a conda package that installs its libraries (cudatoolkit, cuda-cudart):
    ``cuda-version`` installs none, and of another major than the libraries it only bounds the driver."""
    named = {e.major for e in gpu if e.layer == "conda" and _conda_name(e) != "cuda-version"}
    return all(e.layer == "conda" for e in gpu) and set(majors) <= named


def _side_by_side(gpu: Sequence[Evidence], majors: dict[int, Evidence]) -> bool:
    """Whether the pins of several CUDA majors are pip wheels that do not share files: at most one major
    below 13 (cu11 and cu12 wheels write the same nvidia/<component>/ folders), the rest 13 or newer."""
    return all(e.layer != "conda" for e in gpu) and sum(1 for m in majors if m < 13) <= 1


_TORCH_PIN: Final = re.compile(r"^torch(?:vision|audio)?\s*(?:[=<>~!\[;@ ]|$)")


def _imported(evidence: Sequence[Evidence], notes: list[str]) -> list[Evidence]:
    """Two truths in one environment.yml: conda's pytorch/cudatoolkit and, in its pip layer, a torch wheel.
    pip installs over conda's packages, so Python imports the pip torch, which loads its own CUDA: when the
    pip layer pins a torch build whose CUDA differs from the conda layer's, the pip layer decides, and a note
    names the conda line it overrides."""
    torch = next((e for e in evidence if e.layer == "pip" and e.strength == "exact" and e.cuda
                  and (_TORCH_PIN.match(e.pin) or (e.stack is not None and e.stack.framework == "torch"))), None)
    conda = [e for e in evidence if e.layer == "conda" and e.strength in ("exact", "min", "major", "unknown")
             and e.cuda != torch.cuda] if torch is not None else []
    # what the pip torch replaces (conda's pytorch and its CUDA selector), and pins of another major; a CUDA pin of
    # the same major stays, for the packages that still load it (held-out-14: RAPIDS on cuda-version 12.5 beside a
    # pip torch cu121 needs the 12.5 driver)
    gone = [e for e in conda if _conda_name(e) in (*packages.CONDA_TORCH_FAMILY, "pytorch-cuda")
            or e.major is None or e.major != torch.major] if torch is not None else []
    if not gone or torch is None:
        return list(evidence)
    first = gone[0]
    notes.append(f"{first.where} ({first.pin}) installs {first.says}, but Python imports the pip layer's "
                 f"{torch.pin} ({torch.where}), built for CUDA {torch.cuda}: the pip layer decides.")
    return [e for e in evidence if e not in gone]


def _conda_name(e: Evidence) -> str:
    """The conda package an evidence's spec names (``conda-forge::cuda-version=12.8`` -> cuda-version)."""
    return re.split(r"[=<>!~ ]", e.pin.split("::")[-1], maxsplit=1)[0]


def _newest_of_major(major: int) -> str:
    found = [c for c in matrix.cuda_releases() if c.split(".")[0] == str(major)]
    return found[-1] if found else f"{major}.0"


def _framework(evidence: Iterable[Evidence], cuda: str) -> Stack | None:
    stacks = [e.stack for e in evidence if e.stack is not None and e.stack.cuda == cuda]
    return stacks[0] if stacks else None


def unconfirmed_torch(version: str, variant: str, *, conda: bool = False) -> str:
    """Why cuenv cannot say whether torch ``version`` was built for ``variant`` (cu111), and the index that
    would answer it: the knowledge base lists the builds of the releases it covers, and no list is a
    source for "never built"."""
    cuda = matrix.variant_cuda(variant) or variant
    known = matrix.torch_variants(version)
    listed = (f"its table for torch {version} lists {', '.join(known)}" if known
              else f"its tables do not cover torch {version}")
    where = (f"`conda search -c pytorch 'pytorch={version}=*cuda{cuda}*'` lists the conda builds" if conda
             else f"https://download.pytorch.org/whl/{variant}/torch/ lists every torch built for CUDA {cuda}")
    return (f"cuenv cannot confirm that {'pytorch' if conda else 'torch'} {version} was built for CUDA {cuda} "
            f"({listed}); {where}.")


def infer(doc: EnvironmentFile | RequirementsFile, *, file: str, python: str, cuda_flag: str | None = None) -> Inference:
    if cuda_flag is not None:
        validate_cuda(cuda_flag)
    exported = isinstance(doc, EnvironmentFile) and doc.exported
    evidence = evidence_of(doc, python=python)
    if exported:
        # the installed libraries say the release; a cuda-version of their major (no library: it bounds the driver to
        # that major) says nothing more; one of another major stays, and is named as the conflict it is
        majors = {e.major for e in evidence if e.layer == "conda" and e.strength == "exact" and _conda_name(e) != "cuda-version"}
        evidence = [e for e in evidence if not (e.layer == "conda" and _conda_name(e) == "cuda-version" and e.major in majors)]
    inference = decide(evidence, file=file, cuda_flag=cuda_flag, exported=exported)
    if inference.framework is None and inference.cuda and isinstance(doc, EnvironmentFile):
        # conda's pytorch=2.0.0 + pytorch-cuda=11.7: the build the knowledge base knows as torch 2.0.0+cu117.
        spec = doc.spec("pytorch")
        strength, _, _ = cuda_of_version(spec.version) if spec else ("none", None, None)
        version = re.match(r"^=*(\d+\.\d+(?:\.\d+)?)", spec.version or "") if spec else None
        own = _pytorch_build_cuda(spec.build) if spec and spec.build else None  # py3.11_cuda12.1_cudnn8.9.2_0
        if strength == "exact" and version:
            variant = "cu" + (own or inference.cuda).replace(".", "")
            known = builds.torch_stack(version.group(1), variant)
            # A release the knowledge base does not know still names the framework (for the closest recipe),
            # but whether that build exists is unknown, and says so (issue 25 §3).
            stack = known or Stack(
                label=f"pytorch={version.group(1)}", cuda=own or inference.cuda,
                os=("linux",), framework="torch", framework_version=version.group(1), variant=variant)
            # a build string that names the CUDA (py3.9_cuda11.3_cudnn8.2.0_0) is a build the channel published
            built = bool(spec and spec.build and re.search(r"cuda\d", spec.build))
            unconfirmed = () if known or built else (unconfirmed_torch(version.group(1), variant, conda=True),)
            inference = replace(inference, framework=stack, unconfirmed=inference.unconfirmed + unconfirmed)
    return inference


def _pytorch_build_cuda(build: str) -> str | None:
    """The CUDA X.Y a conda pytorch build string names (``py3.9_cuda11.3_cudnn8.2.0_0``), None for another."""
    from cuenv.knowledge import wheelcuda

    found = wheelcuda.from_build(build.lower())
    return found.cuda if found.cuda and "." in found.cuda else None


def validate_cuda(text: str) -> str:
    if not re.fullmatch(r"\d{1,2}\.\d{1,2}", text):
        raise UsageError(f"--cuda {text!r} is not a CUDA version.", hint="Write it as major.minor, e.g. --cuda 12.1.")
    return text


__all__ = [
    "STRENGTHS",
    "Evidence",
    "Inference",
    "applies",
    "conda_evidence",
    "cuda_of_version",
    "decide",
    "evidence_of",
    "infer",
    "pip_evidence",
    "unconfirmed_torch",
    "validate_cuda",
]
