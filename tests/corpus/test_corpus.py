"""The corpus: 200+ real project files, unmodified, from public ML/CUDA repositories (issue 25 §6), each read
as a user would (`cuenv check FILE --json`, in-process, network-free) and compared with the reading its content
calls for (MANIFEST.yaml). Every file must be read right or refused for a true reason; the files the pixi/uv/
pylock/pyproject readers own are expected to fail until those land (xfail, with the reason).

The totals of :func:`tally` are published in docs/guides/bring-your-project.md.
"""

from __future__ import annotations

import hashlib
import json
import os
from collections import Counter
from dataclasses import dataclass
from functools import cache
from pathlib import Path
from typing import Any

import pytest
import yaml

from cuenv.knowledge import compat

HERE = Path(__file__).parent
FILES = HERE / "files"
CATEGORIES = ("read right", "refused true", "refused untrue", "silently wrong")


@cache
def manifest() -> dict[str, Any]:
    return yaml.safe_load((HERE / "MANIFEST.yaml").read_text(encoding="utf-8"))


def entries() -> list[dict[str, Any]]:
    return manifest()["files"]


@dataclass(frozen=True)
class Outcome:
    verdict: str  # runs | does-not-run | unknown | refused
    cuda: str | None
    message: str


def read(entry: dict[str, Any], *, offline: bool = True) -> Outcome:
    """`cuenv check FILE --json` on the manifest's machine, through cuenv's own entry point (no subprocess);
    ``offline=False``: with the network, as uv resolves a requirements file's set (the ``network`` entries)."""
    import contextlib
    import io

    from cuenv.cli.main import main

    m = manifest()["machine"]
    out, err = io.StringIO(), io.StringIO()
    argv = ["check", str(FILES / entry["file"]), "--json", "--driver", m["driver"], "--cc", m["cc"], "--os", m["os"]]
    # network-free: a project without a lock is not locked online, a requirements file not resolved online; and
    # with a cache of its own, which no online test fills, so that what uv answers offline never depends on which
    # tests ran first (held-out-13: `tensorflow >= 1.11.0` resolved from pages another test had cached)
    environ = dict(os.environ, UV_OFFLINE="1", CUENV_CACHE_DIR=_offline_cache()) if offline else \
        dict(os.environ, UV_EXCLUDE_NEWER=manifest()["online_as_of"])  # PyPI as it was when the readings were decided
    with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
        code = main(argv, environ=environ)
    if code == 2:
        return Outcome("refused", None, (err.getvalue() + out.getvalue()).strip())
    if not out.getvalue().strip():  # say what happened instead of a JSON error
        raise AssertionError(f"{entry['file']}: exit {code} and no JSON; stderr: {err.getvalue()[:800]}")
    data = json.loads(out.getvalue())
    codes = {f["code"] for f in data["findings"]}
    cuda = data["cuda"] if "cuda" in data else data.get("file", {}).get("cuda")
    # cuenv's own verdict (an error found beats a build it cannot confirm); the codes where a reply has none
    verdict = data.get("verdict") or ("unknown" if codes & compat.UNKNOWN_CODES else ("runs" if data["ok"] else "does-not-run"))
    return Outcome(verdict, cuda, ", ".join(sorted(codes)))


@cache
def _offline_cache() -> str:
    """One empty cache folder for the network-free readings of this process (removed at exit)."""
    import atexit
    import shutil
    import tempfile

    folder = tempfile.mkdtemp(prefix="cuenv-corpus-offline-")
    atexit.register(shutil.rmtree, folder, ignore_errors=True)
    return folder


def _same_cuda(expected: str | None, got: str | None) -> bool:
    if expected is None or got is None:
        return expected == got
    if expected.endswith(".x"):  # a major only: any minor of it
        return got.split(".")[0] == expected[:-2]
    return got == expected


def classify(entry: dict[str, Any], got: Outcome) -> str:
    """One of CATEGORIES: how cuenv's reading compares with the expected one."""
    expect = entry["expect"]
    if got.verdict == "refused":
        says = entry.get("refusal_says") or ("--cuda" if expect == "unknown" else None)
        true = expect in ("refused", "unknown") or entry.get("refusal_ok")
        return "refused true" if true and (says is None or says in got.message) else "refused untrue"
    if expect == "refused":
        return "silently wrong"
    if got.verdict == "unknown" and expect != "unknown" and entry.get("unknown_ok"):
        return "refused true"  # no verdict, for a true reason, with the step that answers it
    if got.verdict == expect and (expect == "unknown" or _same_cuda(entry["cuda"], got.cuda)):
        return "read right"
    return "silently wrong"


def tally() -> Counter[str]:
    """The totals published in the guide: each file's category."""
    return Counter(classify(e, read(e)) for e in entries())


