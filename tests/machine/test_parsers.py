"""Every parser on every real fixture; expectations and source URLs live in fixtures/SOURCES.yaml."""

from __future__ import annotations

from pathlib import Path

import pytest
import yaml

from cuenv.machine import nvsmi

FIXTURES = Path(__file__).with_name("fixtures")
SOURCES = yaml.safe_load((FIXTURES / "SOURCES.yaml").read_text())


def _cases(prefix: str) -> list[str]:
    return sorted(n for n in SOURCES if n.startswith(prefix))


def test_every_fixture_has_a_source_and_every_source_a_fixture():
    files = {p.name for p in FIXTURES.iterdir() if p.name != "SOURCES.yaml"}
    assert files == set(SOURCES)
    assert len(files) >= 10
    assert all(entry["url"].startswith("https://") for entry in SOURCES.values())


def _gpus(report: nvsmi.SmiReport) -> list[list]:
    return [[g.index, g.name, g.memory_mib, g.mig] for g in report.gpus]


@pytest.mark.parametrize("name", _cases("smi-table-"))
def test_parse_smi_table(name):
    expect = SOURCES[name]["expect"]
    report = nvsmi.parse_smi_table((FIXTURES / name).read_text())
    assert (report.driver_version, report.cuda_version, report.smi_version) == (expect["driver"], expect["cuda"], expect["smi"])
    assert _gpus(report) == expect["gpus"]


@pytest.mark.parametrize("name", _cases("smi-xml-"))
def test_parse_smi_xml(name):
    expect = SOURCES[name]["expect"]
    report = nvsmi.parse_smi_xml((FIXTURES / name).read_text())
    assert (report.driver_version, report.cuda_version) == (expect["driver"], expect["cuda"])
    assert _gpus(report) == expect["gpus"]


def test_parse_smi_xml_reads_uuid_and_architecture():
    report = nvsmi.parse_smi_xml((FIXTURES / "smi-xml-531-windows-3080ti.xml").read_text())
    assert report.gpus[0].uuid == "GPU-63259fac-e138-76b5-a59e-9fc57a9990a4"
    assert report.gpus[0].architecture == "Ampere"


def test_parse_smi_xml_rejects_garbage_clearly():
    with pytest.raises(ValueError, match="does not parse"):
        nvsmi.parse_smi_xml("<nvidia_smi_log><gpu>")


@pytest.mark.parametrize("name", [n for n in _cases("smi-csv-") if "expect" in SOURCES[n]])
def test_parse_smi_csv(name):
    entry = SOURCES[name]
    report = nvsmi.parse_smi_csv((FIXTURES / name).read_text(), entry["fields"])
    assert report.driver_version == entry["expect"]["driver"]
    assert _gpus(report) == entry["expect"]["gpus"]
    assert [g.compute_capability for g in report.gpus] == entry["expect"]["cc"]


def test_parse_smi_csv_default_fields_with_units_and_na():
    text = ("0, NVIDIA A100-SXM4-80GB, GPU-aaaa, 8.0, 81920 MiB, 535.104.05\n"
            "1, NVIDIA H100 80GB HBM3, GPU-bbbb, [N/A], 81559, 535.104.05\n\n")
    report = nvsmi.parse_smi_csv(text)
    assert report.driver_version == "535.104.05"
    assert [(g.index, g.compute_capability, g.memory_mib, g.uuid) for g in report.gpus] == [
        (0, "8.0", 81920, "GPU-aaaa"), (1, None, 81559, "GPU-bbbb")]


@pytest.mark.parametrize("name", _cases("proc-version-"))
def test_parse_proc_version(name):
    assert nvsmi.parse_proc_version((FIXTURES / name).read_text()) == SOURCES[name]["expect"]["driver"]


@pytest.mark.parametrize(("text", "expected"), [("580.95.05\n", "580.95.05"), ("", None), ("garbage\n", None)])
def test_parse_sys_module_version(text, expected):
    assert nvsmi.parse_proc_version(text) == expected


@pytest.mark.parametrize(
    ("header", "driver_version", "cuda"),
    [
        ("| NVIDIA-SMI 535.54.03   Driver Version: 535.54.03   CUDA Version: 12.2     |", "535.54.03", "12.2"),
        ("| NVIDIA-SMI 560.28.03   Driver Version: 560.28.03   CUDA Driver Version: 12.6 |", "560.28.03", "12.6"),
        ("| NVIDIA-SMI 610.43.02   KMD Version: 610.43.02     CUDA UMD Version: 13.3  |", "610.43.02", "13.3"),
        ("| NVIDIA-SMI 535.54.03   Driver Version: 535.54.03   CUDA Version: 12.2 [Deprecated] |", "535.54.03", "12.2"),
        ("| NVIDIA-SMI 525.60.13   Driver Version: 525.60.13   CUDA Version: N/A      |", "525.60.13", None),
        ("| NVIDIA-SMI 384.81                 Driver Version: 384.81                    |", "384.81", None),
    ],
)
def test_header_label_variants(header, driver_version, cuda):
    report = nvsmi.parse_smi_table(header + "\n")
    assert (report.driver_version, report.cuda_version) == (driver_version, cuda)
