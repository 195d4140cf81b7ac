"""Names and paths from shared files (issue 31 §1): checked once at the reader, and every delete or
write of a path made from them goes through cuenv.trust.paths, which refuses anything outside its folder.

The case that was seen: a cuenv.lock whose package ``filename`` walked out with ``../..`` made
`cuenv sync LOCK -n NAME` and `cuenv create NAME --from-lock LOCK` delete that file as a "stale cache
entry" (the failed download afterwards hid it), and `cuenv lock` wrote the name into a new lock.
"""

from __future__ import annotations

import os
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from cuenv.trust import Untrusted, paths

FAST = settings(max_examples=200, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
CH = "https://conda.example.org/nvidia"  # not reachable: a download would fail with another message

# The class: a name that leaves its folder, names a folder, hides, or is an option, in every spelling.
_PIECES = st.sampled_from(["..", ".", "", "a", "x.conda", "~", "%2e%2e", "\\", "\0", "\n", "\x1b[2J", "-rf", " "])
HOSTILE_NAMES = st.one_of(
    st.lists(_PIECES, min_size=2, max_size=6).map("/".join),
    st.lists(_PIECES, min_size=1, max_size=6).map(lambda parts: "/" + "/".join(parts)),
    st.builds(lambda a, b: a + b, st.sampled_from([".", "-", "..", "/", "./", "../"]), st.text(max_size=20)),
    st.builds(lambda a, c, b: a + c + b, st.text(max_size=10), st.sampled_from(["/", "\\", "\0", "\n", "\x7f", "\u2028"]),
              st.text(max_size=10)),
    st.just("x" * 300),
)


def _lock_text(filename: str, *, engine: str = "rattler", url: str | None = None) -> str:
    """A valid lock, then the package's file name (and URL) written in as a hostile hand would."""
    from cuenv.engines import Package, Solution
    from cuenv.knowledge.stack import Stack
    from cuenv.lock import model

    good_url = f"{CH}/linux-64/cuda-cudart-12.1.105-h0_0.conda"
    pkg = Package(name="cuda-cudart", version="12.1.105", kind="conda", build="h0_0", channel=CH, subdir="linux-64",
                  url=good_url, filename="cuda-cudart-12.1.105-h0_0.conda", sha256="a" * 64, md5="b" * 32)
    stack = Stack(label="demo", cuda="12.1", cudnn=None, sass=("8.0",), ptx=(), has_nvcc=False, os=("linux",))
    lock = model.build(recipe=model.LockRecipe("demo"), engine=engine, stack=stack,
                       solutions=[Solution(engine, "linux-64", "3.11", (pkg,))])
    text = model.dump(lock)
    assert "filename: cuda-cudart-12.1.105-h0_0.conda\n" in text
    import json

    text = text.replace("filename: cuda-cudart-12.1.105-h0_0.conda", f"filename: {json.dumps(filename)}")
    if url is not None:
        text = text.replace(f"url: {good_url}", f"url: {json.dumps(url)}")
    return text


@given(name=HOSTILE_NAMES)
@settings(max_examples=100, deadline=None)
def test_no_hostile_name_passes_the_reader(name: str) -> None:
    from cuenv.lock.model import LockError, parse

    if paths.FILE_NAME.fullmatch(name) and len(name) <= 255:
        return  # the strategy sometimes draws a plain name ("a"): nothing to refuse
    assert paths.file_name_problem(name) is not None
    with pytest.raises(LockError) as info:
        parse(_lock_text(name), file="team.lock")
    assert "\n" not in info.value.message and "\x1b" not in info.value.message


@given(name=st.text(min_size=1, max_size=40))
@FAST
def test_a_name_that_passes_is_one_component_of_its_folder(tmp_path: Path, name: str) -> None:
    if paths.file_name_problem(name) is None:
        assert paths.inside(tmp_path, name) == Path(os.path.realpath(tmp_path)) / name


@given(rel=st.one_of(HOSTILE_NAMES, st.text(max_size=40)))
@FAST
def test_inside_never_leaves_its_folder(tmp_path: Path, rel: str) -> None:
    root = tmp_path / "cache"
    (root / "sub").mkdir(parents=True, exist_ok=True)
    if not (root / "out").is_symlink():
        (root / "out").symlink_to(tmp_path)  # a link inside that points out
    try:
        target = paths.inside(root, rel)
    except paths.Outside as exc:
        assert "\n" not in exc.message
        return
    real_root = os.path.realpath(root)
    assert os.path.realpath(target.parent).startswith(real_root)
    assert target.name not in ("", ".", "..")


def test_inside_refuses_a_folder_link_that_points_out(tmp_path: Path) -> None:
    root = tmp_path / "cache"
    root.mkdir()
    (root / "out").symlink_to(tmp_path)
    canary = tmp_path / "canary"
    canary.write_text("precious")
    with pytest.raises(paths.Outside, match="lands outside"):
        paths.unlink(root, "out/canary")
    with pytest.raises(paths.Outside, match="climbs out"):
        paths.unlink(root, "../canary")
    with pytest.raises(paths.Outside, match="not a name inside"):
        paths.unlink(root, str(canary))
    assert canary.read_text() == "precious"
    (root / "link").symlink_to(canary)  # a link as the last component: the link goes, never its target
    paths.unlink(root, "link")
    assert not (root / "link").is_symlink() and canary.read_text() == "precious"


def test_open_new_never_writes_through_a_link(tmp_path: Path) -> None:
    canary = tmp_path / "canary"
    canary.write_text("precious")
    (tmp_path / "cache").mkdir()
    (tmp_path / "cache" / "x.part").symlink_to(canary)
    with pytest.raises(OSError):
        paths.open_new(tmp_path / "cache", "x.part")
    assert canary.read_text() == "precious"


@pytest.mark.parametrize("name", ["../../../canary", "/etc/passwd", "..", ".bashrc", "a/b.conda", "a\\b.conda",
                                  "-rf.conda", "x\x1b]0;pwned\x07.conda", "x" * 300])
def test_the_lock_reader_refuses_a_hostile_file_name(name: str) -> None:
    from cuenv.lock.model import LockError, parse

    with pytest.raises(LockError, match="filename") as info:
        parse(_lock_text(name), file="team.lock")
    assert "\n" not in info.value.message and "\x1b" not in info.value.message


def _one_line_refusal(code: int, err: str) -> None:
    assert code == 2, err
    assert err.startswith("error: ") and err.count("\n") <= 2, err
    assert "Traceback" not in err and "internal error" not in err


@pytest.mark.parametrize("route", [("sync", "LOCK", "-n", "evil"), ("create", "evil", "--from-lock", "LOCK")])
def test_a_lock_cannot_make_cuenv_delete_a_file_outside(cli, tmp_path: Path, route: tuple[str, ...]) -> None:
    canary = tmp_path / "canary"
    canary.write_text("precious")
    lock = tmp_path / "team.lock"
    lock.write_text(_lock_text("../" * 40 + str(canary).lstrip("/")))
    code, _, err = cli(*(str(lock) if a == "LOCK" else a for a in route))
    _one_line_refusal(code, err)
    assert "filename" in err and "Could not download" not in err
    assert canary.read_text() == "precious"


def test_the_fetch_refuses_a_hostile_name_that_skipped_the_reader(tmp_path: Path) -> None:
    """An environment built by an older cuenv holds the lock's names in its solution: `cuenv pack` and
    a re-install fetch from them without the lock reader."""
    from cuenv.engines import Package
    from cuenv.engines.fetch import verified_archive

    archives = tmp_path / "home" / "cache" / "archives"
    archives.mkdir(parents=True)
    canary = tmp_path / "canary"
    canary.write_text("precious")
    for name in ("../../../canary", str(canary), "..", "sub/../../../../canary"):
        pkg = Package(name="cuda-cudart", version="12.1.105", kind="conda", build="h0_0", channel=CH,
                      subdir="linux-64", url=f"{CH}/linux-64/x.conda", filename=name, sha256="a" * 64)
        with pytest.raises(Untrusted, match="file name"):
            verified_archive(pkg, archives)
    assert canary.read_text() == "precious"
    assert list(archives.iterdir()) == []


def test_lock_never_writes_a_name_its_reader_refuses() -> None:
    from cuenv.errors import UsageError

    with pytest.raises(UsageError, match="filename"):
        _lock_text_built("../../x.conda")


def _lock_text_built(filename: str) -> str:
    from cuenv.engines import Package, Solution
    from cuenv.knowledge.stack import Stack
    from cuenv.lock import model

    pkg = Package(name="cuda-cudart", version="12.1.105", kind="conda", build="h0_0", channel=CH, subdir="linux-64",
                  url=f"{CH}/linux-64/x.conda", filename=filename, sha256="a" * 64)
    stack = Stack(label="demo", cuda="12.1", cudnn=None, sass=(), ptx=(), has_nvcc=False, os=("linux",))
    return model.dump(model.build(recipe=model.LockRecipe("demo"), engine="rattler",
                                  stack=stack, solutions=[Solution("rattler", "linux-64", "3.11", (pkg,))]))


@given(name=st.one_of(HOSTILE_NAMES, st.text(max_size=30)))
@FAST
def test_a_foreign_lock_url_gives_only_plain_file_names(name: str) -> None:
    """conda-lock, pixi, pylock and uv.lock name artifacts by URL; its last segment becomes the cache name."""
    import urllib.parse

    from cuenv.lock.foreign.model import ForeignLockError, Where, url

    link = "https://files.example.org/packages/" + urllib.parse.quote(name, safe="/")
    try:
        _, filename = url(link, Where("uv.lock"), hint="h")
    except ForeignLockError as exc:
        assert "\n" not in exc.message
        return
    assert paths.file_name_problem(filename) is None


@pytest.mark.parametrize(("url", "message"), [
    (f"{CH}/linux-64/${{HOME}}.conda", "holds a template"),
    (f"{CH}/linux-64/$AWS_SECRET_ACCESS_KEY/x.conda", "holds a template"),
    ("https://user:token@conda.example.org/nvidia/linux-64/x.conda", "carries credentials"),
    (f"{CH}/linux-64/../../x.conda", "climbs out"),
    (f"{CH}/linux-64/%2e%2e/x.conda", "climbs out"),
    (f"{CH}/linux-64/x.conda?x=${{HOME}}", "holds a template"),
    (f"{CH}/linux-64/x.conda#frag", "fragment"),
])
def test_a_cuenv_lock_url_gets_the_checks_of_the_foreign_formats(url: str, message: str) -> None:
    from cuenv.lock.model import LockError, parse

    with pytest.raises(LockError, match=message) as info:
        parse(_lock_text("x.conda", url=url), file="team.lock")
    assert "token" not in info.value.message


@pytest.mark.parametrize(("source", "message"), [
    ("http://conda.example.org/nvidia", "uses http://"),
    ("https://u:secret@conda.example.org/nvidia", "carries credentials"),
    ("https://conda.example.org/${USER}", "holds a template"),
])
def test_a_cuenv_lock_source_gets_the_same_checks(source: str, message: str) -> None:
    from cuenv.lock.model import LockError, parse

    text = _lock_text("x.conda").replace(CH, source)
    with pytest.raises(LockError, match=message) as info:
        parse(text, file="team.lock")
    assert "secret" not in info.value.message


def test_plain_http_on_the_loopback_is_still_a_lock_source() -> None:
    from cuenv.lock.model import parse

    text = _lock_text("cuda-cudart-12.1.105-h0_0.conda").replace(CH, "http://127.0.0.1:8123/nvidia")
    assert parse(text, file="team.lock").channels == ("http://127.0.0.1:8123/nvidia",)


@given(before=st.text(max_size=15), name=st.text(max_size=10), after=st.text(max_size=15))
@FAST
def test_nothing_with_a_variable_reaches_a_tool_that_expands_it(before: str, name: str, after: str) -> None:
    """uv and pip fill ${NAME} in requirement files from the environment; conda in channels."""
    from cuenv.lock.model import url_problem
    from cuenv.trust import requirements

    text = f"{before}${{{name}}}{after}"
    assert requirements.requirement_problem(f"torch @ https://h.org/{text}.whl") is not None
    assert requirements.requirement_problem(f"torch @ https://h.org/{text}.whl", parse=False) is not None
    assert requirements.index_url_problem(f"https://h.org/{text}") is not None
    assert requirements.channel_problem(f"https://h.org/{text}") is not None
    assert requirements.conda_spec_problem(f"cuda{text}") is not None
    assert url_problem(f"https://h.org/{text}") is not None
    assert paths.download_url_problem(f"https://h.org/{text}") is not None


def test_a_recipe_requirement_with_a_variable_never_reaches_uv(cli, tmp_path: Path) -> None:
    import yaml

    repo = Path(__file__).resolve().parents[2]
    data = yaml.safe_load((repo / "recipes" / "cuda-12.1.yaml").read_text())
    data["install"]["venv"]["requirements"].append("evil @ https://127.0.0.1:9/${AWS_SECRET_ACCESS_KEY}/evil-1.0-py3-none-any.whl")
    data["name"] = "shared-cuda"  # a shared recipe of its own name (one named like a built-in is never used unasked)
    (tmp_path / "shared-cuda.yaml").write_text(yaml.safe_dump(data))
    code, _, err = cli("--recipes", str(tmp_path), "create", "shared-cuda", "--engine", "venv", "-n", "evil")
    _one_line_refusal(code, err)
    assert "expands nothing" in err or "unknown placeholder" in err, err


def test_lock_writes_an_index_without_its_credentials() -> None:
    from cuenv.engines import Package, Solution
    from cuenv.knowledge.stack import Stack
    from cuenv.lock import model

    index = "https://alice:tok3n@private.example.org/simple"
    pkg = Package(name="numpy", version="1.26.4", kind="pypi", index_url=index, sha256="a" * 64,
                  url="https://alice:tok3n@private.example.org/files/numpy-1.26.4-cp311-cp311-linux_x86_64.whl",
                  filename="numpy-1.26.4-cp311-cp311-linux_x86_64.whl")
    stack = Stack(label="demo", cuda=None, cudnn=None, sass=(), ptx=(), has_nvcc=False, os=("linux",))
    text = model.dump(model.build(recipe=model.LockRecipe("demo"), engine="venv",
                                  stack=stack, solutions=[Solution("venv", "linux-64", "3.11", (pkg,))]))
    assert "tok3n" not in text and "alice" not in text
    assert model.parse(text).indexes == ("https://private.example.org/simple",)
