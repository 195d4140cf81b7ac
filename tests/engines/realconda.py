"""The real conda the conda-engine tests run (issue 28): conda's own source, classic solver, from PyPI.

``.ci/run`` installs it once per machine with the vendored ``install.sh`` and exports
``CUENV_TEST_CONDA`` (its ``bin/conda``). When that variable is unset (a developer's plain
``pytest``), :func:`conda_exe` installs it the same way into the repository's ``.test-cache/``,
once per version of the vendored wheel (about 20 s, PyPI only), safe under xdist.
"""

from __future__ import annotations

import hashlib
import os
import shutil
import subprocess
from pathlib import Path

from tests.engines.channel import DEFAULT_CACHE, REPO, _file_lock

# where the vendored conda lies: beside a CI clone (../shared), or beside a worktree's parent
VENDOR_CANDIDATES = (REPO.parent / "shared" / "vendor" / "conda", REPO.parent.parent / "shared" / "vendor" / "conda")


def vendor_dir() -> Path | None:
    named = os.environ.get("CUENV_TEST_CONDA_VENDOR")
    for folder in ([Path(named)] if named else []) + list(VENDOR_CANDIDATES):
        if (folder / "install.sh").is_file():
            return folder
    return None


def conda_exe(cache: Path = DEFAULT_CACHE) -> Path:
    """The conda executable to test against; raises LookupError when there is none to install."""
    named = os.environ.get("CUENV_TEST_CONDA")
    if named:
        exe = Path(named)
        if not os.access(exe, os.X_OK):
            raise FileNotFoundError(f"CUENV_TEST_CONDA={named} is not an executable")
        return exe
    vendor = vendor_dir()
    if vendor is None:
        raise LookupError("no vendored conda (../shared/vendor/conda/install.sh); set CUENV_TEST_CONDA to a conda")
    key = hashlib.sha256(b"".join(p.name.encode() + p.read_bytes()[:1 << 16]
                                  for p in sorted(vendor.iterdir()) if p.is_file())).hexdigest()[:12]
    prefix = cache / f"conda-{key}"
    exe = prefix / "bin" / "conda"
    if os.access(exe, os.X_OK):
        return exe
    with _file_lock(cache / ".conda-install.lock"):
        if not os.access(exe, os.X_OK):
            tmp = cache / f".conda-{key}.tmp{os.getpid()}"
            shutil.rmtree(tmp, ignore_errors=True)
            shutil.rmtree(prefix, ignore_errors=True)
            # install.sh writes the prefix's own path into its wrapper and venv: install in place
            subprocess.run([str(vendor / "install.sh"), str(prefix)], check=True, stdout=subprocess.DEVNULL,
                           stderr=subprocess.PIPE)
    return exe
