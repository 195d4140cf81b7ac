"""Another tool's environment files as cuenv recipes: `cuenv create -f environment.yml` and
`cuenv create -r requirements.txt --cuda 12.1` (issue 6 §6).

Each file becomes a recipe document that goes through the same validation as a recipe file
(cuenv.recipes.catalogue.parse), so the environment gets a Stack, a check against the machine, metadata and a
lock like any other. What the file cannot say comes from flags or from the knowledge base:
the CUDA version (--cuda, or an environment.yml spec such as ``cuda-version=12.1``), and the
architectures (what that CUDA release's ptxas compiles for, as the built-in cuda-X.Y recipes say).
Pure apart from reading the one file.
"""

from __future__ import annotations

import re
import sys
from pathlib import Path
from typing import Any, Final

from cuenv.errors import UsageError

# Specs whose version says which CUDA an environment.yml is for.
_CUDA_SPECS: Final = ("cuda-version", "pytorch-cuda", "cudatoolkit", "cuda-runtime", "cuda-cudart", "cuda-toolkit")
_NVCC_SPECS: Final = ("cuda-nvcc", "cuda-toolkit", "cudatoolkit-dev", "cuda")
_VERSION_IN_SPEC: Final = re.compile(r"^[A-Za-z0-9_.\-]+(?:::)?\s*(?:==?|\s)\s*(\d+\.\d+)")


def recipe_from_file(path: Path, *, kind: str, name: str | None, cuda: str | None, platform: str = "linux-64"):
    """A validated cuenv.recipes.catalogue.Recipe from ``path`` (kind: environment-yml | requirements)."""
    from cuenv.trust import limits

    text = limits.read_text(path, what="File", limit=limits.REQUEST_FILE)  # shared input (issue 14)
    if kind == "environment-yml":
        doc = from_environment_yml(text, file=str(path), name=name, cuda=cuda, platform=platform)
    else:
        doc = from_requirements(text, file=str(path), name=name, cuda=cuda, platform=platform)
    import yaml

    from cuenv.recipes.catalogue import from_data
    from cuenv.recipes.lint import check_text

    # The recipes' own validation; its line numbers would point into the generated document, so none are shown.
    data, problems = check_text(yaml.safe_dump(doc, sort_keys=False), str(path), stem=doc["name"], thorough=False)
    if problems:
        first = problems.items[0]
        raise UsageError(f"{path} does not make a valid recipe: {first.key + ': ' if first.key else ''}{first.message}",
                         hint="Fix the file, or give the value with a flag (-n NAME, --cuda X.Y).")
    return from_data(data, path=None, origin="user")


def from_environment_yml(text: str, *, file: str, name: str | None, cuda: str | None, platform: str) -> dict[str, Any]:
    import yaml

    from cuenv.trust import limits

    limits.check_yaml(text, what="File", file=file)
    try:
        data = yaml.safe_load(text)
    except yaml.YAMLError as exc:
        mark = getattr(exc, "problem_mark", None)
        raise UsageError(f"{file}: broken YAML{f' at line {mark.line + 1}' if mark else ''}: "
                         f"{getattr(exc, 'problem', None) or (str(exc).splitlines() or ['?'])[0]}.") from None
    except ValueError as exc:  # an integer of 5,000 digits
        raise UsageError(f"{file}: a value cannot be read: {str(exc)[:100]}.") from None
    if not isinstance(data, dict) or not isinstance(data.get("dependencies"), list):
        raise UsageError(f"{file}: not a conda environment file (no `dependencies:` list).")
    channels = data.get("channels")
    if not isinstance(channels, list) or not channels or not all(isinstance(c, str) for c in channels):
        raise UsageError(f"{file}: `channels:` must list the channels to install from.",
                         hint="cuenv uses exactly the listed channels (conda's --override-channels), e.g. [conda-forge].")
    specs: list[str] = []
    for dep in data["dependencies"]:
        if isinstance(dep, dict) and "pip" in dep:
            raise UsageError(f"{file}: a `pip:` section is not supported: one environment is built by one engine.",
                             hint="Put the pip packages in requirements.txt and `cuenv create -r requirements.txt --cuda X.Y`.")
        if not isinstance(dep, (str, int, float)):
            raise UsageError(f"{file}: dependency {dep!r} is not a package spec.")
        specs.append(str(dep).strip())
    names = {_spec_name(s): s for s in specs}
    cuda = cuda or next((m.group(1) for n in _CUDA_SPECS if n in names
                         for m in [_VERSION_IN_SPEC.match(names[n])] if m), None)
    if not cuda:
        raise UsageError(f"{file}: cannot tell which CUDA it uses.",
                         hint="Pass --cuda X.Y, or add a spec such as `cuda-version=12.1`.")
    python = _python_of(names.get("python"))
    env_name = name or data.get("name")
    if not env_name:
        raise UsageError(f"{file} has no `name:`.", hint="Give one with -n NAME.")
    return _document(str(env_name), file, cuda=cuda, python=python, platform=platform,
                     install={"conda": {"channels": [str(c) for c in channels], "specs": specs,
                                        "nvcc": any(n in names for n in _NVCC_SPECS)}})


