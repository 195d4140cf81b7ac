from __future__ import annotations

import pytest

from cuenv.knowledge import gpus


def test_every_row_resolves_to_itself():
    models = gpus.all_models()
    assert len(models) > 190
    for model in models:
        found = gpus.lookup(model.name)
        assert found is not None, model.name
        assert (found.name, found.compute_capability) == (model.name, model.compute_capability)
        assert found.architecture == gpus.architecture_for(model.compute_capability)
        assert model.source.startswith(("https://", "/work/shared")), model.name


def test_no_row_is_recalled():
    """Every compute capability was read at a named source; none is remembered."""
    data = gpus._data()
    assert not any("recall" in text.lower() for text in data["sources"].values())
    for row in data["models"]:
        assert "recall" not in str(row.get("status", "")), row
        if row.get("status") == "derived":  # architecture read at the source, cc from the rule
            assert "(turing)" in data["sources"][row["src"]] and row["cc"] == "7.5", row


def test_rows_are_kepler_or_newer_and_unique():
    names = [m.name.lower() for m in gpus.all_models()]
    assert len(names) == len(set(names))
    assert all(float(m.compute_capability) >= 3.0 for m in gpus.all_models())


@pytest.mark.parametrize(
    ("reported", "name", "cc", "arch", "memory"),
    [
        ("Tesla T4", "NVIDIA T4", "7.5", "Turing", 16384),
        ("NVIDIA GeForce RTX 4090", "GeForce RTX 4090", "8.9", "Ada Lovelace", 24576),
        ("NVIDIA H100 80GB HBM3", "NVIDIA H100", "9.0", "Hopper", 81920),
        ("NVIDIA H100 PCIe", "NVIDIA H100", "9.0", "Hopper", None),
        ("NVIDIA A100-SXM4-80GB", "NVIDIA A100", "8.0", "Ampere", 81920),
        ("NVIDIA A100-PCIE-40GB", "NVIDIA A100", "8.0", "Ampere", 40960),
        ("NVIDIA A100-SXM...", "NVIDIA A100", "8.0", "Ampere", None),
        ("GTX 1080 Ti", "GeForce GTX 1080 Ti", "6.1", "Pascal", 11264),
        ("NVIDIA GeForce RTX 3080 Laptop GPU", "GeForce RTX 3080 Laptop GPU", "8.6", "Ampere", None),
        ("Quadro RTX 6000", "Quadro RTX 6000", "7.5", "Turing", None),
        ("Tesla V100-SXM2-32GB", "NVIDIA V100", "7.0", "Volta", 32768),
        ("NVIDIA RTX 6000 Ada Generation", "NVIDIA RTX 6000 Ada", "8.9", "Ada Lovelace", 49152),
        ("NVIDIA RTX 3080Ti", "GeForce RTX 3080 Ti", "8.6", "Ampere", 12288),
        ("NVIDIA TITAN X (Pascal)", "NVIDIA TITAN X", "6.1", "Pascal", 12288),
        ("GeForce GTX TITAN X", "GeForce GTX TITAN X", "5.2", "Maxwell", None),
        ("NVIDIA A800 80GB PCIe", "NVIDIA A800", "8.0", "Ampere", 81920),
        ("NVIDIA B200", "NVIDIA B200", "10.0", "Blackwell", 184320),
        ("NVIDIA GeForce RTX 5090", "GeForce RTX 5090", "12.0", "Blackwell", 32768),
        ("NVIDIA GB10", "NVIDIA GB10", "12.1", "Blackwell", None),
        ("Tesla K80", "Tesla K80", "3.7", "Kepler", None),
        ("Jetson AGX Orin", "Jetson AGX Orin", "8.7", "Ampere", None),
        # names NVML reports on cloud, region-specific and embedded parts (sources in gpus.yaml)
        ("NVIDIA B300 SXM6 AC", "NVIDIA B300", "10.3", "Blackwell", None),
        ("Orin (nvgpu)", "Jetson Orin", "8.7", "Ampere", None),
        ("NVIDIA Tegra Orin (nvgpu)", "Jetson Orin", "8.7", "Ampere", None),
        ("NVIDIA A10G", "NVIDIA A10G", "8.6", "Ampere", 24576),
        ("NVIDIA H20", "NVIDIA H20", "9.0", "Hopper", None),
        ("NVIDIA H800", "NVIDIA H800", "9.0", "Hopper", None),
        ("NVIDIA H200 NVL", "NVIDIA H200", "9.0", "Hopper", 144384),
        ("NVIDIA H100 NVL", "NVIDIA H100", "9.0", "Hopper", None),
        ("NVIDIA A800-SXM4-80GB", "NVIDIA A800", "8.0", "Ampere", 81920),
        ("NVIDIA GeForce RTX 4090 D", "GeForce RTX 4090 D", "8.9", "Ada Lovelace", None),
        ("NVIDIA L20", "NVIDIA L20", "8.9", "Ada Lovelace", None),
        # rows once recalled, now read at a source (gpus.yaml names each)
        ("NVIDIA GeForce RTX 4080 SUPER", "GeForce RTX 4080 SUPER", "8.9", "Ada Lovelace", 16384),
        ("NVIDIA RTX A4500", "NVIDIA RTX A4500", "8.6", "Ampere", 20480),
        ("NVIDIA GeForce RTX 3060", "GeForce RTX 3060", "8.6", "Ampere", None),
        ("NVIDIA GeForce RTX 2070 SUPER", "GeForce RTX 2070 SUPER", "7.5", "Turing", 8192),
        ("NVIDIA GeForce GTX 1660 SUPER", "GeForce GTX 1660 SUPER", "7.5", "Turing", None),
        ("GeForce GTX 1650", "GeForce GTX 1650", "7.5", "Turing", None),
        ("NVIDIA GeForce GTX 1050 Ti", "GeForce GTX 1050 Ti", "6.1", "Pascal", None),
    ],
)
def test_real_name_variants(reported, name, cc, arch, memory):
    model = gpus.lookup(reported)
    assert model is not None
    assert (model.name, model.compute_capability, model.architecture, model.memory_mib) == (name, cc, arch, memory)


