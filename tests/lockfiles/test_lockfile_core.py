"""cuenv.lock.model, pure: dump/parse round trip, determinism, the contract, strict refusals, drift."""

from __future__ import annotations

import pytest

from cuenv.engines import Package, Solution
from cuenv.knowledge import matrix
from cuenv.knowledge.compat import check
from cuenv.knowledge.stack import Stack
from cuenv.lock import model as lockfile
from cuenv.lock.drift import drift
from cuenv.machine.model import Driver, Gpu, Machine

CH = "https://conda.example.org/nvidia"
STACK = Stack(label="demo", cuda="12.1", cudnn="8.9", sass=("9.0", "8.0", "8.0"), ptx=("9.0",), has_nvcc=True,
              os=("linux",), framework="torch", framework_version="2.3.1", variant="cu121")


def _conda(name: str, version: str, sub: str = "linux-64", **kw) -> Package:
    return Package(name=name, version=version, kind="conda", build="h0_0", channel=CH, subdir=sub,
                   url=f"{CH}/{sub}/{name}-{version}-h0_0.conda", sha256="a" * 64, md5="b" * 32,
                   filename=f"{name}-{version}-h0_0.conda", **kw)


def _wheel(name: str, version: str) -> Package:
    return Package(name=name, version=version, kind="pypi", sha256="c" * 64,
                   url=f"https://files.pythonhosted.org/packages/xx/{name}-{version}-py3-none-any.whl")


def _lock(**kw) -> lockfile.Lock:
    sols = kw.pop("solutions", [
        Solution("rattler", "linux-aarch64", "3.11", (_conda("cuda-cudart", "12.1.105", "linux-aarch64"),)),
        Solution("rattler", "linux-64", "3.11", (_conda("python", "3.11.9"), _conda("cuda-cudart", "12.1.105"))),
    ])
    return lockfile.build(recipe=lockfile.LockRecipe("demo", "2.3.1", "sha256:" + "d" * 64, {"NCCL_DEBUG": "2", "CUDA_MODULE_LOADING": "1"}),
                          engine=kw.pop("engine", "rattler"), stack=STACK, solutions=sols,
                          made_on=kw.pop("made_on", {"driver": "550.54.14", "gpus": ["NVIDIA H100 (9.0)"]}))


def test_round_trip_and_determinism() -> None:
    lock = _lock()
    text = lockfile.dump(lock)
    assert text == lockfile.dump(_lock()) and "T" not in text.split("made_on")[0].replace("True", "")  # no timestamps
    again = lockfile.parse(text)
    assert again == lock and lockfile.dump(again) == text
    assert lock.platforms == ("linux-64", "linux-aarch64")  # sorted, whatever order they were solved in
    # packages sorted by name within a platform, one block each
    assert [p.name for p in lock.solution_for("linux-64").packages] == ["cuda-cudart", "python"]
    assert text.count("\n    - name: ") == 3
    assert list(lock.recipe.env) == ["CUDA_MODULE_LOADING", "NCCL_DEBUG"]


def test_contract_from_the_knowledge_base() -> None:
    c = _lock().contract
    assert c.min_driver == (lockfile.MinDriver("linux", matrix.min_driver("12.1", "linux"), matrix.family_floor(12, "linux")),)
    assert c.min_driver[0].full == "530.30.02" and c.min_driver[0].floor == "525.60.13"
    assert c.sass == ("8.0", "9.0") and c.ptx == ("9.0",)
    assert c.stack() == STACK.replace(sass=("8.0", "9.0"))
    win = lockfile.build(recipe=lockfile.LockRecipe("demo"), engine="rattler", stack=STACK,
                         solutions=[Solution("rattler", "win-64", "3.11", ())]).contract
    assert win.os == ("windows",) and win.min_driver[0].full == matrix.min_driver("12.1", "windows")


def test_contract_findings_reuse_check() -> None:
    lock = _lock()
    old = Machine(driver=Driver("470.82.01", "11.4", "flag"), gpus=(Gpu(0, "H100", "9.0"),))
    found = lockfile.contract_findings(lock, old)
    assert found == check(lock.contract.stack(), old)
    assert found[0].severity == "error" and found[0].code == "driver-too-old"
    ok = Machine(driver=Driver("550.54.14", "12.4", "flag"), gpus=(Gpu(0, "H100", "9.0"),))
    assert not [f for f in lockfile.contract_findings(lock, ok) if f.severity == "error"]


