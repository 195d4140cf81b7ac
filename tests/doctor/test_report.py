"""`cuenv doctor --report`: real outputs from public bug reports (tests/doctor/fixtures/reports/SOURCES.yaml
keeps the URL beside each), the codes they must give, the JSON envelope, and bad input."""

from __future__ import annotations

import io
import json
import re
from pathlib import Path

import pytest
import yaml
from hypothesis import given, settings
from hypothesis import strategies as st

from tests.doctor.doctorkit import REPORTS

SOURCES = yaml.safe_load((REPORTS / "SOURCES.yaml").read_text(encoding="utf-8"))
MACHINE_FIXTURES = Path(__file__).resolve().parents[1] / "machine" / "fixtures"


def test_every_fixture_has_a_source_and_there_are_enough():
    files = sorted(p.name for p in REPORTS.glob("*.txt"))
    assert files == sorted(SOURCES) and len(files) >= 15
    assert all(row["url"].startswith("https://github.com/") for row in SOURCES.values())


def test_the_fixtures_cover_every_code_a_report_can_show():
    seen = {code for row in SOURCES.values() for code in row["expect"]["codes"]}
    assert {"driver-too-old", "arch-unsupported", "driver-library-mismatch", "no-driver", "library-not-found",
            "cudnn-mismatch", "compiler-too-new", "cpu-only-build", "no-container-toolkit", "driver-stub-library",
            "nvcc-runtime-mismatch", "bf16-unsupported", "installer-corrupt"} <= seen


@pytest.mark.parametrize("name", sorted(SOURCES))
def test_report_fixture(cli, name):
    code, out, err = cli("doctor", "--report", str(REPORTS / name), "--json")
    assert err == ""
    data = json.loads(out)
    expect = SOURCES[name]["expect"]
    codes = sorted({f["code"] for c in data["checks"] for f in c["findings"]})
    assert (data["ok"], codes) == (expect["ok"], sorted(expect["codes"]))
    assert code == (0 if expect["ok"] else 1)


def test_json_envelope_of_a_report(cli):
    code, out, _ = cli("doctor", "--report", str(REPORTS / "nvml-mismatch-570-p2p.txt"), "--json")
    data = json.loads(out)
    reload = ("Reboot, or stop every GPU process and reload the module: `sudo rmmod nvidia_drm nvidia_modeset "
              "nvidia_uvm nvidia && sudo modprobe nvidia`.")
    assert data == {
        "ok": False,
        "origin": "report",
        "checks": [
            {"name": "driver", "status": "error", "detail": ["user-space library 570.124 (NVML library version)"],
             "findings": [{"code": "driver-library-mismatch", "severity": "error",
                           "message": "NVML refuses to start: Driver/library version mismatch; the loaded kernel module "
                                      "is not the version of the installed driver libraries.",
                           "fix": reload}]},
            {"name": "errors", "status": "error", "detail": ["1 well-known error message(s) recognised"],
             "findings": [{"code": "driver-library-mismatch", "severity": "error",
                           "message": "The user-space driver libraries (libnvidia-ml, libcuda) were upgraded but the old "
                                      "kernel module is still loaded, typically after an unattended driver upgrade. "
                                      "(seen: \"Failed to initialize NVML: Driver/library version mismatch\")",
                           "fix": reload[:-1] + "; keep one driver installation (distribution package or .run, not both)."}]},
        ],
        "missing": [
            "no driver version in the report (paste `nvidia-smi` or /proc/driver/nvidia/version)",
            "no GPU model in the report (paste `nvidia-smi` or `nvidia-smi -L`)",
            "no nvcc version in the report (paste `nvcc --version`)",
            "no framework version in the report (paste `python -m torch.utils.collect_env` or `pip list`)",
            "no cuDNN version in the report",
            "no gcc version in the report",
        ],
    }
    assert all(set(f) == {"code", "severity", "message", "fix"} for c in data["checks"] for f in c["findings"])


def test_report_from_stdin_with_a_machine_fixture(cli, monkeypatch):
    """The plain nvidia-smi table (the machine tests' fixture, reused): a Tesla T4 under driver 418.67."""
    table = (MACHINE_FIXTURES / "smi-table-418-smi-differs.txt").read_text()
    monkeypatch.setattr("sys.stdin", io.StringIO(table + "\nnvcc: NVIDIA (R) Cuda compiler driver\n"
                                                 "Cuda compilation tools, release 10.1, V10.1.243\n"))
    code, out, _ = cli("doctor", "--report", "-", "--json")
    data = json.loads(out)
    assert [(c["name"], c["status"]) for c in data["checks"]] == [
        ("driver", "ok"), ("toolkits", "ok"), ("machine", "warning")]
    assert data["checks"][0]["detail"] == ["driver 418.67, newest CUDA 10.1 (from report)"]
    assert data["checks"][2]["detail"] == ["GPU 0: Tesla T4, cc 7.5, 15 GiB, BF16 no, FP8 no"]
    assert code == 0 and "no nvcc version in the report (paste `nvcc --version`)" not in data["missing"]


def test_collect_env_feeds_the_framework_check(cli):
    code, out, _ = cli("doctor", "--report", str(REPORTS / "collect-env-390-runtime-error-35.txt"), "--json")
    data = json.loads(out)
    framework = next(c for c in data["checks"] if c["name"] == "framework")
    assert framework["detail"][0] == "torch 1.0.0.dev20181106, built with CUDA 9.0.176, GPU available: yes"
    mismatch = next(f for f in framework["findings"] if f["code"] == "nvcc-runtime-mismatch")
    assert mismatch["message"].startswith("nvcc is CUDA 9.1 but torch 1.0.0.dev20181106 was built with CUDA 9.0")
    cudnn = next(c for c in data["checks"] if c["name"] == "cudnn")
    assert cudnn["detail"][0] == "library /usr/lib/x86_64-linux-gnu/libcudnn.so.7.0.5: cuDNN 7.0.5"


