"""Fuzzing every parser of shared input (issue 14 §6): a clean error or a valid result, never an internal
error, never a write outside CUENV_HOME.

"Clean" means a ``CuenvError`` whose message is one line. Each parser gets random text, and random
mutations of a valid document (a key dropped, a value replaced by something hostile), so that the
fuzzing reaches past the first line of validation.
"""

from __future__ import annotations

import json
import os
import tarfile
from pathlib import Path
from typing import Any, Callable

import pytest
import yaml
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from cuenv.errors import CuenvError

FUZZ = settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
HOSTILE_VALUES = st.one_of(
    st.text(max_size=30), st.integers(), st.floats(allow_nan=True), st.none(), st.booleans(),
    st.just("1" * 5000), st.just("x" * 200_000), st.just("a\nb"), st.just("a\0b"), st.just("-e /tmp/x"),
    st.just("PROMPT_COMMAND"), st.just("../../etc/passwd"), st.just({"a": [1, {"b": None}]}), st.just([[[[[]]]]]),
)


def _clean(call: Callable[[], Any]) -> Any:
    try:
        return call()
    except CuenvError as exc:
        assert "\n" not in exc.message, exc.message
        assert "Traceback" not in exc.message
        return None


def _mutations(doc: Any) -> st.SearchStrategy[Any]:
    """``doc`` with one value somewhere replaced by a hostile one, or one key dropped."""
    paths: list[tuple] = []

    def walk(node: Any, path: tuple) -> None:
        paths.append(path)
        if isinstance(node, dict):
            for k, v in node.items():
                walk(v, path + (k,))
        elif isinstance(node, list):
            for i, v in enumerate(node):
                walk(v, path + (i,))

    walk(doc, ())

    def apply(path: tuple, value: Any, drop: bool) -> Any:
        out = json.loads(json.dumps(doc))
        if not path:
            return value
        parent = out
        for part in path[:-1]:
            parent = parent[part]
        if drop and isinstance(parent, dict):
            parent.pop(path[-1], None)
        else:
            parent[path[-1]] = value
        return out

    return st.builds(apply, st.sampled_from(paths), HOSTILE_VALUES, st.booleans())


# -- lockfile ------------------------------------------------------------------------------------
def _valid_lock() -> dict:
    from cuenv.engines import Package, Solution
    from cuenv.knowledge.stack import Stack
    from cuenv.lock import model

    ch = "https://conda.example.org/nvidia"
    pkg = Package(name="cuda-cudart", version="12.1.105", kind="conda", build="h0_0", channel=ch, subdir="linux-64",
                  url=f"{ch}/linux-64/cuda-cudart-12.1.105-h0_0.conda", sha256="a" * 64, md5="b" * 32)
    stack = Stack(label="demo", cuda="12.1", cudnn=None, sass=("8.0",), ptx=(), has_nvcc=False, os=("linux",))
    lock = model.build(recipe=model.LockRecipe("demo", env={"CUDA_MODULE_LOADING": "LAZY"}),
                       engine="rattler", stack=stack, solutions=[Solution("rattler", "linux-64", "3.11", (pkg,))])
    return yaml.safe_load(model.dump(lock))


@FUZZ
@given(st.data())
def test_lockfile(data: st.DataObject) -> None:
    from cuenv.lock import model

    doc = data.draw(_mutations(_valid_lock()))
    text = data.draw(st.one_of(st.just(yaml.safe_dump(doc)), st.text(max_size=300)))
    lock = _clean(lambda: model.parse(text, file="x.lock"))
    if lock is not None:
        from cuenv.trust import envvars

        assert not envvars.problems(lock.recipe.env)


# -- recipe --------------------------------------------------------------------------------------
REPO = Path(__file__).resolve().parents[2]


@FUZZ
@given(st.data())
def test_recipe(data: st.DataObject) -> None:
    from cuenv.recipes import catalogue, lint

    doc = data.draw(_mutations(yaml.safe_load((REPO / "recipes" / "cuda-12.1.yaml").read_text())))
    text = data.draw(st.one_of(st.just(yaml.safe_dump(doc)), st.text(max_size=300)))
    recipe = _clean(lambda: catalogue.parse(text, file="r.yaml", stem="cuda-12.1"))
    lint.check_text(text, "r.yaml")  # the linter collects; it never raises
    if recipe is not None and recipe.venv is not None:
        from cuenv.trust import requirements

        # Loading guarantees no option, no second line, no local path; the engine parses PEP 508 in full.
        for req in recipe.venv.requirements:
            assert requirements.requirement_problem(req, parse=False) is None
            assert not req.strip().startswith("-") and "\n" not in req


