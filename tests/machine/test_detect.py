"""Detection in-process: overrides, the source chain through a fake nvidia-smi and /proc, the cache.

NVML and libcuda are left out here (monkeypatched SOURCES) so a host with a real driver gives the
same answers; test_fake_driver.py drives those two through the real pynvml and ctypes paths.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from cuenv.errors import UsageError
from cuenv.knowledge import matrix
from cuenv.machine import driver, overrides, probes
from cuenv.machine.model import Driver, Gpu, Machine
from tests.machine import fakedriver

FIXTURES = Path(__file__).with_name("fixtures")


@pytest.fixture
def no_libs(monkeypatch):
    monkeypatch.setattr(probes, "SOURCES", tuple(s for s in probes.SOURCES if s[0] not in ("nvml", "libcuda")))


def _root(tmp_path: Path, proc: str | None = None) -> Path:
    root = tmp_path / "root"
    (root / "proc/sys/kernel/random").mkdir(parents=True)
    (root / "proc/sys/kernel/random/boot_id").write_text("boot-1\n")
    if proc:
        (root / "proc/driver/nvidia").mkdir(parents=True)
        (root / "proc/driver/nvidia/version").write_text((FIXTURES / proc).read_text())
    return root


# --- overrides ---------------------------------------------------------------------------


def test_cuenv_driver_derives_max_cuda():
    o = overrides.read_overrides({"CUENV_DRIVER": "535.104.05"}, "linux")
    assert o.driver == Driver("535.104.05", "12.2", "override") and o.driver_set and o.gpus is None


@pytest.mark.parametrize("value", ["abc", "535.x", "-1"])
def test_bad_cuenv_driver_is_usage_error(value):
    with pytest.raises(UsageError, match="CUENV_DRIVER") as exc:
        overrides.read_overrides({"CUENV_DRIVER": value})
    assert exc.value.hint


def test_cuenv_driver_none_means_no_driver():
    o = overrides.read_overrides({"CUENV_DRIVER": "none"})
    assert o.driver_set and o.driver is None


def test_conda_override_cuda_as_conda_reads_it():
    assert overrides.read_overrides({"CONDA_OVERRIDE_CUDA": "12.4"}).driver == Driver("", "12.4", "override")
    assert overrides.read_overrides({"CONDA_OVERRIDE_CUDA": "11.8.0"}).driver.max_cuda == "11.8"
    empty = overrides.read_overrides({"CONDA_OVERRIDE_CUDA": ""})
    assert empty.driver_set and empty.driver is None
    both = overrides.read_overrides({"CUENV_DRIVER": "525.60.13", "CONDA_OVERRIDE_CUDA": "12.1"})
    assert both.driver == Driver("525.60.13", "12.1", "override")


def test_conda_override_cuda_garbage_is_clear():
    with pytest.raises(UsageError, match="CONDA_OVERRIDE_CUDA='abc' is not a CUDA version"):
        overrides.read_overrides({"CONDA_OVERRIDE_CUDA": "abc"})


def test_cuenv_gpus_names_and_compute_capabilities():
    o = overrides.read_overrides({"CUENV_GPUS": "NVIDIA A100-SXM4-80GB, 8.6,sm_90, Tesla T4"})
    assert [(g.index, g.name, g.compute_capability, g.architecture, g.memory_mib) for g in o.gpus] == [
        (0, "NVIDIA A100-SXM4-80GB", "8.0", "Ampere", 81920),
        (1, "compute capability 8.6", "8.6", "Ampere", None),
        (2, "compute capability 9.0", "9.0", "Hopper", None),
        (3, "Tesla T4", "7.5", "Turing", 16384),
    ]


def test_unknown_gpu_is_kept_without_a_cc_and_name_eq_cc_gives_one():
    o = overrides.read_overrides({"CUENV_GPUS": "8.0,GeForce 9999,GeForce 9999=8.9"})
    assert [(g.name, g.compute_capability) for g in o.gpus] == [
        ("compute capability 8.0", "8.0"), ("GeForce 9999", None), ("GeForce 9999", "8.9")]
    with pytest.raises(UsageError, match="not NAME=X.Y") as exc:
        overrides.read_overrides({"CUENV_GPUS": "GeForce 9999=fast"})
    assert "=8.9" in exc.value.hint


def test_full_override_probes_nothing(monkeypatch, tmp_path):
    monkeypatch.setattr(driver, "probe", lambda *a, **k: pytest.fail("probed despite full overrides"))
    m = driver.detect({"CUENV_DRIVER": "550.54.15", "CUENV_GPUS": "8.9"}, root=_root(tmp_path), cache_dir=tmp_path)
    assert m.driver == Driver("550.54.15", "12.4", "override")
    assert [g.compute_capability for g in m.gpus] == ["8.9"]


@pytest.mark.parametrize(
    ("version", "os_name", "expected"),
    [("440.33", "linux", "10.2"), ("450.80.02", "linux", "11.0"), ("470.57.02", "linux", "11.4"),
     ("525.60.13", "linux", "12.0"), ("535.104.05", "linux", "12.2"), ("570.26", "linux", "12.8"),
     ("580.95.05", "linux", "13.0"), ("610.43.02", "linux", "13.3"), ("390.157", "linux", "9.1"),
     ("537.13", "windows", "12.2"), ("581.15", "windows", "13.0"), ("576.02", "windows", "12.9")],
)
def test_max_cuda_for_driver(version, os_name, expected):
    assert matrix.max_cuda_for_driver(version, os_name) == expected


# --- the source chain ----------------------------------------------------------------------


def test_sources_fill_field_by_field_and_stop_when_complete():
    calls = []

    def first(environ, root):
        calls.append("first")
        return probes.Probe("first", "535.104.05", None, (Gpu(0, "NVIDIA A100-SXM4-80GB", None),))

    def second(environ, root):
        calls.append("second")
        return probes.Probe("second", "999.1", "12.2", (Gpu(0, "", None, uuid="GPU-1"),))

    def third(environ, root):
        calls.append("third")
        raise AssertionError("asked although everything was known")

    m = probes.probe({}, Path("/nonexistent"), [("a", first), ("b", second), ("c", third)])
    assert calls == ["first", "second"]
    assert m.driver == Driver("535.104.05", "12.2", "second")
    assert m.gpus == (Gpu(0, "NVIDIA A100-SXM4-80GB", "8.0", 81920, "GPU-1", "Ampere"),)
    assert "driver version from first" in m.notes


def test_a_crashing_source_is_a_note_not_a_crash():
    def broken(environ, root):
        raise RuntimeError("boom")

    m = probes.probe({}, Path("/nonexistent"), [("broken", broken)])
    assert m.driver is None and m.notes == ("broken: RuntimeError: boom",)


def test_no_driver_is_a_normal_state(no_libs, tmp_path):
    m = driver.detect({"PATH": str(tmp_path / "empty")}, root=_root(tmp_path))
    assert m.driver is None and m.gpus == ()
    assert [n.split(":")[0] for n in m.notes] == ["nvidia-smi", "nvidia-smi-table", "proc"]


@pytest.mark.parametrize(("fixture", "version", "cuda"), [("proc-version-580.txt", "580.173.02", "13.0"),
                                                          ("proc-version-384.txt", "384.98", "9.0")])
def test_proc_only_gives_driver_and_derived_cuda(no_libs, tmp_path, fixture, version, cuda):
    m = driver.detect({"PATH": str(tmp_path / "empty")}, root=_root(tmp_path, fixture))
    assert m.driver == Driver(version, cuda, "proc")
    assert m.gpus == ()


def test_sys_module_version_when_proc_is_absent(no_libs, tmp_path):
    root = _root(tmp_path)
    (root / "sys/module/nvidia").mkdir(parents=True)
    (root / "sys/module/nvidia/version").write_text("550.54.15\n")
    assert driver.detect({"PATH": ""}, root=root).driver == Driver("550.54.15", "12.4", "proc")


def test_smi_470_drops_compute_cap_and_fills_from_table_and_catalogue(no_libs, tmp_path):
    bin_dir = tmp_path / "bin"
    fakedriver.fake_smi(bin_dir, table="smi-table-470-truncated-name.txt", csv_error="smi-csv-470-no-compute-cap.txt",
                        csv_text="0, NVIDIA GeForce RTX 3070, GPU-3070, 7979, 470.57.02\n")
    m = driver.detect({"PATH": f"{bin_dir}:/usr/bin:/bin"}, root=_root(tmp_path))
    assert m.driver == Driver("470.57.02", "11.4", "nvidia-smi-table")
    assert m.gpus == (Gpu(0, "NVIDIA GeForce RTX 3070", "8.6", 7979, "GPU-3070", "Ampere"),)
    assert "driver version from nvidia-smi" in m.notes


def test_smi_modern_query_and_table(no_libs, tmp_path):
    bin_dir = tmp_path / "bin"
    csv = ("0, NVIDIA A100-SXM4-40GB, GPU-a, 8.0, 40960, 580.126.09\n"
           "1, NVIDIA A100-SXM4-40GB, GPU-b, 8.0, 40960, 580.126.09\n")
    fakedriver.fake_smi(bin_dir, table="smi-table-580-a100x2.txt", csv_text=csv)
    m = driver.detect({"PATH": f"{bin_dir}:/usr/bin:/bin"}, root=_root(tmp_path))
    assert m.driver == Driver("580.126.09", "13.0", "nvidia-smi-table")
    assert [(g.index, g.uuid, g.compute_capability, g.memory_mib) for g in m.gpus] == [
        (0, "GPU-a", "8.0", 40960), (1, "GPU-b", "8.0", 40960)]


def test_smi_table_only_with_renamed_labels(no_libs, tmp_path):
    bin_dir = tmp_path / "bin"
    fakedriver.fake_smi(bin_dir, table="smi-table-610-renamed-labels.txt")
    m = driver.detect({"PATH": f"{bin_dir}:/usr/bin:/bin"}, root=_root(tmp_path))
    assert m.driver == Driver("610.43.02", "13.3", "nvidia-smi-table")
    assert [(g.name, g.compute_capability, g.memory_mib) for g in m.gpus] == [("NVIDIA B200", "10.0", 183359)] * 2


def test_smi_that_cannot_reach_the_driver_falls_back_to_proc(no_libs, tmp_path):
    bin_dir = tmp_path / "bin"
    fakedriver.fake_smi(bin_dir, fail_text="NVIDIA-SMI has failed because it couldn't communicate with the "
                        "NVIDIA driver. Make sure that the latest NVIDIA driver is installed and running.\n")
    m = driver.detect({"PATH": f"{bin_dir}:/usr/bin:/bin"}, root=_root(tmp_path, "proc-version-565-open.txt"))
    assert m.driver == Driver("565.57.01", "12.6", "proc")
    assert any("couldn't communicate" in n for n in m.notes)


# --- cache ---------------------------------------------------------------------------------


@pytest.fixture
def counted(monkeypatch):
    calls = []
    real = probes.probe

    def probe(environ, root=Path("/"), sources=None):
        calls.append(1)
        return real(environ, root, [("fixed", lambda e, r: probes.Probe("fixed", "535.104.05", "12.2", ()))])

    monkeypatch.setattr(driver, "probe", probe)
    return calls


def test_cache_reused_until_the_fingerprint_changes(counted, tmp_path):
    root, cache = _root(tmp_path), tmp_path / "cache"
    env = {"PATH": ""}
    first = driver.detect(env, root=root, cache_dir=cache)
    assert driver.detect(env, root=root, cache_dir=cache) == first
    assert len(counted) == 1
    (root / "proc/sys/kernel/random/boot_id").write_text("boot-2\n")  # a reboot
    driver.detect(env, root=root, cache_dir=cache)
    assert len(counted) == 2
    (root / "proc/driver/nvidia").mkdir(parents=True)  # a driver change
    (root / "proc/driver/nvidia/version").write_text((FIXTURES / "proc-version-580.txt").read_text())
    driver.detect(env, root=root, cache_dir=cache)
    driver.detect(env, root=root, cache_dir=cache)
    assert len(counted) == 3
    driver.detect(env, root=root, cache_dir=cache, refresh=True)
    assert len(counted) == 4


def test_overrides_are_applied_after_the_cache_and_never_stored(counted, tmp_path):
    root, cache = _root(tmp_path), tmp_path / "cache"
    plain = driver.detect({"PATH": ""}, root=root, cache_dir=cache)
    over = driver.detect({"PATH": "", "CUENV_DRIVER": "470.57.02"}, root=root, cache_dir=cache)
    assert len(counted) == 1
    assert over.driver == Driver("470.57.02", "11.4", "override") and plain.driver.version == "535.104.05"
    stored = json.loads((cache / driver.CACHE_FILE).read_text())
    assert stored["machine"]["driver"]["version"] == "535.104.05"
    assert "CUENV_DRIVER" not in json.dumps(stored)


def test_damaged_cache_is_ignored(counted, tmp_path):
    root, cache = _root(tmp_path), tmp_path / "cache"
    cache.mkdir()
    (cache / driver.CACHE_FILE).write_text("{not json")
    assert driver.detect({"PATH": ""}, root=root, cache_dir=cache).driver.version == "535.104.05"
    assert json.loads((cache / driver.CACHE_FILE).read_text())["machine"]["driver"]["max_cuda"] == "12.2"


def test_machine_json_round_trip():
    m = Machine(Driver("535.104.05", "12.2", "nvml"), (Gpu(0, "NVIDIA T4", "7.5", 15360, "GPU-x", "Turing", True),),
                notes=("a",))
    assert driver.machine_from_json(json.loads(json.dumps(m.to_json()))) == m
