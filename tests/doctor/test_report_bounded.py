"""`doctor --report` is linear in its input (issue 31 §8): one 300 kB line of capitals or spaces ran past
60 s before (a backtracking pattern on an unbounded line). Each class below, 300 kB of it, is parsed in one
child process under a timeout that the old parser missed by minutes for any one of them."""

from __future__ import annotations

import subprocess
import sys

from hypothesis import given, settings
from hypothesis import strategies as st

from cuenv.doctor.report import MAX_LINE, parse

N = 300_000
CLASSES = {
    "capitals": "'A' * N", "spaces": "' ' * N", "capital lines": "('A' * 1999 + '\\n') * 150",
    "space lines": "(' ' * 1999 + '\\n') * 150", "newlines": "'\\n' * N", "parens": "'(' * N",
    "gcc": "'gcc (' + ' ' * N + ') 1.2'", "field": "'Nvidia driver version:' + ' ' * N + 'x'",
    "capability": "'A' * N + ' with CUDA capability sm_90 is not compatible'", "digits": "'9' * N",
    "smi": "'NVIDIA-SMI ' + '1.' * (N // 2)", "quotes": "'> ' * (N // 2)", "NVIDIA words": "'NVIDIA ' * (N // 7)",
}


def test_every_class_of_long_input_is_parsed_in_linear_time():
    script = f"from cuenv.doctor.report import parse\nN = {N}\n" + "".join(
        f"parse({expr})\nprint({name!r}, flush=True)\n" for name, expr in CLASSES.items())
    done = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stderr
    assert done.stdout.split("\n")[:-1] == list(CLASSES)


def test_the_capability_warning_is_still_read_and_long_lines_are_cut():
    facts = parse("x " * 10 + "NVIDIA GeForce RTX 5090 with CUDA capability sm_120 is not compatible with the current PyTorch")
    assert facts.machine is not None
    assert [(g.name, g.compute_capability) for g in facts.machine.gpus] == [("NVIDIA GeForce RTX 5090", "12.0")]
    compiler = parse("gcc (Ubuntu 11.4.0-1ubuntu1~22.04) 11.4.0").compiler
    assert compiler is not None and compiler.gcc == "11.4.0"
    said = parse("Nvidia driver version: 550.54.15\n").machine
    assert said is not None and said.driver is not None and said.driver.version == "550.54.15"
    cut = parse("Nvidia driver version:" + " " * MAX_LINE + "550.54.15").machine  # the value lies past the cut
    assert cut is None or cut.driver is None


@settings(max_examples=60, deadline=None)
@given(st.lists(st.text(alphabet="A a(): \t>-*9.NVIDIA-SMIgcsm_\n", max_size=3000), max_size=20))
def test_any_text_parses(lines: list[str]):
    parse("\n".join(lines))