def test_made_on_is_information_only() -> None:
    a, b = _lock(), _lock(made_on={"driver": None, "gpus": []})
    assert lockfile.dump(a) != lockfile.dump(b)
    assert lockfile.content_hash(a) == lockfile.content_hash(b)
    changed = _lock(solutions=[Solution("rattler", "linux-64", "3.11", (_conda("python", "3.11.8"),))])
    assert lockfile.content_hash(changed) != lockfile.content_hash(a)


def test_pypi_packages_name_their_index() -> None:
    lock = _lock(engine="venv", solutions=[Solution("venv", "linux-64", "3.11", (_wheel("nvidia-cuda-runtime-cu12", "12.1.105"),))])
    assert lock.indexes == (lockfile.PYPI_SIMPLE,) and lock.channels == ()
    assert lock.solution_for("linux-64").packages[0].index_url == lockfile.PYPI_SIMPLE
    assert lockfile.parse(lockfile.dump(lock)) == lock


@pytest.mark.parametrize("edit, message", [
    (lambda t: t.replace("platforms: [linux-64, linux-aarch64]", "platforms: [linux-64, linux-aarch64"),
     r"is not valid YAML: .* \(line \d+\)"),
    (lambda t: t.replace("version: 1\n", "version: 2\n", 1), "Unknown lockfile schema version 2; this cuenv reads version 1."),
    (lambda t: t.replace("version: 1\n", "", 1), "no `version` key"),
    (lambda t: t.replace("engine: rattler\n", ""), "Missing key engine."),
    (lambda t: t.replace("      floor: 525.60.13\n", ""), "contract.min_driver.linux: expected `full` and `floor`."),
    (lambda t: t.replace("      md5: " + "b" * 32 + "\n", "", 1).replace("      sha256: " + "a" * 64 + "\n", "", 1),
     r"packages.linux-64\[0\] \(cuda-cudart\): a conda package needs a sha256 or md5."),
    (lambda t: t.replace("a" * 64, "a" * 63 + "g", 1), "is not a sha256 hex digest"),
    (lambda t: t.replace(f"url: {CH}/linux-64/python", "url: https://evil.example.com/linux-64/python"),
     r"\(python\): URL https://evil.example.com/linux-64/python-3.11.9-h0_0.conda is outside its channel"),
    (lambda t: t.replace(f"channel: {CH}\n", "channel: https://evil.example.com\n", 1), "is not one of sources.channels"),
    (lambda t: t.replace("platforms: [linux-64, linux-aarch64]", "platforms: [linux-64]"),
     "packages: has lists for linux-64, linux-aarch64, but platforms says linux-64."),
    (lambda t: t + "extra: 1\n", "Unknown key extra."),
    (lambda t: "- just\n- a list\n", "Not a cuenv lockfile"),
    # shared input (issue 14): variables that run or load code, bad names, NUL, huge values, bombs
    (lambda t: t.replace("    CUDA_MODULE_LOADING: '1'\n", "    PROMPT_COMMAND: touch /tmp/pwned\n"),
     "recipe.env.PROMPT_COMMAND: PROMPT_COMMAND bash runs it as a command at every prompt."),
    (lambda t: t.replace("    CUDA_MODULE_LOADING: '1'\n", "    LD_PRELOAD: /tmp/evil.so\n"), "recipe.env.LD_PRELOAD: LD_PRELOAD changes how"),
    (lambda t: t.replace("    CUDA_MODULE_LOADING: '1'\n", "    BASH_ENV: /tmp/x\n"), "recipe.env.BASH_ENV: BASH_ENV bash runs that file"),
    (lambda t: t.replace("    CUDA_MODULE_LOADING: '1'\n", "    bad-name: x\n"), "recipe.env.bad-name: 'bad-name' is not a variable name"),
    (lambda t: t.replace("    CUDA_MODULE_LOADING: '1'\n", "    TRITON_CACHE_MANAGER: evil:Manager\n"),
     "recipe.env.TRITON_CACHE_MANAGER: TRITON_CACHE_MANAGER is not on the list"),
    (lambda t: t.replace("    CUDA_MODULE_LOADING: '1'\n", "    XLA_FLAGS: --xla_gpu_load_autotune_results_from=/tmp/x\n"),
     "recipe.env.XLA_FLAGS: the value of XLA_FLAGS sets --xla_gpu_load_autotune_results_from, which names a path"),
    (lambda t: t.replace("    CUDA_MODULE_LOADING: '1'\n", '    CUDA_MODULE_LOADING: "a\\0b"\n'), "control character"),
    (lambda t: t.replace("    CUDA_MODULE_LOADING: '1'\n", "    CUDA_MODULE_LOADING: " + "x" * 100_000 + "\n"), "100000 characters long"),
    (lambda t: t.replace("version: 1\n", "version: " + "1" * 5000 + "\n", 1), "holds a value cuenv cannot read"),
    (lambda t: t.replace("engine: rattler\n", "engine: " + "[" * 100_000 + "]" * 100_000 + "\n"), "nested more than 64"),
])
def test_bad_locks_are_refused_in_one_line(edit, message) -> None:
    text = edit(lockfile.dump(_lock()))
    with pytest.raises(lockfile.LockError, match=message) as info:
        lockfile.parse(text, file="cuenv.lock")
    assert "\n" not in info.value.message and info.value.message.startswith("cuenv.lock: ")
    assert info.value.exit_code == 2


