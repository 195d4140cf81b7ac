"""Another tool's environment files as cuenv builds: `cuenv create -f environment.yml` and
`cuenv create -r requirements.txt` (issue 6 §6, issue 15).

The file is read by cuenv.recipes.projectfile (the parsers and the CUDA inference); here it becomes a
recipe document that goes through the same validation as a recipe file, so the environment gets a
check against the machine, metadata and a lock like any other. What a recipe cannot hold travels
beside it as data for the engine's Request: a conda file's ``pip:`` layer, pip's --find-links, --pre,
-c constraints and --hash values. What the file cannot say comes from flags (--cuda, -n) or from the
knowledge base (the architectures that CUDA release's ptxas compiles for, when no framework pin names
its own). Pure apart from reading the files.
"""

from __future__ import annotations

import re
import sys
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any, Iterable, Mapping

from cuenv.errors import UsageError
from cuenv.knowledge.stack import Stack
from cuenv.recipes.pipreqs import RequirementsFile, Unsupported

if TYPE_CHECKING:
    from cuenv.recipes.catalogue import Recipe
    from cuenv.recipes.projectfile import ProjectNeed


@dataclass(frozen=True)
class FromFile:
    """What `create -f/-r` builds: the recipe, the stack the file needs, and the Request fields beyond the recipe."""

    recipe: Recipe
    stack: Stack
    request_extras: dict[str, Any] = field(default_factory=dict)
    notes: tuple[str, ...] = ()
    skipped: tuple[Unsupported, ...] = ()
    how: str = ""


def from_file(path: Path, *, kind: str | None, name: str | None, cuda: str | None, skip_unsupported: bool = False,
              platform: str = "linux-64", trusted_env: Iterable[str] = (), allow_build: tuple[str, ...] = (),
              environ: Mapping[str, str] | None = None, settings: Any = None) -> FromFile:
    """Read ``path`` (kind: environment-yml | requirements, or None to tell by its name) into a build.
    ``trusted_env``: the user's extension of the variables a shared file may set (cuenv.trust.envvars).
    ``allow_build``: packages the user opts in to build from their sdist (--allow-build; it runs their code).
    ``environ``/``settings``: resolve a requirements file whose pins leave the CUDA open (projectfile.read_need)."""
    from cuenv.recipes.projectfile import read_need

    need = read_need(path, cuda=cuda, kind=kind, environ=environ, settings=settings, as_conda=False)
    if need.kind not in ("environment-yml", "requirements"):
        raise UsageError(f"{path} is a {need.kind} file, not an environment.yml or requirements file.",
                         hint=f"Use `cuenv create --from-lock {path}`.")
    pip: RequirementsFile | None = need.document.pip if need.kind == "environment-yml" else need.document
    blocked = list(need.unsupported)  # lines the parser could not take, and those no wheel lock can honour
    if blocked and not skip_unsupported:
        first = blocked[0]
        more = f" ({len(blocked) - 1} more such line{'s' if len(blocked) > 2 else ''})" if len(blocked) > 1 else ""
        raise UsageError(f"{first}{more}", hint=f"{first.hint} Or add --skip-unsupported to build without "
                         f"{'these lines' if len(blocked) > 1 else 'this line'} and install "
                         f"{'them' if len(blocked) > 1 else 'it'} afterwards.")
    if pip is not None:
        pip = pip.without(u.where for u in blocked)
        _check_pip_options(pip)
    need.require_cuda()
    if need.stack.cuda is None:
        raise UsageError(f"{path} needs no CUDA: {need.how}.",
                         hint="cuenv builds CUDA environments: pass --cuda to build it with one (e.g. --cuda 12.1).")
    doc, extras = _document(path, need, pip, name=name, platform=platform)
    dropped = _drop_untrusted_variables(doc, path, tuple(trusted_env))
    recipe = _validated(doc, path, tuple(trusted_env))
    built = _allowed_builds(allow_build)
    if built:
        extras = {**extras, "allow_build": built}
    notes = tuple(need.notes) + tuple(f"skipped {u}" for u in blocked) + dropped + tuple(
        f"{n} is built from its source distribution (--allow-build): that runs {n}'s build code on this machine"
        for n in built)
    return FromFile(recipe=recipe, stack=need.stack.replace(label=path.name), request_extras=extras, notes=notes,
                    skipped=tuple(blocked), how=need.how)


def _allowed_builds(names: tuple[str, ...]) -> tuple[str, ...]:
    """--allow-build names, canonical (PEP 503), each a project name: never an option or a path."""
    from cuenv.knowledge.packages import canonical

    out = []
    for name in names:
        if not re.fullmatch(r"[A-Za-z0-9]([A-Za-z0-9._-]*[A-Za-z0-9])?", name):
            raise UsageError(f"--allow-build {name!r} is not a package name.",
                             hint="Name the project whose source distribution may be built, e.g. --allow-build gym.")
        out.append(canonical(name))
    return tuple(dict.fromkeys(out))


