"""A framework release newer than a recipe's catalogue: its facts read from its PyPI metadata on the fly.

``cuenv create torch-cu132@2.16.0`` before the catalogue knows 2.16.0: the release must be on PyPI;
what its wheels state (the CUDA and cuDNN the Linux wheel pulls, the Python versions it has wheels
for) becomes that version's override, and the result says where the facts came from. What no
metadata states (a cuXXX build on the vendor's own index, its arch list) is carried over from the
newest version the catalogue knows, and the note says that too.
"""

from __future__ import annotations

from functools import lru_cache

from cuenv.errors import UsageError

TYPE_CHECKING = False  # no `typing` at run time: `check RECIPE` passes through here (issue 29)
if TYPE_CHECKING:
    from typing import Final

    from cuenv.knowledge.pypi import Client
    from cuenv.recipes.catalogue import Catalogue, Recipe

# recipe framework -> (PyPI project, extra whose pins are the CUDA build)
PROJECTS: Final = {"torch": ("torch", ()), "tensorflow": ("tensorflow", ("and-cuda",)), "jax": ("jax", ())}
DERIVED: Final = "derived"  # Recipe.origin of a recipe extended here


def resolve(catalogue: Catalogue, ref: str) -> tuple[Recipe, str | None]:
    """``Catalogue.get``, and a framework version newer than every one the recipe lists read from
    PyPI's metadata; the recipe returned then says so in its first note (``derived_note``)."""
    from cuenv.recipes.catalogue import split_ref

    name, version = split_ref(ref)
    recipe = catalogue.find(name)
    if version is not None and version not in recipe.versions and is_newer(recipe, version):
        recipe = extend(recipe, version)
    return recipe, recipe.check_version(version)


@lru_cache(maxsize=1)
def _client() -> Client:
    """One client per process: resolving the same ref twice (check, then its note) reads PyPI once."""
    from cuenv.knowledge.pypi import Client

    return Client()


def derived_note(recipe: Recipe | None) -> str | None:
    """What create and check say about a recipe extended here; None otherwise (a lockfile has none)."""
    return recipe.notes[0] if recipe is not None and recipe.origin == DERIVED and recipe.notes else None


def is_newer(recipe: Recipe, version: str) -> bool:
    """A framework version past every version the recipe lists (the only kind derived on the fly)."""
    if recipe.framework is None or recipe.framework.name not in PROJECTS:
        return False
    from packaging.version import InvalidVersion, Version  # on use: `check RECIPE` without @VERSION needs none

    try:
        newer = Version(version) > max(Version(v) for v in recipe.versions)
    except InvalidVersion:
        return False
    if newer and recipe.framework.name == "torch":
        # a release the knowledge base lists without this recipe's build (cu121 of torch 2.9) is not one
        from cuenv.knowledge.refresh import listed_variants

        listed = listed_variants("torch", version)
        return listed is None or "cu" + str(recipe.cuda).replace(".", "") in listed
    return newer


def extend(recipe: Recipe, version: str, client: Client | None = None) -> Recipe:
    """``recipe`` with ``version`` added, its facts from PyPI; a UsageError when PyPI says it cannot be."""
    from cuenv.knowledge import derive, vendor
    from cuenv.knowledge.pypi import FetchError
    from cuenv.recipes.catalogue import Override, Python

    assert recipe.framework is not None
    fw = recipe.framework.name
    project, extras = PROJECTS[fw]
    client = client or _client()
    newest = recipe.framework.versions[-1] if recipe.framework.versions else recipe.framework.version
    try:
        if version not in vendor.wheels(client, project):
            raise UsageError(f"{fw} {version} is not a release on PyPI, and recipe {recipe.name!r} lists up to {newest}.",
                             hint=f"Pick a released version (`cuenv recipes show {recipe.name}` lists the known ones).")
        if fw == "jax":  # the CUDA pins sit on the plugin of the recipe's CUDA major
            major = str(recipe.cuda).split(".")[0]
            project, extras = f"jax-cuda{major}-plugin", ("with-cuda",)
            if version not in vendor.wheels(client, project):
                raise UsageError(f"jax {version} has no {project} on PyPI, so no CUDA {major} build.",
                                 hint=f"Use the newest version the recipe knows: `{recipe.name}@{newest}`.")
        row = vendor.framework_row(client, project, version, "version", extras)
    except FetchError as exc:
        raise UsageError(f"{fw} {version} is newer than recipe {recipe.name!r} knows, and PyPI could not be read: {exc}",
                         hint=f"Check the network, or use a known version: `{recipe.name}@{newest}`.") from None
    if row is None:
        raise UsageError(f"{fw} {version} has no Linux x86_64 wheel on PyPI.",
                         hint=f"Use a known version: `{recipe.name}@{newest}`.")
    own_build = row.get("cuda") is not None and row["cuda"] == str(recipe.cuda)
    if fw != "torch" and row.get("cuda_major") is not None and str(row["cuda_major"]) != str(recipe.cuda).split(".")[0]:
        raise UsageError(f"{fw} {version} pulls CUDA {row['cuda']}, not this recipe's CUDA {recipe.cuda}.",
                         hint="`cuenv recipes` lists the recipe for that CUDA; `cuenv suggest` picks one for this machine.")
    kept = dict(recipe.overrides).get(newest, Override())
    cudnn = derive.Pin(None, row["cudnn"]).lowest if row.get("cudnn") else None
    pythons = [p for p in row.get("python", ()) if not p.endswith("t")]
    python = recipe.python_for(newest)
    if pythons:
        low, high = pythons[0], pythons[-1]
        major, minor = high.split(".")
        default = python.default if python.default in pythons else pythons[len(pythons) // 2]
        python = Python(default, f">={low},<{major}.{int(minor) + 1}")
    derived_cudnn = derive.minor(cudnn) if cudnn and (own_build or fw != "torch") else None
    override = kept.replace(python=python, cudnn=derived_cudnn or kept.cudnn)
    facts = [f"Python {python.supported}"]
    if derived_cudnn:
        facts.insert(0, f"cuDNN {derived_cudnn}")
    if row.get("cuda"):
        facts.insert(0, f"CUDA {row['cuda']}" + ("" if own_build or fw != "torch" else " in the PyPI wheel"))
    carried = "" if own_build or fw != "torch" else (
        f"; the cu{str(recipe.cuda).replace('.', '')} build itself is on the vendor's index, so its cuDNN and"
        f" arch list are {newest}'s (unverified)")
    note = (f"{fw} {version} is newer than the catalogue (which ends at {newest}): its facts come from its PyPI"
            f" metadata ({row['source'].split(' (')[0]}): {', '.join(facts)}{carried}.")
    framework = recipe.framework.replace(versions=(*recipe.framework.versions, version))
    return recipe.replace(framework=framework, overrides=(*recipe.overrides, (version, override)),
                   notes=(note, *recipe.notes), origin=DERIVED)
