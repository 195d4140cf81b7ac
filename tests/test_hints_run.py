"""Every hint works: each error below is provoked as a user would, and every `cuenv ...` command its hint
names is run as written (in-process, no environment built). A hinted command may find problems (exit 1);
it must never be bad usage (exit 2) or end in an error line."""

from __future__ import annotations

import shlex
import shutil
import subprocess
from pathlib import Path

import pytest


def hinted(err: str) -> list[str]:
    """The `cuenv ...` commands the hint line names, in order."""
    [hint] = [line for line in err.splitlines() if line.startswith("hint: ")]
    return [part for part in hint.split("`")[1::2] if part.startswith("cuenv ")]


def run_as_written(cli, command: str) -> tuple[int, str, str]:
    code, out, err = cli(*shlex.split(command)[1:])
    assert code in (0, 1) and not any(line.startswith("error:") for line in err.splitlines()), (command, out, err)
    return code, out, err


@pytest.mark.parametrize(("argv", "commands"), [
    (["check", "cuda-12.1", "--all"], ["cuenv check cuda-12.1", "cuenv check --all"]),
    (["check"], ["cuenv check torch-cu121", "cuenv check --all"]),
    (["completion"], ["cuenv completion bash", "cuenv completion zsh", "cuenv completion fish"]),
    (["shell-env", "bash", "use", "system:99.9"], ["cuenv list --system"]),  # `cuenv use` through the hook
    (["info", "nosuch"], ["cuenv list", "cuenv recipes", "cuenv suggest"]),
    (["add", "six"], ["cuenv recipes", "cuenv suggest"]),
    (["run"], ["cuenv recipes", "cuenv suggest"]),
    (["create"], ["cuenv recipes"]),
    (["adopt"], ["cuenv adopt --scan ."]),
    (["recipes", "show", "torch-cu121@"], ["cuenv recipes"]),
])
def test_the_commands_a_hint_names_run_as_written(cli, work: Path, monkeypatch: pytest.MonkeyPatch, argv: list[str],
                                                 commands: list[str]) -> None:
    monkeypatch.delenv("SHELL", raising=False)  # `cuenv completion` cannot tell the shell
    code, _, err = cli(*argv)
    assert code == 2 and err.startswith("error: "), err
    assert hinted(err) == commands, err
    for command in commands:
        run_as_written(cli, command)


def test_adopting_a_folder_that_is_no_environment_names_the_scan_of_it(cli, work: Path) -> None:
    (work / "proj" / "sub").mkdir(parents=True)
    code, _, err = cli("adopt", "proj")
    assert code == 2
    [command] = hinted(err)
    assert command == f"cuenv adopt --scan {work / 'proj'}"
    _, out, _ = run_as_written(cli, command)
    assert "No conda environments or virtualenvs found" in out


def test_a_broken_user_recipe_names_the_lint_that_lists_its_problems(cli, tmp_path: Path) -> None:
    folder = tmp_path / "recipes"
    folder.mkdir()
    (folder / "mine.yaml").write_text("name: mine\ncuda: twelve\n", encoding="utf-8")
    code, _, err = cli("--recipes", str(folder), "create", "mine", "--dry-run")
    assert code == 2
    [command] = hinted(err)
    code, out, err = cli("--recipes", str(folder), *shlex.split(command)[1:])
    assert code == 1 and "mine.yaml" in out + err and "cuda" in out + err  # the lint lists the problem, as it says


def test_a_missing_linker_cache_names_the_ldconfig_that_writes_one(cli, work: Path) -> None:
    ldconfig = shutil.which("ldconfig", path="/sbin:/usr/sbin:/usr/bin")
    code, _, err = cli("doctor", "--ld-cache", "ld.cache", "--no-framework")
    assert code == 2 and err.startswith("error: No linker cache file 'ld.cache'."), err
    [command] = [part for part in err.split("`")[1::2] if "ldconfig" in part]
    assert command == "/sbin/ldconfig -X -C ld.cache"
    if ldconfig is None or not Path("/sbin/ldconfig").exists():
        pytest.skip("no ldconfig here")
    subprocess.run(shlex.split(command), check=True, capture_output=True, timeout=60)
    code, _, err = cli("doctor", "--ld-cache", "ld.cache", "--no-framework")
    assert code in (0, 1) and "No linker cache file" not in err


def test_a_file_here_given_for_an_environment_names_the_check_that_reads_it(cli, work: Path) -> None:
    (work / "requirements.txt").write_text("numpy==2.1.0\n", encoding="utf-8")
    code, _, err = cli("info", "requirements.txt")
    assert code == 2 and err.startswith("error: No environment named 'requirements.txt'."), err
    [command] = hinted(err)
    assert command == "cuenv check requirements.txt"
    _, out, _ = run_as_written(cli, command)
    assert out.startswith("requirements.txt: runs")
