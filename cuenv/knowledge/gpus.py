"""The GPU catalogue: model name -> compute capability, architecture, memory; and what each
architecture supports (FP16 tensor cores, TF32, BF16, FP8).

Data lives in ``cuenv/knowledge/data/gpus.yaml`` (each row with its source); it is parsed on first use
and cached for the process. Pure: no I/O besides reading that file.
"""

from __future__ import annotations

import re
from functools import cache, lru_cache
from pathlib import Path

from cuenv.knowledge import versions
from cuenv.plain import Plain

TYPE_CHECKING = False  # no `typing` at run time: `check` names GPUs at start-up (issue 29)
if TYPE_CHECKING:
    from typing import Any, Final

DATA: Final = Path(__file__).with_name("data") / "gpus.yaml"


class GpuModel(Plain):
    __slots__ = ("name", "compute_capability", "architecture", "memory_mib", "source", "platform", "exact_sass")

    def __init__(self, name: str, compute_capability: str, architecture: str, memory_mib: int | None, source: str,
                 platform: str | None = None, exact_sass: bool = False) -> None:
        self.name = name  # as NVIDIA lists it: "GeForce RTX 4090"
        self.compute_capability = compute_capability  # "8.9"
        self.architecture = architecture  # "Ada Lovelace"
        self.memory_mib = memory_mib  # None when the model is sold with several sizes
        self.source = source  # where the compute capability (and memory) came from
        self.platform = platform  # "jetson" | "sbsa": where the part only exists; None = any
        self.exact_sass = exact_sass  # Tegra: SASS runs only on its own compute capability, not a lower minor


class ArchFeatures(Plain):
    __slots__ = ("fp16_tensor_cores", "bf16", "fp8", "tf32")

    def __init__(self, fp16_tensor_cores: bool, bf16: bool, fp8: bool, tf32: bool) -> None:
        self.fp16_tensor_cores, self.bf16, self.fp8, self.tf32 = fp16_tensor_cores, bf16, fp8, tf32


# Words that vendors add or drop between NVIDIA's list and what the driver reports.
_NOISE: Final = frozenset({"nvidia", "geforce", "tesla", "gpu", "graphics", "generation", "edition"})
# Form factor and memory packaging: "A100-SXM4-80GB", "H100 80GB HBM3", "H100 NVL", MIG slices, and the
# board suffix of "NVIDIA B300 SXM6 AC"; "(nvgpu)" of Jetson's "Orin (nvgpu)" goes with the parentheses.
# (patterns: compiled on first use, by `re`'s own cache)
_FORM: Final = r"^(sxm\d*|pcie|hbm\d*e?|nvl|nvlink|mig|ac|\d+gb|\d+g\.\d+gb|\d+c\.\d+g\.\d+gb)$"
_MOBILE: Final = frozenset({"laptop", "mobile", "notebook", "max", "q", "maxq", "with", "design"})
_MEMORY: Final = r"(?i)\b(\d+)\s*gb\b"


def _tokens(name: str) -> list[str]:
    text = name.lower().replace("-", " ").replace("_", " ").replace("/", " ")
    text = re.sub(r"(\d)(ti|super)\b", r"\1 \2", text)  # "3080Ti" -> "3080 ti"
    return [t for t in text.split() if t not in _NOISE]


def _key(tokens: list[str]) -> str:
    return " ".join(tokens)


def _parse(path: Path) -> dict[str, Any]:
    """gpus.yaml with its lookup index (a name's key -> the row of its model), kept in the shipped form
    (cuenv.shipped): a GPU named at start-up builds only its own model, not the catalogue (issue 29)."""
    from cuenv import shipped

    data: dict[str, Any] = shipped.parse_yaml(path)
    index: dict[str, int] = {}
    for row_number, row in enumerate(data["models"]):
        for name in (row["name"], *row.get("aliases", ())):
            index.setdefault(_key(_tokens(name)), row_number)
    data["index"] = index
    return data


