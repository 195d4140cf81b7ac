"""Re-derive cuenv's vendor facts from PyPI and compare them with the data files (a maintainer tool).

    python -m cuenv.knowledge.refresh            report differences and recipe proposals
    python -m cuenv.knowledge.refresh --check    the same, exit 1 on any difference (CI)
    python -m cuenv.knowledge.refresh --write    rewrite cuenv/knowledge/data/vendor.yaml

Facts with no machine-readable source (NVIDIA's driver table, PyTorch's per-variant builds on
download.pytorch.org, Paddle's own index) stay in cuda.yaml with their URL; this tool checks the
recipes' pins against what it derives and proposes the releases the catalogue lacks.
"""

from __future__ import annotations

import argparse
import sys
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Final

from packaging.version import InvalidVersion, Version

from cuenv.knowledge import derive, vendor
from cuenv.knowledge.pypi import Client, FetchError

DATA_FILE: Final = Path(__file__).with_name("data") / "vendor.yaml"
RECIPES: Final = Path(__file__).resolve().parents[2] / "recipes"
HEADER: Final = """\
# Facts derived from the vendors' own metadata on PyPI: wheel METADATA (Requires-Dist, tags) and
# include/crt/host_config.h inside NVIDIA's nvcc/crt wheels, CCCL's ptx_isa.h inside nvidia-cuda-cccl.
# Every row names the file it was read from.
# Written by `python -m cuenv.knowledge.refresh --write`; do not edit by hand (CI re-derives and compares).
"""
KEYS: Final = {  # how rows of a section are told apart
    "host_compilers": ("cuda",), "ptx_isa": ("ptx",), "cuda_toolkit": ("release",), "torch": ("torch",),
    "tensorflow": ("tensorflow",), "jax": ("plugin", "version"), "onnxruntime": ("onnxruntime_gpu",),
    "companions": ("project", "version"),
}
# recipe framework name -> PyPI project whose public versions the recipe pins
PROJECTS: Final = {"torch": "torch", "jax": "jax", "tensorflow": "tensorflow", "paddle": "paddlepaddle"}


def derive_all(client: Client) -> dict[str, Any]:
    """Every section, the independent ones side by side (each is a string of small HTTP reads)."""
    from concurrent.futures import ThreadPoolExecutor

    with ThreadPoolExecutor(max_workers=len(vendor.SECTIONS)) as pool:
        futures = {name: pool.submit(make, client) for name, make in vendor.SECTIONS.items()}
        return {"schema_version": 1, **{name: future.result() for name, future in futures.items()}}


# ---------------------------------------------------------------------------------------------
# Comparing
# ---------------------------------------------------------------------------------------------


def _key(section: str, row: Mapping[str, Any]) -> str:
    return " ".join(str(row.get(k)) for k in KEYS[section])


@dataclass(frozen=True, order=True)
class Difference:
    """One way vendor.yaml and PyPI differ: ``behind`` when the vendor shipped since (a new row, a newer
    patch of a series, a row its newer patch replaced), otherwise PyPI contradicts what the file says."""

    text: str
    behind: bool


def diff(old: Mapping[str, Any], new: Mapping[str, Any]) -> list[Difference]:
    """Row-by-row differences between the file (old) and a fresh derivation (new)."""
    out: list[Difference] = []
    for section in new:
        if section == "schema_version":
            continue
        before, after = old.get(section), new[section]
        if section not in KEYS:  # a mapping (releases)
            before = before or {}
            for project in sorted(set(before) | set(after)):
                b, a = before.get(project, {}), after.get(project, {})
                for mm in sorted(set(b) | set(a), key=_vkey):
                    if b.get(mm) != a.get(mm):
                        out.append(Difference(f"releases {project} {mm}: {b.get(mm) or 'absent'} -> {a.get(mm) or 'gone'}",
                                              _newer(a.get(mm), b.get(mm))))
            continue
        rows_b = {_key(section, r): r for r in before or ()}
        rows_a = {_key(section, r): r for r in after}
        added = rows_a.keys() - rows_b.keys()
        out += [Difference(f"{section} {k}: new row", True) for k in added]
        out += [Difference(f"{section} {k}: no longer derived", any(_supersedes(n, k) for n in added))
                for k in rows_b.keys() - rows_a.keys()]
        for k in rows_a.keys() & rows_b.keys():
            for f in sorted(set(rows_a[k]) | set(rows_b[k])):
                was, now = rows_b[k].get(f), rows_a[k].get(f)
                if f != "source" and was != now:
                    out.append(Difference(f"{section} {k}: {f} {was!r} -> {now!r}", _grew(was, now)))
    return sorted(out)


