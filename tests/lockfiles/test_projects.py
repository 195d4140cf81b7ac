"""uv and pixi projects (a ``pyproject.toml`` with ``[tool.uv.*]`` or ``[tool.pixi.*]``, a ``pixi.toml``):
read through their lock, as uv and pixi install them (issue 25 §4, §7).

`check`, `create -f`, `create --from-lock` and `suggest --for` read one through the same code path
(cuenv.lock.io.read_any), so they agree. Before: "no file cuenv reads", "YAML is broken", "rename it
to requirements*.txt".
"""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest

FIXTURES = Path(__file__).resolve().parent / "foreign" / "fixtures"
A100 = ("--driver", "580.65.06", "--gpu", "A100")

UV_PROJECT = """\
[project]
name = "vocalizr"
version = "0.1.0"
requires-python = "==3.12.*"
dependencies = ["gradio[mcp]", "kokoro", "pip", "pyfiglet", "soundfile"]

[tool.uv.sources]
torch = { index = "pytorch-cu130" }

[[tool.uv.index]]
name = "pytorch-cu130"
url = "https://download.pytorch.org/whl/cu130"
explicit = true
"""

PIXI_PROJECT = """\
[project]
name = "gausstwin"
version = "0.1.0"

[tool.pixi.workspace]
channels = ["conda-forge"]
platforms = ["linux-64"]

[tool.pixi.pypi-dependencies]
torch = { version = "==2.6.0", index = "https://download.pytorch.org/whl/cu124" }
"""


def test_a_uv_project_is_read_through_its_lock_by_every_command(cli, tmp_path: Path, monkeypatch) -> None:
    monkeypatch.chdir(tmp_path)
    (tmp_path / "pyproject.toml").write_text(UV_PROJECT)
    shutil.copy(FIXTURES / "vocalizr.uv.lock", tmp_path / "uv.lock")
    code, out, err = cli("check", "pyproject.toml", *A100)
    assert code == 0, err
    assert out.startswith("pyproject.toml: runs") and "Contract: CUDA 13.0, cuDNN 9.20" in out
    assert "note: read through uv.lock beside pyproject.toml (uv's lock of it)" in out
    code, out, err = cli("check", "pyproject.toml", *A100, "--json")
    data = json.loads(out)
    assert (data["kind"], data["locked"], data["cuda"], data["framework_version"]) == ("uv-lock", True, "13.0", "2.13.0")
    assert data["warnings"] == ["an install would stop here: uv.lock, line 409 (package docopt): docopt is locked "
                                "as an sdist: installing it would run its build code."]
    code, out, err = cli("create", "-f", "pyproject.toml", "-n", "voc", "--dry-run", "--target-driver", "580.65.06")
    # create stops where check said an install would (one code path): a plan without docopt is no success
    assert code == 2 and err.startswith("error: uv.lock, line 409 (package docopt): docopt is locked as an sdist")
    code, out, err = cli("suggest", "--for", "pyproject.toml", *A100)
    assert code == 0 and out.startswith("pyproject.toml: its own stack runs here"), err
    assert sorted(p.name for p in tmp_path.iterdir()) == ["pyproject.toml", "uv.lock"]  # nothing written beside