def test_every_file_is_listed_unmodified_with_its_source():
    rows = entries()
    on_disk = {str(p.relative_to(FILES)) for p in FILES.rglob("*") if p.is_file()}
    assert {r["file"] for r in rows} == on_disk and len(rows) >= 100
    for r in rows:
        assert r["repository"].count("/") == 1 and len(r["commit"]) == 40
        assert r["file"] == r["repository"].replace("/", "__") + "/" + r["path"]
        assert r["expect"] in ("runs", "does-not-run", "unknown", "refused") and r["why"]
        assert hashlib.sha256((FILES / r["file"]).read_bytes()).hexdigest() == r["sha256"], r["file"]
        assert (FILES / r["file"]).stat().st_size < 200_000


def test_the_corpus_covers_every_kind():
    kinds = Counter(r["kind"] for r in entries())
    assert {"environment-yml", "requirements", "conda-lock", "pixi-lock", "explicit", "pyproject", "pylock"} <= set(kinds)
    assert sum(1 for r in entries() if r["kind"] == "environment-yml" and "pip:" in (FILES / r["file"]).read_text()) >= 10


def _param(entry: dict[str, Any]) -> Any:
    # a reading still wrong is kept visible: the test expects its failure, strictly, so a fix must update the manifest
    marks = [pytest.mark.xfail(strict=True, reason=entry["known_wrong"])] if entry.get("known_wrong") else []
    return pytest.param(entry, id=entry["file"], marks=marks)


@pytest.mark.parametrize("entry", [_param(e) for e in entries()])
def test_each_file_is_read_right_or_refused_for_a_true_reason(entry):
    got = read(entry)
    category = classify(entry, got)
    assert category in ("read right", "refused true"), (
        f"{category}: expected {entry['expect']} (CUDA {entry['cuda']}: {entry['why']}); "
        f"got {got.verdict} (CUDA {got.cuda}) {got.message[:400]}")


@pytest.mark.network
@pytest.mark.parametrize("entry", [pytest.param(e, id=e["file"]) for e in entries() if e.get("network")])
def test_a_file_resolved_online_is_read_right_or_refused_for_a_true_reason(entry):
    """The requirements files whose set only a resolver knows, read with PyPI reachable (`network` says what
    uv answers for each)."""
    got = read(entry, offline=False)
    category = classify(entry, got)
    assert category in ("read right", "refused true"), (
        f"{category} online: expected {entry['expect']} (CUDA {entry['cuda']}: {entry['network']}); "
        f"got {got.verdict} (CUDA {got.cuda}) {got.message[:400]}")


def test_the_classification_can_tell_wrong_from_right():
    entry = {"expect": "runs", "cuda": "12.8", "why": "x"}
    assert classify(entry, Outcome("runs", "12.8", "")) == "read right"
    assert classify(entry, Outcome("runs", "12.4", "")) == "silently wrong"
    assert classify(entry, Outcome("refused", None, "")) == "refused untrue"
    assert classify({"expect": "unknown", "cuda": None}, Outcome("runs", None, "")) == "silently wrong"
    assert classify({"expect": "unknown", "cuda": None}, Outcome("refused", None, "pass --cuda X.Y")) == "refused true"
    assert classify({"expect": "unknown", "cuda": None}, Outcome("refused", None, "not a file cuenv reads")) == \
        "refused untrue"
    assert classify({"expect": "runs", "cuda": "11.x"}, Outcome("runs", "11.8", "")) == "read right"
    assert classify({"expect": "runs", "cuda": "11.0"}, Outcome("unknown", "11.0", "")) == "silently wrong"
    assert classify({"expect": "runs", "cuda": "11.0", "unknown_ok": "x"}, Outcome("unknown", "11.0", "")) == "refused true"


def tallies() -> dict[str, Counter[str]]:
    """The totals per batch (the first round's files, and each held-out batch added since) and overall."""
    out: dict[str, Counter[str]] = {}
    for e in entries():
        category = classify(e, read(e))
        for batch in ("all", e.get("batch", "first")):
            out.setdefault(batch, Counter())[category] += 1
    return out


if __name__ == "__main__":  # the totals for the guide: python -m tests.corpus.test_corpus
    import tempfile

    from tests import sealing

    with tempfile.TemporaryDirectory(prefix="cuenv-corpus-") as scratch:  # as sealed as the suite: no file of yours
        put, drop = sealing.sealed_environ(Path(scratch), sealing.TEST_CACHE, os.environ)
        for name in (*drop, *sealing.CUENV_OVERRIDES):
            os.environ.pop(name, None)
        os.environ.update(put, CUENV_HOME=str(Path(scratch) / "home"))
        for batch, counts in tallies().items():
            print(f"{batch}: " + ", ".join(f"{name}: {counts[name]}" for name in CATEGORIES))