def _newer(after: str | None, before: str | None) -> bool:
    """A release that is new, or newer than the one recorded (a release that went away is not)."""
    if after is None:
        return False
    return before is None or _vkey(after) > _vkey(before)


def _grew(was: object, now: object) -> bool:
    """A list that only gained entries: wheels the vendor added to a release since (a new Python, a new
    platform); one that lost or changed any is contradicted."""
    return isinstance(was, list) and isinstance(now, list) and set(was) < set(now)


def _supersedes(new_key: str, old_key: str) -> bool:
    """``jax-cuda13-plugin 0.12.1`` replaces ``jax-cuda13-plugin 0.12.0.1``: same row but for a newer patch
    of the same major.minor (the refresher keeps each series' newest)."""
    *head_n, ver_n = new_key.split(" ")
    *head_o, ver_o = old_key.split(" ")
    try:
        vn, vo = Version(ver_n), Version(ver_o)
    except InvalidVersion:
        return False
    return head_n == head_o and vn.release[:2] == vo.release[:2] and vn > vo


def _vkey(text: str) -> Any:
    try:
        return (0, Version(text))
    except InvalidVersion:
        return (1, text)


# ---------------------------------------------------------------------------------------------
# Recipes
# ---------------------------------------------------------------------------------------------


@dataclass
class RecipeReport:
    problems: list[str] = field(default_factory=list)  # a pin PyPI contradicts
    proposals: list[str] = field(default_factory=list)  # a release the vendor published since


def _load_recipes(folder: Path) -> list[dict[str, Any]]:
    import yaml

    return [yaml.safe_load(p.read_text()) | {"_file": p.name} for p in sorted(folder.glob("*.yaml"))]


def _effective(recipe: Mapping[str, Any], version: str) -> dict[str, Any]:
    """The recipe as it applies to one framework version (its `overrides` entry merged in)."""
    return {**recipe, **((recipe.get("overrides") or {}).get(version) or {})}


def _mm(version: str | None) -> str | None:
    try:
        return derive.minor(version) if version else None
    except InvalidVersion:
        return None


Variants = Callable[[str, str], "tuple[str, ...] | None"]


def check_recipes(facts: Mapping[str, Any], recipes: Sequence[Mapping[str, Any]],
                  exists: Callable[[str, str], bool], variants: Variants) -> RecipeReport:
    """Every pinned version exists on PyPI, every pin PyPI's metadata states agrees; new releases proposed.

    ``variants(framework, version)`` gives the builds the published tables list for a release
    (PyTorch's release matrix, Paddle's index), None when the knowledge base does not know it.
    """
    rep = RecipeReport()
    releases = facts["releases"]
    torch_rows = {r["torch"]: r for r in facts["torch"]}
    tf_rows = {r["tensorflow"]: r for r in facts["tensorflow"]}
    jax_rows = {(r["plugin"], r["version"]): r for r in facts["jax"]}
    for recipe in recipes:
        name = recipe["name"]
        fw = recipe.get("framework")
        if not fw:
            rep.problems += _check_cuda_recipe(recipe, facts["cuda_toolkit"])
            continue
        project = PROJECTS.get(fw["name"])
        if project is None:
            continue
        pinned = list(fw.get("versions") or [fw["version"]])
        for version in pinned:
            eff = _effective(recipe, version)
            if not exists(project, version):
                rep.problems.append(f"{name}: {project} {version} is not a release on PyPI")
                continue
            want = None
            if fw["name"] == "torch" and version in torch_rows and _variant(recipe) == _torch_variant(torch_rows[version]):
                want = torch_rows[version]
            elif fw["name"] == "tensorflow" and version in tf_rows:
                want = tf_rows[version]
            elif fw["name"] == "jax":
                want = jax_rows.get((f"jax-cuda{str(eff['cuda']).split('.')[0]}-plugin", _plugin_version(facts, version)))
            if want is not None:
                rep.problems += _compare_pins(name, version, eff, want)
                rep.problems += _compare_arch(name, version, eff, want)
        newest = max(pinned, key=Version)
        for mm, version in releases.get(project, {}).items():
            if Version(version) <= Version(newest) or Version(mm) <= Version(derive.minor(newest)):
                continue
            built = _built(fw["name"], recipe, facts, version, variants)
            if built is None:
                rep.proposals.append(f"{name}: {project} {version} is out and unknown to cuda.yaml: "
                                     f"add its builds from the vendor's table, then pin it here if {_variant(recipe)} is one")
            elif built:
                rep.proposals.append(f"{name}: {project} {version} is out (newest pinned: {newest})")
    return rep


