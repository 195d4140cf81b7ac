"""The lockfile tests' conda channel: tests/engines/channel.py's packages (NVIDIA's real libcudart and
ptxas, repackaged) plus an empty ``python`` and a linux-aarch64 subdir, so that one lock can hold two
platforms. Built once into the shared test cache, keyed by this file and channel.py."""

from __future__ import annotations

import asyncio
import hashlib
import os
import shutil
from pathlib import Path

from tests.engines import channel

EXTRA = (
    channel.Spec("python", "3.11.9", "linux-aarch64", build="h0_cuenv"),
    channel.Spec("cuda-cudart", "12.1.105", "linux-aarch64", depends=("cuda-version >=12.1,<12.2.0a0",),
                 files=(channel.Payload("lib/libcudart.so.12", text="aarch64 stand-in\n"),)),
)


def build(cache: Path = channel.DEFAULT_CACHE) -> Path:
    """The channel's folder under ``cache``, built there (under a file lock) when it is not yet."""
    key = hashlib.sha256(Path(channel.__file__).read_bytes() + Path(__file__).read_bytes()).hexdigest()[:12]
    final = cache / f"lock-channel-{key}"
    if (final / "noarch" / "repodata.json").is_file():
        return final
    with channel._file_lock(cache / ".lock-channel.lock"):
        if not (final / "noarch" / "repodata.json").is_file():
            tmp = cache / f".{final.name}.tmp{os.getpid()}"
            shutil.rmtree(tmp, ignore_errors=True)
            import rattler.index

            wheels = channel.ensure_wheels(cache)
            for spec in channel.PACKAGES + EXTRA:
                channel.build_archive(spec, wheels, tmp / spec.subdir)
            asyncio.run(rattler.index.index_fs(tmp, write_zst=False, write_shards=False))
            os.replace(tmp, final)
    return final