def test_a_pixi_project_is_read_through_its_lock_or_refused_with_the_command_that_writes_it(cli, tmp_path: Path,
                                                                                           monkeypatch) -> None:
    monkeypatch.chdir(tmp_path)
    (tmp_path / "pyproject.toml").write_text(PIXI_PROJECT)
    code, out, err = cli("check", "pyproject.toml")
    assert code == 2 and err.splitlines() == [
        "error: pyproject.toml is a pixi project with no pixi.lock beside it; cuenv reads a pixi project through its lock.",
        "hint: Write the lock with `pixi lock --manifest-path pyproject.toml`, then run this again."]
    code, out, err = cli("create", "-f", "pyproject.toml", "--dry-run")
    assert code == 2 and "pixi lock --manifest-path pyproject.toml" in err  # create says what check says
    shutil.copy(FIXTURES / "gausstwin-v6.pixi.lock", tmp_path / "pixi.lock")
    code, out, err = cli("check", "pyproject.toml", "--driver", "550.54.14", "--gpu", "A100", "--json")
    data = json.loads(out)
    assert (data["kind"], data["cuda"], data["framework_version"], data["environment"]) == (
        "pixi-lock", "12.4", "2.6.0", "default")
    assert "read through pixi.lock beside pyproject.toml (pixi's lock of it)" in data["notes"]
    (tmp_path / "pixi.toml").write_text(PIXI_PROJECT.replace("tool.pixi.", ""))
    code, out, err = cli("check", "pixi.toml", "--driver", "550.54.14", "--gpu", "A100")
    assert code == 0 and "Contract: CUDA 12.4" in out, err


def test_a_broken_project_file_is_one_clean_error(cli, tmp_path: Path) -> None:
    path = tmp_path / "pyproject.toml"
    path.write_text('[project]\nname = "x"\n[tool.uv.sources\n')
    code, out, err = cli("check", str(path))
    assert code == 2 and len(err.splitlines()) == 2 and "broken TOML" in err and "Traceback" not in err
    path.write_bytes(b'[project]\nname = "\xff\x00"\n')
    code, out, err = cli("check", str(path))
    assert code == 2 and len(err.splitlines()) == 2 and "Traceback" not in err


@pytest.mark.network
def test_a_uv_project_without_a_lock_is_locked_by_uv_in_a_private_copy(cli, tmp_path: Path, monkeypatch) -> None:
    monkeypatch.chdir(tmp_path)
    (tmp_path / "pyproject.toml").write_text('[project]\nname = "tiny"\nversion = "0.1.0"\nrequires-python = ">=3.10"\n'
                                             'dependencies = ["nvidia-cuda-runtime-cu12==12.1.105"]\n\n'
                                             "[tool.uv]\npackage = false\n")
    code, out, err = cli("check", "pyproject.toml", "--driver", "550.54.14", "--gpu", "A100")
    assert code == 0, err
    assert "Contract: CUDA 12.1" in out and "locked now by `uv lock` in a private copy" in out
    assert [p.name for p in tmp_path.iterdir()] == ["pyproject.toml"]


def test_a_project_locked_for_reading_runs_no_build_backend() -> None:
    """`uv lock` sees the project as a virtual one: no [build-system], tool.uv.package false, its sources
    and indexes kept; a project whose dependencies only a build can tell is refused before uv runs."""
    from cuenv.lock.foreign.model import ForeignLockError, Where, load_toml
    from cuenv.lock.foreign.uvlock import _virtual

    text = UV_PROJECT + '\n[build-system]\nrequires = ["evil-backend"]\nbuild-backend = "evil"\n\n' \
        '[tool.uv.workspace]\nmembers = ["pkgs/*"]\n\n[dependency-groups]\ndev = ["pytest>=8"]\n'
    doc = load_toml(_virtual(text, Where("pyproject.toml"), "h"), "x", hint="")
    assert "build-system" not in doc
    assert doc["tool"]["uv"]["package"] is False and "workspace" not in doc["tool"]["uv"]
    assert doc["tool"]["uv"]["index"][0]["url"] == "https://download.pytorch.org/whl/cu130"
    assert doc["tool"]["uv"]["sources"] == {"torch": {"index": "pytorch-cu130"}}
    assert doc["project"]["dependencies"][0] == "gradio[mcp]" and doc["dependency-groups"] == {"dev": ["pytest>=8"]}
    with pytest.raises(ForeignLockError, match="its dependencies are dynamic"):
        _virtual('[project]\nname = "x"\ndynamic = ["dependencies", "version"]\n', Where("pyproject.toml"), "h")