def test_text_output_names_cause_and_fix(cli):
    code, out, _ = cli("doctor", "--report", str(REPORTS / "gcc13-cuda121-unsupported-gnu.txt"))
    assert code == 1
    assert out.startswith("Diagnosis of the report\n")
    assert "error[compiler-too-new]: nvcc's host_config.h rejects a gcc newer than 12." in out
    assert "fix: Point nvcc at a supported gcc: `nvcc -ccbin g++-12`" in out
    assert "Not in the report:\n  - no driver version in the report" in out


def test_missing_report_file_is_a_usage_error(cli, tmp_path):
    code, out, err = cli("doctor", "--report", str(tmp_path / "nope.txt"))
    assert code == 2 and out == ""
    assert err.splitlines() == [f"error: No report file '{tmp_path / 'nope.txt'}'.",
                                "hint: Give the file you saved the output in, or - for stdin."]


def test_report_takes_no_environment_name(cli):
    code, _, err = cli("doctor", "myenv", "--report", "-")
    assert code == 2 and err.startswith("error: --report diagnoses pasted text")
    assert err.splitlines()[1] == "hint: Run `cuenv doctor --report -` alone."


def test_a_saved_report_named_as_the_environment_gets_the_command_that_reads_it(cli, work):
    """`cuenv doctor smi.txt` names a file here, not an environment: the hint runs as written."""
    (work / "smi.txt").write_bytes((REPORTS / "gcc13-cuda121-unsupported-gnu.txt").read_bytes())
    code, _, err = cli("doctor", "smi.txt")
    assert code == 2 and err.startswith("error: smi.txt is a file here, not an environment."), err
    [hinted] = err.split("`")[1::2]
    code, out, err = cli(*hinted.split()[1:])
    assert code == 1 and err == "" and out.startswith("Diagnosis of the report\n")


def test_unknown_environment(cli):
    code, out, err = cli("doctor", "nope")
    assert code == 2 and out == "" and err.startswith("error: No environment named 'nope'.")


def test_active_system_toolkit_is_not_an_environment(cli, isolated):
    import os

    env = {**os.environ, "CUENV_ACTIVE": "system:13.0", "CUENV_HOME": str(isolated / "home")}
    code, out, err = cli("doctor", "--json", environ=env)
    assert err == "" and "environment" not in json.loads(out)


def test_primary_cause_comes_first(cli):
    """An old driver is read before its consequences: the first finding of the report is driver-too-old."""
    for name in ("torch-driver-too-old-11040-smi-470.txt", "collect-env-390-runtime-error-35.txt"):
        _, out, _ = cli("doctor", "--report", str(REPORTS / name), "--json")
        first = next(c for c in json.loads(out)["checks"] if c["findings"])
        assert (first["name"], first["findings"][0]["code"]) == ("driver", "driver-too-old"), name


def test_cuda_unusable_is_never_all_passed(cli):
    for name in SOURCES:
        text = (REPORTS / name).read_text(encoding="utf-8")
        if re.search(r"Is CUDA available: (False|No)\b|is_available\(\)[^\n]*\n(?:[^\n]*\n){0,3}?\s*(?:return\s+)?False", text):
            _, out, _ = cli("doctor", "--report", str(REPORTS / name))
            assert "All checks passed" not in out, name


def test_collect_env_no_cuda_fields_are_empty_not_versions():
    """collect_env prints 'No CUDA' for the runtime, GPU and driver on a Mac (torch/utils/collect_env.py)."""
    from cuenv.doctor import report

    facts = report.parse("PyTorch version: 2.5.1\nCUDA used to build PyTorch: None\nOS: macOS 15.1 (arm64)\n"
                         "Is CUDA available: False\nCUDA runtime version: No CUDA\n"
                         "GPU models and configuration: No CUDA\nNvidia driver version: No CUDA\n")
    assert facts.machine is None and facts.toolkits is None
    torch = facts.framework.probes[0]
    assert (torch.version, torch.cuda, torch.available) == ("2.5.1", None, False)


def test_jaxlib_with_a_cuda_tag_is_a_cuda_build():
    from cuenv.doctor import report

    facts = report.parse("jax                       0.4.22\njaxlib                    0.4.22+cuda12.cudnn89\n")
    jax = next(p for p in facts.framework.probes if p.name == "jax")
    assert (jax.version, jax.cuda) == ("0.4.22+cuda12.cudnn89", "12.3")


@given(st.text(max_size=400))
@settings(max_examples=150, deadline=None)
def test_parse_reads_any_text(text):
    """A pasted report is untrusted: parse never raises, and a driver it reports is a version."""
    from cuenv.doctor import report

    facts = report.parse(text)
    if facts.machine is not None and facts.machine.driver is not None and facts.machine.driver.version:
        assert re.fullmatch(r"\d+(\.\d+)*", facts.machine.driver.version)


@given(st.from_regex(r"NVIDIA-SMI [0-9]{3}\.[0-9]{2}\s+Driver Version: [0-9]{3}\.[0-9]{2}(\.[0-9]{2})?\s+"
                     r"CUDA Version: 1[0-3]\.[0-9]", fullmatch=True))
def test_smi_header_line_alone_gives_driver_and_cuda(line):
    from cuenv.doctor import report

    driver, cuda = report._smi_header(line)
    assert driver is not None and line.split("Driver Version: ")[1].startswith(driver)
    assert cuda == line.rsplit(": ", 1)[1]
