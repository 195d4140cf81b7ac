"""The cases of issue 14, tried as a hostile user would through the command line: each is refused in
one or two lines with a non-zero exit, nothing runs, and nothing outside CUENV_HOME changes."""

from __future__ import annotations

from pathlib import Path
from typing import Callable

import pytest
import yaml

from tests.trust.test_limits import BOMB

REPO = Path(__file__).resolve().parents[2]


def _one_clean_error(code: int, err: str, *expected: str) -> None:
    assert code in (1, 2), err
    assert err.startswith("error: ") and err.count("\n") <= 2, err
    assert "internal error" not in err and "Traceback" not in err
    for text in expected:
        assert text in err, err


@pytest.mark.parametrize(("content", "message"), [
    (None, "Config file /dev/zero is a device, not a regular file"),
    (b"\x7fELF\x02\x01\x01\x00\x00\x00", "is a binary file, not text"),
    (b"engine: caf\xe9\n", "is not UTF-8 text"),
    (b"home: /etc/passwd\n", "'/etc/passwd' is not a folder"),
    (b"home: " + b"[" * 100_000 + b"]" * 100_000 + b"\n", "is nested more than 64 levels deep"),
    (BOMB.encode(), "expands to more than 500000 YAML nodes"),
    (b"prompt: " + b"1" * 5000 + b"\n", "holds a value cuenv cannot read"),
    (b"trusted_env_vars: ['*']\n", "is not a variable name or PREFIX_*"),
])
def test_hostile_config_files(cli, tmp_path: Path, monkeypatch: pytest.MonkeyPatch, content: bytes | None,
                              message: str) -> None:
    path = Path("/dev/zero") if content is None else tmp_path / "config.yaml"
    if content is not None:
        path.write_bytes(content)
    monkeypatch.setenv("CUENV_CONFIG", str(path))
    monkeypatch.delenv("CUENV_HOME")
    code, _, err = cli("list")  # the message names the guard that stopped it (the time: benchmarks/bench_guards.py)
    _one_clean_error(code, err, message)


def test_a_broken_recipe_folder_hides_only_its_broken_files(cli, tmp_path: Path) -> None:
    folder = tmp_path / "shared recipes"
    folder.mkdir()
    (folder / "bomb.yaml").write_text(BOMB)
    (folder / "latin1.yaml").write_bytes(b"name: caf\xe9\n")
    (folder / "deep.yaml").write_text("[" * 100_000 + "]" * 100_000)
    (folder / "huge.yaml").write_text("# " + "x" * (2 * 1024 * 1024))
    good = yaml.safe_load((REPO / "recipes" / "cuda-12.1.yaml").read_text())
    good["name"] = "mine-12.1"
    (folder / "mine-12.1.yaml").write_text(yaml.safe_dump(good))
    code, out, err = cli("--recipes", str(folder), "recipes")
    assert code == 0 and "mine-12.1" in out and "cuda-12.1" in out, err
    for name in ("bomb", "latin1", "deep", "huge"):
        assert f"{name}.yaml" in err
    assert "internal error" not in err and "Traceback" not in err
    code, out, _ = cli("recipes", "lint", *map(str, sorted(folder.glob("*.yaml"))))
    assert code == 1 and "4 problems in 4 of 5 files" in out, out


def test_http_index_urls_fail_lint(cli, tmp_path: Path) -> None:
    data = yaml.safe_load((REPO / "recipes" / "cuda-12.1.yaml").read_text())
    data["install"]["venv"]["index_urls"] = ["http://download.pytorch.org/whl/cu121"]
    (tmp_path / "cuda-12.1.yaml").write_text(yaml.safe_dump(data))
    code, out, _ = cli("recipes", "lint", str(tmp_path / "cuda-12.1.yaml"))
    assert code == 1 and "index_urls[0]" in out and "http://" in out


@pytest.mark.parametrize("requirement", ["-e /tmp/evil", "--index-url https://evil.example/simple",
                                         "torch\n--extra-index-url https://evil.example", "-r /etc/passwd",
                                         "/tmp/evil-project"])
def test_hostile_requirements_never_reach_uv(cli, tmp_path: Path, requirement: str) -> None:
    data = yaml.safe_load((REPO / "recipes" / "cuda-12.1.yaml").read_text())
    data["install"]["venv"]["requirements"].append(requirement)
    data["name"] = "evil-12.1"  # a built-in's name would be the built-in (issue 31 §6)
    (tmp_path / "evil-12.1.yaml").write_text(yaml.safe_dump(data))
    code, _, err = cli("--recipes", str(tmp_path), "create", "evil-12.1", "--engine", "venv", "-n", "evil")
    _one_clean_error(code, err, "requirements[")
    assert not (tmp_path / "home").exists() or not list((tmp_path / "home").rglob("evil"))


