"""No reading beside the project (issue 31 §3): a requirements file's `-r`/`-c` includes, and the
`pip:` list of an environment.yml, read only regular files inside the project's folder, with the size
limit, and a refusal never quotes what such a file holds. Seen: `-r /proc/self/environ` (or a link to
it) made `cuenv check` print the user's environment variables in its error."""

from __future__ import annotations

import os
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

SECRET = "AWS_SECRET_ACCESS_KEY=hunter2-very-secret"


@pytest.fixture
def project(tmp_path: Path) -> Path:
    outside = tmp_path / "outside"
    outside.mkdir()
    (outside / "secret.txt").write_text(SECRET + "\n")
    root = tmp_path / "project"
    root.mkdir()
    (root / "base.txt").write_text("numpy==1.26.4\n")
    return root


@pytest.mark.parametrize("include", [
    "-r ../outside/secret.txt", "-c ../outside/secret.txt", "-r ../../../../../../../../proc/self/environ",
    "-r /proc/self/environ", "-r link.txt", "-r linkdir/secret.txt", "-r sub/../../outside/secret.txt",
])
@pytest.mark.parametrize("kind", ["requirements.txt", "environment.yml"])
def test_an_include_outside_the_project_is_refused_unread(cli, project: Path, include: str, kind: str) -> None:
    (project / "link.txt").symlink_to(project.parent / "outside" / "secret.txt")
    (project / "linkdir").symlink_to(project.parent / "outside")
    (project / "sub").mkdir()
    if kind == "requirements.txt":
        (project / kind).write_text(f"-r base.txt\n{include}\n")
    else:
        (project / kind).write_text(f"name: x\ndependencies:\n  - python=3.11\n  - pip\n  - pip:\n    - {include}\n")
    for args in (("check", str(project / kind)), ("check", str(project / kind), "--json")):
        code, out, err = cli(*args)
        assert code == 2, (out, err)
        assert "hunter2" not in out + err and "PATH=" not in out + err
        assert "outside" in err or "absolute path" in err, err
        assert err.count("\n") <= 2 and "Traceback" not in err


def test_includes_inside_the_project_still_work(cli, project: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    (project / "requirements").mkdir()
    (project / "requirements" / "dev.txt").write_text("-r ../base.txt\n")
    monkeypatch.chdir(project)  # run from the project's root: the folder above the named file is the project's
    code, out, err = cli("check", "requirements/dev.txt", "--json")
    assert code == 0, err
    monkeypatch.chdir(project.parent / "outside")  # elsewhere: only the named file's own folder is
    code, _, err = cli("check", str(project / "requirements" / "dev.txt"))
    assert code == 2 and "outside the project's folder" in err


def test_an_include_that_is_a_fifo_is_refused_without_blocking(cli, project: Path) -> None:
    os.mkfifo(project / "pipe.txt")
    (project / "requirements.txt").write_text("-r pipe.txt\n")
    code, _, err = cli("check", str(project / "requirements.txt"))
    assert code == 2 and "is not a regular file" in err, err


def test_an_environment_yml_channel_that_is_a_file_is_refused(cli, project: Path) -> None:
    (project / "environment.yml").write_text(
        "name: x\nchannels:\n  - file:///proc/self/environ\ndependencies:\n  - python=3.11\n")
    code, out, err = cli("check", str(project / "environment.yml"))
    assert code == 2 and "is a file, not a channel folder" in err, err
    assert "PATH=" not in out + err


_PARTS = st.sampled_from(["..", ".", "base.txt", "sub", "link.txt", "linkdir", "secret.txt", "outside", "project", ""])


@given(parts=st.lists(_PARTS, min_size=1, max_size=6))
@settings(max_examples=80, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
def test_no_include_path_reads_outside_the_project(tmp_path_factory: pytest.TempPathFactory, parts: list[str]) -> None:
    from cuenv.errors import CuenvError
    from cuenv.recipes import pipreqs

    root = tmp_path_factory.mktemp("p")
    (root / "outside").mkdir()
    (root / "outside" / "secret.txt").write_text(SECRET + "\n")
    project = root / "project"
    (project / "sub").mkdir(parents=True)
    (project / "base.txt").write_text("numpy==1.26.4\n")
    (project / "link.txt").symlink_to(root / "outside" / "secret.txt")
    (project / "linkdir").symlink_to(root / "outside")
    (project / "requirements.txt").write_text(f"-r {'/'.join(parts)}\n")
    try:
        found = pipreqs.parse_file(project / "requirements.txt")
    except CuenvError as exc:
        assert "hunter2" not in exc.message + (exc.hint or "")
        return
    for file in found.files:
        assert os.path.realpath(file).startswith(str(project.resolve()) + os.sep)


def test_a_binary_requirements_file_is_named_once_and_an_include_by_its_line(cli, project: Path) -> None:
    (project / "requirements.txt").write_bytes(b"numpy\x00\x01\x02\n")
    code, _, err = cli("check", str(project / "requirements.txt"))
    assert code == 2 and err.splitlines()[0] == f"error: {project / 'requirements.txt'}: is a binary file, not text.", err
    (project / "blob.txt").write_bytes(b"\x00\x01")
    (project / "main.txt").write_text("-r blob.txt\n")
    code, _, err = cli("check", str(project / "main.txt"))
    assert code == 2 and err.splitlines()[0].startswith(f"error: {project / 'main.txt'}:1: "), err
    assert "blob.txt: is a binary file, not text." in err, err
