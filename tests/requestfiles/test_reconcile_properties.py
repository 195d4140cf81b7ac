"""Property tests of the reconciler (cuenv.recipes.cudainfer.decide): any mix of pins from the conda and pip
layers (exact, floors, majors, CPU builds, unpinned torches, wheels that bundle their own CUDA, a --cuda
flag) gives one answer or one refusal that names the lines, never an internal error (issue 25 §5)."""

from __future__ import annotations

import re

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from cuenv.cli.machine_flags import described_machine
from cuenv.knowledge.compat import check
from cuenv.recipes import cudainfer
from cuenv.recipes.pipreqs import RequestFileError, Where

FAST = settings(max_examples=200, deadline=None, suppress_health_check=[HealthCheck.too_slow])


@st.composite
def pins(draw):
    line = draw(st.integers(1, 99))
    layer = draw(st.sampled_from(["conda", "pip", ""]))
    strength = draw(st.sampled_from(["exact", "min", "major", "cpu", "unknown", "none"]))
    major = draw(st.integers(10, 13))
    cuda = f"{major}.{draw(st.integers(0, 9))}" if strength in ("exact", "min") else None
    name = draw(st.sampled_from(["torch==2.7.1", "torchvision==0.22.1", "cudatoolkit=11.8", "llama_cpp+cu124",
                                 "nvidia-cuda-runtime-cu12", "accelerate", "pytorch"]))
    bundled = strength == "exact" and layer == "pip" and draw(st.booleans())
    return cudainfer.Evidence(Where("f", line), name, "says", strength, cuda,
                              major if strength in ("exact", "min", "major") else None, layer=layer, bundled=bundled,
                              unconfirmed=draw(st.sampled_from([None, "cannot confirm; ask the index"])))


MACHINE = described_machine("535.104.05", [], ["8.6"])
flags = st.one_of(st.none(), st.builds(lambda a, b: f"{a}.{b}", st.integers(10, 13), st.integers(0, 9)))


def _key(cuda: str) -> tuple[int, int]:
    major, minor = cuda.split(".")
    return int(major), int(minor)


@FAST
@given(st.lists(pins(), max_size=8), flags, st.randoms(use_true_random=False))
def test_any_mix_of_pins_gives_one_answer_or_one_named_conflict(items, flag, rnd):
    try:
        inference = cudainfer.decide(items, file="f", cuda_flag=flag)
    except RequestFileError as err:
        text = str(err)
        assert text.startswith("f:") and err.hint  # the line, and the way out
        if "one environment holds one CUDA major" in text and flag is None:
            assert len(re.findall(r"\bf:\d+", text)) == 2  # a conflict names both lines
        return
    # one answer: the flag, or a CUDA some pin names
    assert inference.cuda is None or inference.cuda == flag or inference.cuda in {e.cuda for e in items}
    assert inference.how
    stack = inference.stack("f")
    check(stack, MACHINE)  # the answer can be judged
    # the same pins in another order give the same CUDA
    shuffled = list(items)
    rnd.shuffle(shuffled)
    assert cudainfer.decide(shuffled, file="f", cuda_flag=flag).cuda == inference.cuda


@FAST
@given(st.lists(pins(), max_size=6), st.integers(11, 13), st.integers(0, 9))
def test_a_pip_torch_is_never_silently_outvoted_by_the_conda_layer(items, major, minor):
    torch = cudainfer.Evidence(Where("f", 100), "torch==9.9.9", "says", "exact", f"{major}.{minor}", major, layer="pip")
    items = [e for e in items if e.layer != "pip"] + [torch]  # the pip layer holds only the torch
    try:
        inference = cudainfer.decide(items, file="f")
    except RequestFileError as err:
        assert "f:100" in str(err) or str(err).startswith("f:")  # refused, naming a line: never a silent pick
        return
    conda = [e for e in items if e.layer == "conda" and e.strength in ("exact", "min", "major", "unknown")]
    # what the pip torch replaces or cannot share a venv with (conda's torch, another major) is set aside, with a
    # note; a CUDA pin of the torch's own major stays for the conda packages that load it, and can only raise it
    aside = [e for e in conda if e.cuda != torch.cuda and (e.major != major or cudainfer._conda_name(e) in
                                                           ("pytorch", "torchvision", "torchaudio", "pytorch-gpu", "pytorch-cuda"))]
    if aside:
        assert any("pip layer decides" in n for n in inference.notes)
    assert inference.cuda is not None and _key(inference.cuda) >= _key(torch.cuda)  # never below the torch Python imports


@FAST
@given(st.lists(st.sampled_from([(11, "pip"), (12, "pip"), (13, "pip"), (14, "pip"), (11, "conda"), (12, "conda")]),
                min_size=2, max_size=5))
def test_wheels_of_several_majors_share_a_venv_only_when_their_files_cannot_clash(pins):
    items = [cudainfer.Evidence(Where("f", i + 1), f"nvidia-x-cu{m}", "says", "major", None, m, layer=layer)
             for i, (m, layer) in enumerate(pins)] + [
        cudainfer.Evidence(Where("f", 90), "nvidia-cuda-runtime", "says", "exact", f"{max(m for m, _ in pins)}.0",
                           max(m for m, _ in pins), layer="pip")]
    below = {m for m, _ in pins if m < 13}
    try:
        inference = cudainfer.decide(items, file="f")
    except RequestFileError as err:
        assert len(below) > 1 or any(layer == "conda" for _, layer in pins), str(err)
        return
    assert len(below) <= 1 and inference.cuda == f"{max(m for m, _ in pins)}.0"


@FAST
@given(st.lists(st.integers(11, 13), min_size=1, max_size=4), st.integers(1, 3))
def test_bundled_cuda_tags_do_not_stand_in_for_an_unpinned_torch(majors, n):
    items = [cudainfer.Evidence(Where("f", i + 1), f"w{i}+cu{m}4", "says", "exact", f"{m}.4", m, layer="pip",
                                bundled=True) for i, m in enumerate(majors)]
    items += [cudainfer.Evidence(Where("f", 50 + i), "accelerate", "says", "unknown", layer="pip") for i in range(n)]
    inference = cudainfer.decide(items, file="f")
    assert inference.cuda is None and inference.undetermined