def _lock_text(env: dict[str, str]) -> str:
    from cuenv.engines import Package, Solution
    from cuenv.knowledge.stack import Stack
    from cuenv.lock import model

    ch = "https://conda.example.org/nvidia"  # not reachable: a download would fail with another message
    pkg = Package(name="cuda-cudart", version="12.1.105", kind="conda", build="h0_0", channel=ch, subdir="linux-64",
                  url=f"{ch}/linux-64/cuda-cudart-12.1.105-h0_0.conda", sha256="a" * 64, md5="b" * 32)
    stack = Stack(label="demo", cuda="12.1", cudnn=None, sass=("8.0",), ptx=(), has_nvcc=False, os=("linux",))
    lock = model.build(recipe=model.LockRecipe("demo", env={"CUDA_MODULE_LOADING": "LAZY"}),
                       engine="rattler", stack=stack, solutions=[Solution("rattler", "linux-64", "3.11", (pkg,))])
    return model.dump(lock).replace("    CUDA_MODULE_LOADING: LAZY\n",
                                    "".join(f"    {k}: {yaml.safe_dump(v).splitlines()[0]}\n" for k, v in env.items()))


@pytest.mark.parametrize(("env", "message"), [
    ({"PROMPT_COMMAND": "touch /tmp/pwned"}, "PROMPT_COMMAND bash runs it as a command at every prompt"),
    ({"BASH_ENV": "/tmp/x"}, "BASH_ENV bash runs that file"),
    ({"LD_PRELOAD": "/tmp/evil.so"}, "LD_PRELOAD changes how the dynamic loader"),
    ({"PYTHONPATH": "/tmp"}, "PYTHONPATH changes how Python starts"),
    ({"CUDA_INJECTION64_PATH": "/tmp/x.so"}, "load a library into every CUDA program"),
    ({"bad name": "x"}, "is not a variable name"),
    ({"CUDA_MODULE_LOADING": "a\0b"}, "control character"),
    ({"CUDA_MODULE_LOADING": "x" * 100_000_0}, "characters long"),
])
def test_a_hostile_lock_is_refused_before_the_first_download(cli, tmp_path: Path, env: dict, message: str) -> None:
    lock = tmp_path / "team.lock"
    lock.write_text(_lock_text(env))
    for args in (("sync", str(lock), "-n", "evil"), ("create", "--from-lock", str(lock), "-n", "evil")):
        code, _, err = cli(*args)
        _one_clean_error(code, err, f"{lock}: recipe.env", message)
    assert not list(tmp_path.rglob("evil"))


@pytest.mark.parametrize("edit", [
    lambda t: t.replace("engine: rattler", "engine: " + "[" * 100_000 + "]" * 100_000),
    lambda t: t.replace("version: 1\n", "version: " + "1" * 5000 + "\n", 1),
    lambda t: t.replace("    - name: cuda-cudart\n", "    - name: \"cuda-cudart\\n-e /tmp/x\"\n"),
    lambda t: t.replace("      version: 12.1.105\n", "      version: \"12.1.105 --index-url=https://evil.example\"\n"),
])
def test_a_malformed_lock_is_one_line(cli, tmp_path: Path, edit: Callable[[str], str]) -> None:
    lock = tmp_path / "team.lock"
    lock.write_text(edit(_lock_text({"CUDA_MODULE_LOADING": "LAZY"})))
    code, _, err = cli("sync", str(lock), "-n", "x")
    _one_clean_error(code, err, str(lock))


@pytest.mark.parametrize(("args", "message"), [
    (("create", "cuda-12.1", "-n", "", "--dry-run"), "'' is not a valid environment name"),
    (("check", "cuda-12.1", "--cc", "8.6.7"), "'8.6.7' is not a valid compute capability"),
    (("check", "cuda-12.1", "--driver", "550.1.2.3.4"), "'550.1.2.3.4' is not a valid driver version"),
    (("check", "cuda-12.1", "--driver", "1" * 5000), "is not a valid driver version"),
    (("suggest", "--driver", "550." + "1" * 5000), "is not a valid driver version"),
    (("create", "cuda-12.1", "--python", "3." + "1" * 5000, "--dry-run"), "is not a valid Python version"),
    (("doctor", "--report", "/dev/zero"), "Report file /dev/zero is a device, not a regular file"),
    (("info", "1" * 5000), "'111111111111"),
    (("remove", "x" * 5000, "-y"), "x... is not a valid environment name"),
])
def test_bad_command_line_values(cli, args: tuple[str, ...], message: str) -> None:
    code, _, err = cli(*args)
    _one_clean_error(code, err, message)
    assert len(err) < 600, err  # a huge value is named, not echoed


def test_a_read_only_or_file_home_is_one_line(cli, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    blocker = tmp_path / "file"
    blocker.write_text("")
    monkeypatch.setenv("CUENV_HOME", str(blocker / "home"))  # a file where a folder must be: ENOTDIR
    (tmp_path / "p").mkdir()
    (tmp_path / "p" / ".cuenv").write_text("env: x\n")
    code, _, err = cli("allow", str(tmp_path / "p"))
    _one_clean_error(code, err, "Cannot record the decision")