def test_a_project_for_a_python_not_installed_here_says_so(cli, tmp_path: Path) -> None:
    """uv finds a Python for requires-python before it resolves anything (network-free): the refusal says
    that, not uv's interpreter search (a pyenv shim of an uninstalled version answering 127)."""
    (tmp_path / "pyproject.toml").write_text('[project]\nname = "tiny"\nversion = "0.1.0"\nrequires-python = "==3.99.*"\n'
                                             'dependencies = ["six"]\n')
    code, out, err = cli("check", str(tmp_path / "pyproject.toml"))
    assert code == 2 and "Traceback" not in err
    assert "needs a Python that its requires-python (==3.99.*) allows and finds none here" in err
    assert f"`uv lock` in {tmp_path}" in err and "shim" not in err


POETRY_PROJECT = """\
[tool.poetry]
name = "tiny"
version = "0.1.0"
description = ""
authors = ["a <a@example.org>"]

[tool.poetry.dependencies]
python = "^3.10"
six = "^1.16"

[build-system]
requires = ["poetry-core"]
build-backend = "poetry.core.masonry.api"
"""


@pytest.mark.parametrize("argv", [("check", "pyproject.toml"), ("create", "-f", "pyproject.toml", "-n", "p", "--dry-run"),
                                  ("suggest", "--for", "pyproject.toml")])
def test_a_poetry_project_is_named_with_the_export_that_cuenv_reads(cli, tmp_path: Path, monkeypatch, argv) -> None:
    """Its dependencies are in [tool.poetry.dependencies], which uv does not read: not "broken YAML", not
    "not a file cuenv reads"."""
    monkeypatch.chdir(tmp_path)
    (tmp_path / "pyproject.toml").write_text(POETRY_PROJECT)
    code, _out, err = cli(*argv)
    assert code == 2 and "Traceback" not in err
    assert err.startswith("error: pyproject.toml is a Poetry project") and "YAML" not in err
    assert "`poetry export -f requirements.txt --output requirements.txt`" in err


@pytest.mark.slow
@pytest.mark.network
def test_the_poetry_hint_runs_as_written(cli, tmp_path: Path, monkeypatch) -> None:
    """Poetry and its export plugin from PyPI; the hint's command in the project's folder writes the
    requirements file that `cuenv check` then reads."""
    import os
    import subprocess
    import sys

    from uv import find_uv_bin

    tools = tmp_path / "poetry-venv"
    env = {**os.environ, "UV_CACHE_DIR": str(tmp_path / "uv-cache")}  # the suite's HOME; proxies and CA bundles kept
    subprocess.run([find_uv_bin(), "venv", "-q", str(tools), "--python", sys.executable], check=True, env=env)
    subprocess.run([find_uv_bin(), "pip", "install", "-q", "--python", str(tools / "bin" / "python"), "poetry",
                    "poetry-plugin-export"], check=True, env=env)
    project = tmp_path / "project"
    project.mkdir()
    (project / "pyproject.toml").write_text(POETRY_PROJECT)
    monkeypatch.chdir(project)
    code, _out, err = cli("check", "pyproject.toml")
    export, then = err.split("hint: ", 1)[1].split("`")[1::2]
    run_env = {**env, "PATH": f"{tools / 'bin'}{os.pathsep}{env.get('PATH', '/usr/bin:/bin')}",
               "POETRY_CACHE_DIR": str(tmp_path / "pc")}
    subprocess.run(["poetry", "lock"], cwd=project, check=True, env=run_env, capture_output=True)
    subprocess.run(export, shell=True, cwd=project, check=True, env=run_env)
    assert "six==" in (project / "requirements.txt").read_text()
    code, out, err = cli(*then.split()[1:])
    assert code == 0, err