def test_foreign_wheel_url_is_refused() -> None:
    lock = _lock(engine="venv", solutions=[Solution("venv", "linux-64", "3.11", (_wheel("nvidia-cuda-runtime-cu12", "12.1.105"),))])
    text = lockfile.dump(lock).replace("https://files.pythonhosted.org/", "https://mirror.evil.example/")
    with pytest.raises(lockfile.LockError, match="is outside its index https://pypi.org/simple"):
        lockfile.parse(text)


@pytest.mark.parametrize("url, index, ok", [
    ("https://files.pythonhosted.org/packages/a/b.whl", "https://pypi.org/simple", True),
    ("https://download-r2.pytorch.org/whl/cu121/torch.whl", "https://download.pytorch.org/whl/cu121", True),
    ("https://pypi.nvidia.com/nvidia-cudnn/x.whl", "https://pypi.nvidia.com", True),
    ("https://evil.org/b.whl", "https://pypi.org/simple", False),
    ("http://files.pythonhosted.org/b.whl", "https://pypi.org/simple", False),
])
def test_served_by(url, index, ok) -> None:
    assert lockfile.served_by(url, index) is ok


def test_wrong_platform() -> None:
    text = lockfile.dump(_lock(solutions=[Solution("rattler", "linux-aarch64", "3.11", (_conda("x", "1", "linux-aarch64"),))]))
    with pytest.raises(lockfile.LockError, match="This machine is linux-64, which the lock is not made for "
                                                  r"\(it holds linux-aarch64\)"):
        lockfile.parse(text, platform="linux-64")
    assert lockfile.parse(text, platform="linux-aarch64").platforms == ("linux-aarch64",)


def test_platform_of() -> None:
    assert lockfile.platform_of("linux", "x86_64") == "linux-64"
    assert lockfile.platform_of("linux", "aarch64") == "linux-aarch64"
    assert lockfile.platform_of("windows", "AMD64") == "win-64"


def test_drift() -> None:
    locked = (_conda("a", "1"), _conda("b", "1"), _conda("c", "1"))
    installed = (_conda("a", "1"), _conda("c", "2"), _conda("d", "1"))
    d = drift(locked, installed)
    assert [p.name for p in d.added] == ["d"] and [p.name for p in d.removed] == ["b"]
    assert [(a.version, b.version) for a, b in d.changed] == [("1", "2")]
    assert d.lines() == ["+ d 1-h0_0 (not in the lock)", "- b 1-h0_0 (locked, not installed)", "~ c 1-h0_0 -> 2-h0_0"]
    assert not drift(locked, locked)
    rehashed = locked[0].replace(sha256="e" * 64)
    assert drift(locked[:1], (rehashed,)).changed


def test_reference_example_parses_and_every_key_is_documented() -> None:
    from pathlib import Path

    doc = (Path(__file__).resolve().parents[2] / "docs" / "reference" / "lockfile.md").read_text()
    example = doc.split("```yaml\n", 1)[1].split("```", 1)[0]
    lock = lockfile.parse(example, platform="linux-64")
    assert lockfile.dump(lock) == example  # the example is exactly what cuenv writes
    for key in [*lockfile._TOP_KEYS, *lockfile._PACKAGE_KEYS, "min_driver", "sass", "ptx", "solved_for", "indexes"]:
        assert f"`{key}`" in doc, key