def _built(framework: str, recipe: Mapping[str, Any], facts: Mapping[str, Any], version: str,
           variants: Variants) -> bool | None:
    """Is there a build of ``version`` for this recipe's CUDA? None when no source says either way."""
    if framework in ("torch", "paddle"):
        listed = variants(framework, version)
        if listed is not None:
            return _variant(recipe) in listed
        if framework == "torch":  # the PyPI wheel proves its own build
            row = next((r for r in facts["torch"] if r["torch"] == version), None)
            if row is not None and _torch_variant(row) == _variant(recipe):
                return True
        return None
    if framework == "tensorflow":
        row = next((r for r in facts["tensorflow"] if r["tensorflow"] == version), None)
        return row is not None and row.get("cuda") == _mm(str(recipe["cuda"]))
    if framework == "jax":
        major = str(recipe["cuda"]).split(".")[0]
        return any(r["plugin"] == f"jax-cuda{major}-plugin" and derive.minor(r["version"]) == derive.minor(version)
                   for r in facts["jax"])
    return None


def _variant(recipe: Mapping[str, Any]) -> str:
    return "cu" + str(recipe["cuda"]).replace(".", "")


def _torch_variant(row: Mapping[str, Any]) -> str | None:
    return "cu" + row["cuda"].replace(".", "") if row.get("cuda") else None


def _plugin_version(facts: Mapping[str, Any], jax_version: str) -> str:
    mm = derive.minor(jax_version)
    return next((r["version"] for r in facts["jax"] if derive.minor(r["version"]) == mm), jax_version)


def _compare_pins(name: str, version: str, recipe: Mapping[str, Any], row: Mapping[str, Any]) -> list[str]:
    out = []
    if row.get("cuda") and _mm(str(recipe.get("cuda"))) != row["cuda"] and not str(row.get("cudart") or "").startswith(">="):
        out.append(f"{name} {version}: cuda {recipe.get('cuda')} but the wheel pins CUDA {row['cuda']} ({row['source']})")
    python = str((recipe.get("python") or {}).get("default") or "")
    if python and row.get("python") and python not in row["python"]:
        out.append(f"{name} {version}: python {python} but the release has wheels for {', '.join(row['python'])} ({row['source']})")
    cudnn = derive.Pin(None, row["cudnn"]).lowest if row.get("cudnn") else None
    if cudnn and recipe.get("cudnn") and _mm(str(recipe["cudnn"])) != _mm(cudnn):
        out.append(f"{name} {version}: cudnn {recipe['cudnn']} but the wheel asks for cuDNN {row['cudnn']} ({row['source']})")
    return out


def _compare_arch(name: str, version: str, recipe: Mapping[str, Any], row: Mapping[str, Any]) -> list[str]:
    """The recipe's GPU targets against those the wheel says it was built for (TensorFlow's build_info)."""
    built = row.get("arch")
    if not built or not recipe.get("arch"):
        return []
    out = []
    for kind in ("sass", "ptx"):
        have = sorted(map(str, recipe["arch"].get(kind) or []), key=Version)
        want = sorted(built.get(kind) or [], key=Version)
        if have != want:
            out.append(f"{name} {version}: arch {kind} {have} but the wheel was built for {want} ({row['arch_source']})")
    return out


def _check_cuda_recipe(recipe: Mapping[str, Any], toolkit: Sequence[Mapping[str, Any]]) -> list[str]:
    """A bare CUDA recipe's venv pins must all belong to one cuda-toolkit release of its minor."""
    reqs = ((recipe.get("install") or {}).get("venv") or {}).get("requirements") or []
    pins = {}
    for req in reqs:
        lib, _, version = req.partition("==")
        piece = {"nvidia-cuda-runtime": "cudart", "nvidia-cuda-nvcc": "nvcc", "nvidia-nvvm": "nvvm",
                 "nvidia-cuda-crt": "crt", "nvidia-cuda-nvrtc": "nvrtc", "nvidia-cublas": "cublas"}.get(
                     lib.removesuffix("-cu11").removesuffix("-cu12"))
        if piece and version:
            pins[piece] = version
    if not pins:
        return []
    mm = str(recipe["cuda"])
    for row in toolkit:
        if derive.minor(row["release"]) == mm and all(row.get(k) == v for k, v in pins.items()):
            return []
    return [f"{recipe['name']}: venv pins {pins} match no cuda-toolkit {mm}.x release on PyPI"]