def _check_pip_options(pip: RequirementsFile) -> None:
    o = pip.options
    if o.no_index:
        raise UsageError(f"{pip.where_of('no-index')}: --no-index leaves only --find-links pages to install from; "
                         "cuenv resolves and locks from package indexes.",
                         hint="Remove --no-index (an index URL with -i works, a mirror included).")
    source = [n for n in o.no_binary if n != ":none:"]
    if source:
        raise UsageError(f"{pip.where_of('no-binary')}: --no-binary {','.join(source)} asks pip to build from "
                         "source; cuenv installs only wheels, each locked by URL and sha256.",
                         hint="Remove the --no-binary line; publish a wheel of the package if none exists.")
    if o.require_hashes:
        for req in pip.requirements:
            if not req.hashes or not req.exact_version():
                raise UsageError(f"{req.where}: {req.text}: --require-hashes is on, and this requirement is not "
                                 "pinned with ==VERSION and --hash, which pip would refuse too.",
                                 hint="Pin it with == and --hash=sha256: (`pip hash` of the file prints it), or remove --require-hashes.")


def _document(path: Path, need: ProjectNeed, pip: RequirementsFile | None, *, name: str | None,
              platform: str) -> tuple[dict[str, Any], dict[str, Any]]:
    from cuenv.knowledge import matrix
    from cuenv.recipes.projectfile import python_of

    stack: Stack = need.stack
    cuda = matrix.mm_str(stack.cuda) if stack.cuda else ""
    targets = list(matrix.nvcc_targets(cuda))
    sass = list(stack.sass) or targets
    ptx = list(stack.ptx) if stack.sass else targets[-1:]
    cudnn = ".".join(stack.cudnn.split(".")[:2]) if stack.cudnn else None
    extras: dict[str, Any] = {}
    if pip is not None:
        extras = {"find_links": pip.options.find_links, "prerelease": pip.options.pre,
                  "constraints": tuple(c.text for c in pip.constraints),
                  "hashes": tuple((r.name, r.hashes) for r in pip.requirements if r.hashes)}
    env_name = name
    variables: dict[str, str] = {}
    if need.kind == "environment-yml":
        env = need.document
        env_name = env_name or env.name
        variables = dict(env.variables)
        if need.engine_family == "conda":
            install = {"conda": {"channels": list(env.channels), "specs": [s.text for s in env.specs],
                                 "nvcc": stack.has_nvcc}}
            if pip is not None and pip.requirements:
                extras.update(requirements=pip.requirement_texts(), index_urls=pip.options.index_urls)
        else:
            install = {"venv": {"requirements": list(pip.requirement_texts()) if pip else [],
                                "index_urls": list(pip.options.index_urls) if pip else [], "nvcc": stack.has_nvcc}}
    else:
        assert pip is not None
        install = {"venv": {"requirements": list(pip.requirement_texts()), "index_urls": list(pip.options.index_urls),
                            "nvcc": stack.has_nvcc}}
    if not env_name:
        raise UsageError(f"{path} does not name the environment." if need.kind == "environment-yml"
                         else "-r needs an environment name.", hint=f"Give one with -n, e.g. -n {_example_name(path)}.")
    python = python_of(need.document) if need.kind == "environment-yml" else \
        f"{sys.version_info.major}.{sys.version_info.minor}"
    if not re.fullmatch(r"3\.\d{1,2}", python):
        python = f"{sys.version_info.major}.{sys.version_info.minor}"
    doc = {
        "name": str(env_name),
        "summary": f"from {path.name}",
        "framework": None,
        "cuda": cuda,
        "cudnn": cudnn,
        "python": {"default": python},
        "arch": {"sass": sass, "ptx": ptx},
        "platforms": [platform],
        "smoke_test": {"python": "import sys; print(sys.version)"},
        "install": install,
    }
    if variables:
        doc["env"] = variables
    return doc, extras


def _drop_untrusted_variables(doc: dict[str, Any], path: Path, trusted_env: tuple[str, ...]) -> tuple[str, ...]:
    """A project file is shared input: its ``variables:`` that activation may not export (a shell hook,
    the loader's, one outside the CUDA stack) are left out of the build, each with a note saying why."""
    from cuenv.trust import envvars

    notes = []
    for var in list(doc.get("env") or {}):
        why = envvars.name_problem(var, extra=trusted_env)
        if why is not None:
            del doc["env"][var]
            notes.append(f"{path.name}: variable {var} is not set on activation: {why}. Set it yourself after "
                         "`cuenv use`, or allow it with the trusted_env_vars setting.")
    if "env" in doc and not doc["env"]:
        del doc["env"]
    return tuple(notes)


def _validated(doc: dict[str, Any], path: Path, trusted_env: tuple[str, ...] = ()) -> Recipe:
    import yaml

    from cuenv.recipes.catalogue import from_data
    from cuenv.recipes.lint import check_text

    # The recipes' own validation; its line numbers would point into the generated document, so none are shown.
    data, problems = check_text(yaml.safe_dump(doc, sort_keys=False), str(path), stem=doc["name"], thorough=False,
                                trusted_env=trusted_env)
    if problems:
        first = problems.items[0]
        raise UsageError(f"{path} does not make a valid recipe: {first.key + ': ' if first.key else ''}{first.message}",
                         hint="Fix the file, or give the value with a flag (-n for the name, --cuda for the CUDA).")
    assert data is not None  # no problem: a mapping
    return from_data(data, path=None, origin="user")



def _example_name(path: Path) -> str:
    """A name for an environment made from ``path``: its project folder's, when that is a valid one."""
    folder = path.resolve().parent.name
    return folder if re.fullmatch(r"[A-Za-z0-9][A-Za-z0-9._-]{0,63}", folder) else "myproject"


__all__ = ["FromFile", "from_file"]