@lru_cache(maxsize=1)
def _data() -> dict[str, Any]:
    from cuenv import shipped

    return shipped.load(DATA, _parse, depends=(Path(__file__),))  # the index is this module's reading


@cache
def _model(row_number: int) -> GpuModel:
    data = _data()
    row, sources = data["models"][row_number], data["sources"]
    source = sources[row["src"]]
    if "mem_gb" in row:
        source += f"; memory: {sources[row['mem_src']]}"
    return GpuModel(
        name=row["name"],
        compute_capability=row["cc"],
        architecture=architecture_for(row["cc"]),
        memory_mib=int(row["mem_gb"]) * 1024 if "mem_gb" in row else None,
        source=source,
        platform=row.get("platform"),
        exact_sass=row.get("binary") == "exact",
    )


def _found(index: dict[str, int], tokens: list[str]) -> GpuModel | None:
    row_number = index.get(_key(tokens))
    return None if row_number is None else _model(row_number)


def all_models() -> tuple[GpuModel, ...]:
    return tuple(_model(n) for n in range(len(_data()["models"])))


def lookup(name: str) -> GpuModel | None:
    """The catalogue entry for a name as a driver reports it, or None when unknown.

    Tries, in order: the name as is; without form factor and memory ("A100-SXM4-80GB" ->
    "A100"); without a laptop suffix; a unique completion of a name nvidia-smi cut short
    ("NVIDIA A100-SXM..."). Memory written in the name wins over the catalogue's.
    """
    if not isinstance(name, str) or not name.strip():
        return None
    index: dict[str, int] = _data()["index"]
    truncated = name.rstrip().endswith("...")
    raw = re.sub(r"\([^)]*\)", " ", name.rstrip().rstrip(".")) if truncated else name
    tokens = _tokens(raw)
    memory = re.search(_MEMORY, name)
    memory_mib = int(memory.group(1)) * 1024 if memory else None

    model = _found(index, tokens)
    if model is not None:
        return model
    tokens = [t for t in _tokens(re.sub(r"\([^)]*\)", " ", raw)) if not re.match(_FORM, t)]
    model = _found(index, tokens)
    if model is None:
        desktop = [t for t in tokens if t not in _MOBILE]
        if desktop != tokens and (found := _found(index, desktop)) is not None:
            # A laptop part shares its desktop sibling's compute capability, not its memory.
            return GpuModel(f"{found.name} Laptop GPU", found.compute_capability, found.architecture,
                            memory_mib, found.source, found.platform, found.exact_sass)
    if model is None and truncated and tokens:
        prefix = _key(tokens)
        hits = {n for k, n in index.items() if k.startswith(prefix)}
        model = _model(hits.pop()) if len(hits) == 1 else None
    if model is None:
        return None
    if memory_mib is not None and memory_mib != model.memory_mib:
        return GpuModel(model.name, model.compute_capability, model.architecture, memory_mib, model.source,
                        model.platform, model.exact_sass)
    return model


def _cc_text(cc: str) -> str:
    v = versions.cc(cc)
    return f"{v.major}.{v.minor}"


def architecture_for(cc: str) -> str:
    """ "8.0" -> "Ampere", "8.9" -> "Ada Lovelace", "12.0" -> "Blackwell"; "Unknown" past the table."""
    text = _cc_text(cc)
    arch: dict[str, dict[str, str]] = _data()["architectures"]  # exact "8.9" and major "8" -> name
    if text in arch["exact"]:
        return arch["exact"][text]
    return arch["major"].get(text.split(".")[0], "Unknown")


def features(cc: str) -> ArchFeatures:
    """What a GPU of this compute capability supports; rules and sources in gpus.yaml."""
    have = versions.cc(cc)
    rules = _data()["features"]
    ok = {name: have >= versions.cc(rule["min_cc"]) for name, rule in rules.items()}
    return ArchFeatures(**ok)


def feature_sources() -> dict[str, str]:
    return {name: rule["source"] for name, rule in _data()["features"].items()}