def from_requirements(text: str, *, file: str, name: str | None, cuda: str | None, platform: str) -> dict[str, Any]:
    from packaging.requirements import InvalidRequirement, Requirement

    if not cuda:
        raise UsageError(f"{file}: a requirements file does not say which CUDA it uses.", hint="Pass --cuda X.Y (e.g. --cuda 12.1).")
    if not name:
        raise UsageError("-r needs an environment name.", hint="Give one with -n NAME.")
    index: str | None = None
    extra: list[str] = []
    reqs: list[str] = []
    for number, line in _logical_lines(text):
        option = re.match(r"^(-i|--index-url|--extra-index-url)(?:\s+|=)(\S+)$", line)
        if option:
            if option.group(1) == "--extra-index-url":
                extra.append(option.group(2))
            else:
                index = option.group(2)
            continue
        # Per-requirement hashes (`--hash=sha256:...`, as `cuenv export --format requirements` writes):
        # the solve records each artifact's sha256 itself.
        line = re.sub(r"\s+--hash[= ]\S+", "", line).strip()
        if line.startswith("-"):
            raise UsageError(f"{file}:{number}: option {line.split()[0]} is not supported.",
                             hint="Only requirements, -i/--index-url and --extra-index-url are read.")
        try:
            Requirement(line)
        except InvalidRequirement as exc:
            raise UsageError(f"{file}:{number}: {line!r} is not a requirement ({str(exc).splitlines()[0]}).") from None
        reqs.append(line)
    if not reqs:
        raise UsageError(f"{file}: no requirements in it.")
    indexes = extra + ([index] if index else [])
    if extra and not index:
        indexes.append("https://pypi.org/simple")
    here = f"{sys.version_info.major}.{sys.version_info.minor}"
    return _document(name, file, cuda=cuda, python=here, platform=platform,
                     install={"venv": {"requirements": reqs, "index_urls": indexes, "nvcc": False}})


def _document(name: str, file: str, *, cuda: str, python: str, platform: str, install: dict) -> dict[str, Any]:
    from cuenv.knowledge import matrix

    if not re.fullmatch(r"\d+\.\d+", cuda):
        raise UsageError(f"--cuda {cuda!r} is not a CUDA version.", hint="Write it as major.minor, e.g. 12.1.")
    targets = list(matrix.nvcc_targets(cuda))
    return {
        "name": name,
        "summary": f"from {Path(file).name}",
        "framework": None,
        "cuda": cuda,
        "cudnn": None,
        "python": {"default": python},
        "arch": {"sass": targets, "ptx": targets[-1:]},
        "platforms": [platform],
        "smoke_test": {"python": "import sys; print(sys.version)"},
        "install": install,
    }


def _logical_lines(text: str):
    """(line number, text) without comments and blank lines, continuation lines joined."""
    pending, start = "", 0
    for number, raw in enumerate(text.splitlines(), 1):
        line = re.sub(r"(^|\s)#.*$", "", raw).rstrip()
        if not pending:
            start = number
        if line.endswith("\\"):
            pending += line[:-1] + " "
            continue
        line = (pending + line).strip()
        pending = ""
        if line:
            yield start, line


def _spec_name(spec: str) -> str:
    from cuenv.engines.condaprefix import spec_name

    return spec_name(spec)


def _python_of(spec: str | None) -> str:
    if spec:
        match = re.search(r"(3\.\d{1,2})", spec)
        if match:
            return match.group(1)
    return f"{sys.version_info.major}.{sys.version_info.minor}"