# -- config --------------------------------------------------------------------------------------
@FUZZ
@given(st.one_of(st.dictionaries(st.sampled_from(["home", "cache_dir", "engine", "recipe_dirs", "prompt",
                                                  "auto_activate", "trusted_env_vars", "other"]), HOSTILE_VALUES,
                                 max_size=4).map(yaml.safe_dump),
                 st.text(max_size=200), st.binary(max_size=200).map(lambda b: b.decode("latin-1"))))
def test_config(tmp_path_factory: pytest.TempPathFactory, text: str) -> None:
    from cuenv import config

    path = tmp_path_factory.mktemp("cfg") / "config.yaml"
    path.write_bytes(text.encode("utf-8", "surrogateescape"))
    _clean(lambda: config.resolve({}, {"CUENV_CONFIG": str(path)}))


# -- request files ---------------------------------------------------------------------------------
@FUZZ
@given(st.one_of(st.text(max_size=300),
                 st.builds(lambda deps, ch: yaml.safe_dump({"channels": ch, "dependencies": deps}),
                           st.lists(HOSTILE_VALUES, max_size=4), st.lists(HOSTILE_VALUES, max_size=2))),
       st.sampled_from(["environment-yml", "requirements"]))
def test_request_file(tmp_path_factory: pytest.TempPathFactory, text: str, kind: str) -> None:
    from cuenv.recipes import requestfiles

    path = tmp_path_factory.mktemp("req") / ("environment.yml" if kind == "environment-yml" else "requirements.txt")
    path.write_text(text, encoding="utf-8", errors="surrogateescape")
    _clean(lambda: requestfiles.from_file(path, kind=kind, name=None, cuda="12.1"))


# -- .cuenv ----------------------------------------------------------------------------------------
@FUZZ
@given(st.one_of(st.text(max_size=300), st.binary(max_size=300).map(lambda b: b.decode("latin-1"))))
def test_project_pin(tmp_path_factory: pytest.TempPathFactory, text: str) -> None:
    from cuenv.envs import project

    folder = tmp_path_factory.mktemp("proj")
    (folder / ".cuenv").write_bytes(text.encode("utf-8", "surrogateescape"))
    pin = _clean(lambda: project.find(folder))
    if pin is not None:
        assert "\n" not in pin.env and pin.env.strip() == pin.env and len(pin.env) <= 81


# -- archive manifest ------------------------------------------------------------------------------
@FUZZ
@given(st.data())
def test_archive_manifest(tmp_path_factory: pytest.TempPathFactory, data: st.DataObject) -> None:
    import io

    from cuenv.export import pack

    good = {"format": 1, "name": "x", "kind": "conda", "meta": {"layout": {"prefix": "/a", "kind": "conda"}},
            "lock": json.dumps({"version": 1, "engine": "rattler", "platform": "linux-64", "packages": []})}
    doc = data.draw(_mutations(good))
    raw = data.draw(st.one_of(st.just(json.dumps(doc).encode()), st.binary(max_size=200)))
    archive = tmp_path_factory.mktemp("pack") / "a.tar"
    with tarfile.open(archive, "w") as tar:
        info = tarfile.TarInfo(pack.MANIFEST)
        info.size = len(raw)
        tar.addfile(info, io.BytesIO(raw))
    manifest = _clean(lambda: pack.read_manifest(archive))
    if manifest is not None:
        _clean(lambda: pack.read_lock(archive, manifest))