# ---------------------------------------------------------------------------------------------
# Files and the command line
# ---------------------------------------------------------------------------------------------


def listed_variants(framework: str, version: str) -> tuple[str, ...] | None:
    """The builds cuda.yaml lists for a torch or paddle release (from the vendors' published tables)."""
    from cuenv.knowledge import matrix

    if framework == "torch":
        return matrix.torch_variants(version) if matrix.torch_release(version) else None
    if framework == "paddle":
        return matrix.paddle_variants(version) if matrix.paddle_release(version) else None
    return None


def load(path: Path = DATA_FILE) -> dict[str, Any]:
    import yaml

    if not path.is_file():
        return {}
    return yaml.safe_load(path.read_text()) or {}


def dump(facts: Mapping[str, Any]) -> str:
    import yaml

    parts = [HEADER]
    for section, value in facts.items():
        if not isinstance(value, (list, dict)):
            parts.append(f"{section}: {value}\n")
        elif isinstance(value, list):
            parts.append(f"{section}:\n")
            for row in value:
                parts.append("  - " + yaml.safe_dump(row, default_flow_style=True, sort_keys=False, width=10_000))
        else:
            parts.append(yaml.safe_dump({section: value}, default_flow_style=None, sort_keys=False, width=120))
    return "".join(parts)


@dataclass
class Outcome:
    differences: list[Difference]
    recipes: RecipeReport
    requests: int
    largest_range: int  # bytes, Client.largest_range


def run(client: Client, *, write: bool = False, data_file: Path = DATA_FILE, recipes: Path = RECIPES) -> Outcome:
    fresh = derive_all(client)
    differences = diff(load(data_file), fresh)
    if write:
        data_file.parent.mkdir(parents=True, exist_ok=True)
        data_file.write_text(dump(fresh))
        differences = []
    report = check_recipes(fresh, _load_recipes(recipes), lambda p, v: v in vendor.wheels(client, p), listed_variants)
    return Outcome(differences, report, client.requests, client.largest_range)


def _print(lines: Iterable[str], title: str) -> None:
    lines = list(lines)
    if lines:
        print(f"{title} ({len(lines)}):")
        for line in lines:
            print(f"  {line}")


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m cuenv.knowledge.refresh", description=__doc__.split("\n")[0])
    mode = parser.add_mutually_exclusive_group()
    mode.add_argument("--check", action="store_true", help="exit 1 when anything differs (for CI)")
    mode.add_argument("--write", action="store_true", help=f"rewrite {DATA_FILE.name} from what PyPI says now")
    parser.add_argument("--cache", type=Path, help="keep HTTP responses in this folder (re-runs read them)")
    parser.add_argument("--index", default="https://pypi.org", help="PyPI base URL (default: %(default)s)")
    args = parser.parse_args(argv)
    try:
        outcome = run(Client(args.index, args.cache), write=args.write)
    except FetchError as exc:
        print(f"error: cannot read vendor metadata: {exc}", file=sys.stderr)
        print("hint: check that PyPI is reachable (or pass --index with a mirror's URL), then run it again", file=sys.stderr)
        return 2
    _print((d.text + (" (new since)" if d.behind else "") for d in outcome.differences),
           f"{DATA_FILE.name} differs from PyPI")
    _print(outcome.recipes.problems, "recipe pins PyPI contradicts")
    _print(outcome.recipes.proposals, "new releases the catalogue lacks")
    if args.write:
        print(f"wrote {DATA_FILE}")
    clean = not outcome.differences and not outcome.recipes.problems and not outcome.recipes.proposals
    if clean:
        print(f"no difference: {DATA_FILE.name} and the recipes match PyPI ({outcome.requests} requests)")
    return 1 if args.check and not clean else 0


if __name__ == "__main__":
    raise SystemExit(main())
