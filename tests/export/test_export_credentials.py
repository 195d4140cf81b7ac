"""Exports name an index without its credentials (issue 31 §5): with a mirror that carries a user and
token, the requirements.txt inside Dockerfile and Apptainer exports (and `--format requirements`)
names the mirror bare and says how to pass the credentials at build time; nothing cuenv prints or
writes holds the token."""

from __future__ import annotations

from pathlib import Path

from tests.export.exportkit import cuenv

TOKEN = "tok3n-s3cret"
MIRROR = f"https://alice:{TOKEN}@mirror.example.org/simple"


def test_an_export_never_writes_a_mirror_token(venv_env: str, tmp_path: Path) -> None:
    for fmt in ("dockerfile", "apptainer", "requirements"):
        _export_without_token(venv_env, tmp_path / fmt, fmt)


def _export_without_token(venv_env: str, out: Path, fmt: str) -> None:
    done = cuenv("--mirror", f"pypi={MIRROR}", "export", venv_env, "--format", fmt, "-o", str(out))
    assert TOKEN not in done.stdout + done.stderr
    files = [p for p in out.rglob("*") if p.is_file()]
    assert files
    for path in files:
        assert TOKEN.encode() not in path.read_bytes(), path
    listed = next(p for p in files if p.name == "requirements.txt").read_text()
    assert "--index-url https://mirror.example.org/simple" in listed
    assert "needs credentials" in listed and "--secret id=netrc" in listed
    shown = cuenv("--mirror", f"pypi={MIRROR}", "export", venv_env, "--format", "requirements")
    assert TOKEN not in shown.stdout and "mirror.example.org" in shown.stdout