@pytest.mark.parametrize("name", ["", "   ", "Foo 9000", "NVIDIA GeForce ...", "NVIDIA RTX PRO ...", "Radeon RX 7900 XTX",
                                  "GeForce 8800 GT", "NVIDIA RTX 5880 Ada Generation"])
def test_unknown_names_give_none(name):
    assert gpus.lookup(name) is None


@pytest.mark.parametrize(
    ("cc", "arch"),
    [("3.5", "Kepler"), ("5.2", "Maxwell"), ("6.1", "Pascal"), ("7.0", "Volta"), ("7.2", "Volta"), ("7.5", "Turing"),
     ("8.0", "Ampere"), ("8.6", "Ampere"), ("8.7", "Ampere"), ("8.9", "Ada Lovelace"), ("9.0", "Hopper"),
     ("10.0", "Blackwell"), ("10.3", "Blackwell"), ("10.7", "Rubin"), ("11.0", "Blackwell"), ("12.0", "Blackwell"), ("12.1", "Blackwell"),
     ("sm_90", "Hopper"), ("86", "Ampere"), ("42.0", "Unknown")],
)
def test_architecture_for(cc, arch):
    assert gpus.architecture_for(cc) == arch


@pytest.mark.parametrize(
    ("cc", "fp16tc", "bf16", "fp8", "tf32"),
    [("6.1", False, False, False, False), ("7.0", True, False, False, False), ("7.5", True, False, False, False),
     ("8.0", True, True, False, True), ("8.6", True, True, False, True), ("8.9", True, True, True, True),
     ("9.0", True, True, True, True), ("12.0", True, True, True, True)],
)
def test_features(cc, fp16tc, bf16, fp8, tf32):
    assert gpus.features(cc) == gpus.ArchFeatures(fp16tc, bf16, fp8, tf32)


def test_every_feature_rule_has_a_source():
    assert set(gpus.feature_sources()) == {"fp16_tensor_cores", "bf16", "fp8", "tf32"}
    assert all("https://" in s for s in gpus.feature_sources().values())


def test_bad_cc_is_a_usage_error():
    from cuenv.errors import UsageError

    with pytest.raises(UsageError):
        gpus.architecture_for("eight")


def test_the_driver_compute_capability_wins_over_the_table():
    """On a real machine NVML's value is kept; the table only fills what the driver left out."""
    from cuenv.machine.model import Gpu
    from cuenv.machine.probes import _complete_gpu

    reported = _complete_gpu(Gpu(0, "NVIDIA A10G", "8.7"))  # whatever NVML says stands
    assert (reported.compute_capability, reported.architecture) == ("8.7", "Ampere")
    filled = _complete_gpu(Gpu(0, "NVIDIA A10G", None))
    assert (filled.compute_capability, filled.memory_mib) == ("8.6", 24576)
    unknown = _complete_gpu(Gpu(0, "NVIDIA Future X1", None))
    assert unknown.compute_capability is None  # unknown stays unknown: check says gpu-unknown-cc