def test_a_virtual_workspace_lock_names_the_export_that_picks_a_member(cli, tmp_path: Path, monkeypatch) -> None:
    """A uv.lock whose workspace root is no package (a virtual root, members under envs/): which member is
    installed is the user's choice; the hint's `uv export`, run as written in the project, writes the
    pylock.toml that `cuenv check` reads."""
    import os
    import subprocess

    from uv import find_uv_bin

    project = tmp_path / "ws"
    (project / "pyproject.toml").parent.mkdir()
    (project / "pyproject.toml").write_text('[tool.uv.workspace]\nmembers = ["envs/*"]\n')
    for member in ("a", "b"):
        (project / "envs" / member).mkdir(parents=True)
        (project / "envs" / member / "pyproject.toml").write_text(
            f'[project]\nname = "{member}"\nversion = "0.1"\nrequires-python = ">=3.10"\ndependencies = []\n')
    env = {**os.environ, "UV_CACHE_DIR": str(tmp_path / "uv-cache")}
    subprocess.run([find_uv_bin(), "lock", "--offline", "-q"], cwd=project, check=True, env=env)
    shared = tmp_path / "shared"
    shared.mkdir()
    (shared / "uv.lock").write_bytes((project / "uv.lock").read_bytes())
    code, _out, err = cli("check", str(shared / "uv.lock"))
    assert code == 2 and "its workspace root is not a package, and it holds 2 members (a, b)" in err
    command = err.split("hint: ", 1)[1].split("`")[1]
    subprocess.run([find_uv_bin(), *command.split()[1:]], cwd=project, check=True, env=env)
    monkeypatch.chdir(project)
    code, out, err = cli("check", "pylock.toml")
    assert code == 0, err


def test_a_project_whose_sources_are_local_is_refused_and_its_hint_runs(cli, tmp_path: Path, monkeypatch) -> None:
    """held-out-11 (openpi): `openpi-client = { workspace = true }` in tool.uv.sources made uv, locking the
    file's private copy, say the member "references a workspace ... not a member", of the copy. cuenv now
    says why the copy cannot lock it; the hint's `uv lock`, run in the project, writes the lock it reads."""
    import os
    import subprocess

    from uv import find_uv_bin

    project = tmp_path / "proj"
    (project / "packages" / "client").mkdir(parents=True)
    (project / "packages" / "client" / "pyproject.toml").write_text(
        '[project]\nname = "client"\nversion = "0.1"\nrequires-python = ">=3.10"\ndependencies = []\n'
        '[build-system]\nrequires = ["hatchling"]\nbuild-backend = "hatchling.build"\n')
    (project / "pyproject.toml").write_text(
        '[project]\nname = "proj"\nversion = "0.1"\nrequires-python = ">=3.10"\ndependencies = ["client"]\n\n'
        '[tool.uv]\npackage = false\n\n[tool.uv.sources]\nclient = { workspace = true }\n\n'
        '[tool.uv.workspace]\nmembers = ["packages/*"]\n')
    code, _out, err = cli("check", str(project / "pyproject.toml"))
    assert code == 2 and "client comes from a member of its workspace (tool.uv.sources)" in err, err
    assert f"`uv lock` in {project}" in err
    env = {**os.environ, "UV_CACHE_DIR": str(tmp_path / "uv-cache")}
    subprocess.run([find_uv_bin(), "lock", "--offline", "-q"], cwd=project, check=True, env=env)  # the hint
    code, out, err = cli("check", str(project / "pyproject.toml"))
    assert code == 0 and "a CPU-only stack" in out, err
    (project / "pyproject.toml").write_text(  # a path source: the same, named
        '[project]\nname = "proj"\nversion = "0.1"\ndependencies = ["client"]\n\n[tool.uv.sources]\n'
        'client = { path = "packages/client" }\n')
    (project / "uv.lock").unlink()
    code, _out, err = cli("check", str(project / "pyproject.toml"))
    assert code == 2 and "client comes from the local path packages/client (tool.uv.sources)" in err, err