@FUZZ
@given(st.data())
def test_archive_lock_and_metadata(tmp_path_factory: pytest.TempPathFactory, data: st.DataObject) -> None:
    """Inside the manifest: the lock (a JSON string) and the recorded metadata, each mutated anywhere."""
    from cuenv.export import pack

    lock = {"version": 1, "engine": "rattler", "platform": "linux-64", "packages": [
        {"name": "cuda-cudart", "version": "12.1.105", "kind": "conda", "build": "h0_0", "size": 232881,
         "url": "https://conda.example.org/c/linux-64/cuda-cudart-12.1.105-h0_0.conda", "sha256": "a" * 64}]}
    meta = {"layout": {"prefix": "/e", "kind": "conda", "bin_dirs": ["/e/bin"], "lib_dirs": ["/e/lib"],
                       "include_dirs": [], "cuda_home": "/e"}, "env_vars": {"CUDA_MODULE_LOADING": "LAZY"},
            "activate_scripts": ["/e/etc/conda/activate.d/x.sh"]}
    manifest = {"lock": json.dumps(data.draw(_mutations(lock))), "meta": data.draw(_mutations(meta))}
    archive = tmp_path_factory.mktemp("pack") / "a.tar"
    _safe_packages(_clean(lambda: pack.read_lock(archive, manifest)))
    if isinstance(manifest["meta"], dict):
        _clean(lambda: pack._check_meta(archive, manifest, ()))


def _safe_packages(solution: Any) -> None:
    for pkg in solution.packages if solution is not None else ():  # what reaches uv, conda or a progress display
        assert pkg.size is None or (type(pkg.size) is int and pkg.size >= 0), pkg.size


@FUZZ
@given(HOSTILE_VALUES)
def test_archive_package_size(tmp_path_factory: pytest.TempPathFactory, size: Any) -> None:
    from cuenv.export import pack

    lock = {"version": 1, "engine": "rattler", "platform": "linux-64", "packages": [
        {"name": "x", "version": "1", "kind": "conda", "url": "https://e.org/x.conda", "sha256": "a" * 64, "size": size}]}
    _safe_packages(_clean(lambda: pack.read_lock(Path("a.tar"), {"lock": json.dumps(lock)})))


# -- doctor report ---------------------------------------------------------------------------------
@FUZZ
@given(st.one_of(st.text(max_size=400),
                 st.lists(st.sampled_from(["NVIDIA-SMI 550.54.14", "Driver Version: 550.54.14", "CUDA Version: 12.4",
                                           "torch 2.3.1+cu121", "GPU 0: NVIDIA H100 (UUID: x)", "1" * 5000,
                                           "CUDA used to build PyTorch: 12.1", "[" * 1000]),
                          max_size=6).map("\n".join)))
def test_doctor_report(text: str) -> None:
    from cuenv.doctor import report

    _clean(lambda: report.parse(text))


# -- command-line argument values ------------------------------------------------------------------
ARGS = [
    ("check", "cuda-12.1", "--driver", "{v}"), ("check", "cuda-12.1", "--cc", "{v}"), ("check", "{v}"),
    ("suggest", "--driver", "{v}"), ("create", "cuda-12.1", "--dry-run", "-n", "{v}"),
    ("create", "cuda-12.1", "--dry-run", "--python", "{v}"), ("remove", "-y", "{v}"), ("run", "{v}", "--", "true"),
    ("recipes", "show", "{v}"), ("lock", "--check", "{v}", "{v}"), ("allow", "{v}"),
]


@settings(max_examples=80, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(st.sampled_from(ARGS), st.one_of(st.text(min_size=0, max_size=40).filter(lambda s: "\0" not in s),
                                         st.just("1" * 5000), st.just("8.6.7"), st.just("550.1.2.3.4"),
                                         st.just(""), st.just("../../etc"), st.just("-x")))
def test_cli_argument_values(cli, isolated: Path, template: tuple[str, ...], value: str) -> None:
    before = _outside_snapshot(isolated)
    code, _, err = cli(*(part.replace("{v}", value) for part in template))
    assert "internal error" not in err and "Traceback" not in err, err
    assert code in (0, 1, 2), (code, err)
    assert _outside_snapshot(isolated) == before  # only CUENV_HOME (and the cache) may change


def _outside_snapshot(isolated: Path) -> list[str]:
    """Every path under the test's root except CUENV_HOME: nothing else may appear or vanish."""
    home = isolated / "home"
    out = []
    for root, dirs, files in os.walk(isolated):
        if Path(root) == isolated:
            dirs[:] = [d for d in dirs if (isolated / d) != home]
        out += [os.path.join(root, f) for f in files]
    return sorted(out)
