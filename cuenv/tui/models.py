"""What the TUI shows, as plain data (STYLE.md §9: models import no Textual).

Rows and details are built from cuenv's own records (store metadata, verdict findings, the
activation plan, recipes); filtering and sorting are pure functions over those rows, so they
are tested without a terminal. Paths under CUENV_HOME are shown as ``$CUENV_HOME/...``: shorter
on an 80-column screen, and the same on every machine.
"""

from __future__ import annotations

import os
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any, Final, Iterable, Mapping, Sequence

from cuenv.cli.table import human_size
from cuenv.envs import folder
from cuenv.knowledge.findings import Finding

if TYPE_CHECKING:  # types only: the first frame imports none of the kernel reader
    from cuenv.binaries.assess import Library
    from cuenv.envs.meta import EnvMeta, SmokeTest

# state -> theme variable (the widgets turn it into colour; light and dark themes both define them)
STATUS_STYLE: Final = {"ok": "$success", "runs": "$success", "warning": "$warning", "error": "$error", "unknown": "$text-muted",
                       "no": "$error", "incomplete": "$error"}
_STATUS_ORDER: Final = {"ok": 0, "runs": 0, "unknown": 1, "warning": 1, "error": 2, "no": 2, "incomplete": 3}

# (key, title) of the environments table, in display order
ENV_COLUMNS: Final = (("name", "Name"), ("recipe", "Recipe"), ("engine", "Engine"), ("cuda", "CUDA"),
                      ("cudnn", "cuDNN"), ("framework", "Framework"), ("size", "Size"), ("status", "Status"))
RECIPE_COLUMNS: Final = (("name", "Recipe"), ("framework", "Framework"), ("cuda", "CUDA"), ("cudnn", "cuDNN"),
                         ("mark", "This machine"))


def _text(value: Any) -> str:
    return "-" if value in (None, "") else str(value)


def _version_key(text: str) -> tuple:
    parts = []
    for piece in text.replace("-", ".").replace(" ", ".").split("."):
        parts.append((0, int(piece), "") if piece.isdigit() else (1, 0, piece))
    return tuple(parts)


def shorten(text: str, home: Path | str) -> str:
    """``text`` with cuenv's home written short (display only): under the user's home folder as ``~/...``
    (the default home is ~/.local/share/cuenv, and a user who never set CUENV_HOME should not meet it,
    issue 30 §4), elsewhere as ``$CUENV_HOME/...`` (a home outside ~ was set on purpose)."""
    root = str(home).rstrip("/")
    if not root:
        return text
    user = os.path.expanduser("~").rstrip("/")
    if user and user != "~" and (root + "/").startswith(user + "/"):
        return text.replace(root + "/", "~" + root[len(user):] + "/")
    return text.replace(root + "/", "$CUENV_HOME/")


# -- machine ------------------------------------------------------------------------------------------------
@dataclass(frozen=True)
class MachineSummary:
    driver: str  # "driver 550.54.14" or "no NVIDIA driver"
    cuda: str  # "CUDA <= 12.4" or ""
    gpus: tuple[str, ...]  # "2x NVIDIA A100-SXM4-80GB (cc 8.0, 80 GiB)"

    @property
    def line(self) -> str:
        head = " | ".join(p for p in (self.driver, self.cuda) if p)
        return head + (" | " + ", ".join(self.gpus) if self.gpus else " | no GPU")


def machine_summary(machine: Any) -> MachineSummary:
    """One line about a cuenv.machine.model.Machine; identical GPUs are grouped."""
    driver = machine.driver
    if driver is None:
        drv, cuda = "no NVIDIA driver", ""
    else:
        drv = f"driver {driver.version}" if driver.version else "driver ?"
        cuda = f"CUDA <= {driver.max_cuda}" if driver.max_cuda else ""
    groups: dict[str, int] = {}
    for gpu in machine.gpus:
        facts = []
        if gpu.compute_capability:
            facts.append(f"cc {gpu.compute_capability}")
        if gpu.memory_mib:
            facts.append(f"{round(gpu.memory_mib / 1024)} GiB")
        label = gpu.name + (f" ({', '.join(facts)})" if facts else "")
        groups[label] = groups.get(label, 0) + 1
    gpus = tuple((f"{n}x " if n > 1 else "") + label for label, n in groups.items())
    return MachineSummary(driver=drv, cuda=cuda, gpus=gpus)


# -- environments ---------------------------------------------------------------------------------------------
@dataclass(frozen=True)
class EnvRow:
    name: str
    recipe: str
    engine: str
    cuda: str
    cudnn: str
    framework: str
    size_bytes: int | None
    status: str  # ok | warning | error | unknown (no GPU here) | incomplete
    reason: str  # the first such finding's code

    @property
    def size(self) -> str:
        return human_size(self.size_bytes)

    @property
    def conda(self) -> bool:
        """A conda prefix (rattler or the conda family): its pip layer is changed apart from its conda packages."""
        from cuenv.engines.names import CONDA_PREFIX_ENGINES

        return self.engine in CONDA_PREFIX_ENGINES

    def cells(self) -> tuple[str, ...]:
        """The row as shown, in ENV_COLUMNS order (status without its colour)."""
        shown = self.reason and self.status != "incomplete"  # the detail pane says why, at length
        status = self.status + (f" ({self.reason})" if shown else "")
        return (self.name, self.recipe, self.engine, self.cuda, self.cudnn, self.framework, self.size, status)


def env_row(meta: EnvMeta | None, name: str, state: str, reason: str) -> EnvRow:
    """One environment's row; ``meta`` None (damaged or missing) shows as dashes."""
    from cuenv.envs import cudatools

    real = cudatools.facts(meta)  # what is installed; the recipe's nominal values only when unknown
    return EnvRow(
        name=name, recipe=meta.recipe.label() if meta else "-", engine=_text(meta.engine if meta else None),
        cuda=real["cuda"], cudnn=real["cudnn"], framework=(meta.framework if meta else None) or "-",
        size_bytes=meta.size_bytes if meta else None, status=state, reason=reason,
    )


def filter_rows(rows: Sequence[Any], text: str) -> list[Any]:
    """Rows whose cells contain every word of ``text`` (case-insensitive, any column)."""
    words = text.lower().split()
    if not words:
        return list(rows)
    return [r for r in rows if all(any(w in c.lower() for c in r.cells()) for w in words)]


def sort_key(row: Any, column: str) -> tuple:
    if column == "size":
        return (row.size_bytes is None, row.size_bytes or 0)
    if column in ("status", "mark"):
        return (_STATUS_ORDER.get(getattr(row, column), 9), row.name)
    value = getattr(row, column)
    if column in ("cuda", "cudnn", "framework"):
        return (value == "-", _version_key(value))
    return (value.lower(),)


def sort_rows(rows: Sequence[Any], column: str | None, reverse: bool = False) -> list[Any]:
    if not column:
        return list(rows)
    return sorted(rows, key=lambda r: sort_key(r, column), reverse=reverse)


def cursor_after(names: Sequence[str], kept: str | None, old_index: int) -> int:
    """Where a table's cursor goes when its rows are replaced: on the same name if it is still
    there, else on the row that took its place (the nearest one), else the first."""
    if kept is not None and kept in names:
        return list(names).index(kept)
    return max(0, min(old_index, len(names) - 1))


# -- one environment ---------------------------------------------------------------------------------------
@dataclass(frozen=True)
class PackageLine:
    name: str
    version: str
    kind: str  # conda | pypi


def packages_from_solution(data: Mapping[str, Any] | None) -> tuple[PackageLine, ...]:
    if not isinstance(data, Mapping):
        return ()
    out = []
    for p in data.get("packages") or ():
        if isinstance(p, Mapping) and p.get("name"):
            out.append(PackageLine(str(p["name"]), str(p.get("version", "?")), str(p.get("kind", "?"))))
    return tuple(sorted(out, key=lambda p: p.name.lower()))


@dataclass(frozen=True)
class ActivationLine:
    var: str
    action: str  # set | unset | prepend
    value: str  # the new value, or the prepended entries joined with ':'
    dropped: tuple[str, ...] = ()  # PATH entries of another CUDA that `use` removes


def activation_lines(old: Mapping[str, str], plan: Any, home: Path | str) -> tuple[ActivationLine, ...]:
    """What `cuenv use` would change in ``old`` (cuenv.activation.plan.apply), variable by variable."""
    from cuenv.activation.plan import apply

    new, _ = apply(old, plan)
    lines = []
    for edit in plan.paths:
        if not edit.prepend and edit.var in new:
            continue
        kept = set(new.get(edit.var, "").split(":"))
        dropped = tuple(e for e in old.get(edit.var, "").split(":") if e and e not in kept)
        lines.append(ActivationLine(edit.var, "prepend", shorten(":".join(edit.prepend), home),
                                    tuple(shorten(d, home) for d in dropped)))
    for name, value in plan.set:
        lines.append(ActivationLine(name, "set", shorten(value, home)))
    for name in plan.unset:
        if name in old:
            lines.append(ActivationLine(name, "unset", ""))
    return tuple(lines)


@dataclass(frozen=True)
class EnvDetail:
    name: str
    path: str
    recipe: str
    engine: str
    python: str
    complete: bool
    packages: tuple[PackageLine, ...]
    activation: tuple[ActivationLine, ...]
    lock_hash: str
    lock_status: str
    findings: tuple[Finding, ...]
    smoke_test: bool
    problem: str = ""  # why a part could not be read (damaged metadata), shown instead of it
    kernels: tuple[Library, ...] = ()  # libraries whose files carry GPU code, judged for this machine (issue 20)
    installed: Mapping[str, str] = field(default_factory=dict)  # cuenv.envs.cudatools.facts: what is really there


def _short_hash(text: str) -> str:
    algo, _, digest = text.partition(":")
    return f"{algo}:{digest[:16]}..." if digest and len(digest) > 16 else (text or "n/a")


_RUN_STYLE: Final = {"native": "$success", "jit": "$warning", "none": "$error"}
_RUN_WORD: Final = {"native": "native", "jit": "PTX JIT", "none": "no kernels"}


def kernel_lines(libraries: Sequence[Library]) -> list[tuple[str, str]]:
    """The kernels section: per library its SASS and PTX, and how it runs on each of this machine's GPUs."""
    if not libraries:
        return []
    out: list[tuple[str, str]] = [("bold", f"Kernels in the files ({len(libraries)} libraries with GPU code)")]
    for lib in libraries:
        ranks = [list(_RUN_STYLE).index(r.status) for r in lib.runs]
        style = list(_RUN_STYLE.values())[max(ranks)] if ranks else ""
        name = lib.path.split("site-packages/", 1)[-1]
        out.append((style, f"  {name}" + (f"  {lib.owner}" if lib.owner else "")))
        runs = "".join(f"; {r.cc}: {_RUN_WORD[r.status]}" for r in lib.runs)
        out.append(("", f"    SASS {' '.join(lib.sass) or '-'}, PTX {' '.join(lib.ptx) or '-'}{runs}"))
    return out


def detail_text(d: EnvDetail) -> list[tuple[str, str]]:
    """The detail pane as (style, text) lines; style is '' or a theme variable / 'bold'."""
    out: list[tuple[str, str]] = [("bold", f"{d.name}  {d.recipe} | {d.engine} | Python {d.python or '-'}"),
                                  ("", d.path)]
    if d.installed:
        out.append(("", f"CUDA {d.installed.get('cuda', '-')} | cuDNN {d.installed.get('cudnn', '-')} | "
                        f"nvcc {d.installed.get('nvcc', '-')}"))
    if d.problem:
        out.append(("$error", d.problem))
    out.append(("bold", "Findings on this machine"))
    if not d.findings:
        out.append(("$success", "  runs here: no problem found"))
    for f in d.findings:
        out.append((STATUS_STYLE.get(f.severity, ""), f"  {f.severity}: {f.message}"))
        if f.fix:
            out.append(("", f"    fix: {f.fix}"))
    out += kernel_lines(d.kernels)
    out.append(("bold", "Lock"))
    out.append(("", f"  solution {_short_hash(d.lock_hash)} ({folder.META_DIR}/{folder.SOLUTION_FILE})"))
    out.append(("", f"  lockfile {d.lock_status}"))
    out.append(("bold", f"Activation (what `cuenv use {d.name}` sets)"))
    for a in d.activation:
        if a.action == "prepend":
            first, *rest = a.value.split(":")
            out.append(("", f"  {a.var} += {first}"))
            out += [("", " " * (len(a.var) + 6) + entry) for entry in rest]
            out += [("$warning", f"    drops {e}") for e in a.dropped]
        elif a.action == "set":
            out.append(("", f"  {a.var}={a.value}"))
        else:
            out.append(("", f"  unset {a.var}"))
    out.append(("bold", f"Packages ({len(d.packages)})"))
    out += [("", f"  {p.name} {p.version} ({p.kind})") for p in d.packages]
    return out


# -- recipes ------------------------------------------------------------------------------------------------
_MARK_WORD: Final = {"error": "no", "warning": "warning"}


@dataclass(frozen=True)
class RecipeRow:
    name: str
    framework: str
    cuda: str
    cudnn: str
    mark: str  # runs | warning | no
    reason: str  # the deciding finding's code
    why: str  # its message
    summary: str
    engines: tuple[str, ...]

    def cells(self) -> tuple[str, ...]:
        return (self.name, self.framework, self.cuda, self.cudnn, self.mark + (f" ({self.reason})" if self.reason else ""))


def recipe_mark(findings: Iterable[Finding]) -> tuple[str, str, str]:
    """(runs | warning | no, code, message) from a recipe's findings on this machine."""
    findings = list(findings)
    for severity in ("error", "warning"):
        hit = next((f for f in findings if f.severity == severity), None)
        if hit is not None:
            return _MARK_WORD[severity], hit.code, hit.message
    return "runs", "", ""


def recipe_row(recipe: Any, findings: Sequence[Finding]) -> RecipeRow:
    stack = recipe.stack()
    from cuenv.knowledge.findings import REASON_WORD

    mark, code, why = recipe_mark(findings)
    code = REASON_WORD.get(code, code)
    fw = recipe.framework
    return RecipeRow(name=recipe.name, framework=f"{fw.name} {fw.version}" if fw else "-", cuda=_text(recipe.cuda),
                     cudnn=_text(stack.cudnn), mark=mark, reason=code, why=why, summary=recipe.summary,
                     engines=tuple(recipe.engines()))


def recipe_detail_text(recipe: Any, findings: Sequence[Finding]) -> list[tuple[str, str]]:
    stack = recipe.stack()
    out: list[tuple[str, str]] = [("bold", f"{recipe.name}: {recipe.summary}")]
    if recipe.framework:
        out.append(("", f"  framework  {recipe.framework.name} {recipe.framework.version}"
                        f"   versions {', '.join(recipe.versions)}"))
    out.append(("", f"  CUDA {stack.cuda or '-'}   cuDNN {stack.cudnn or '-'}   engines {', '.join(recipe.engines()) or '-'}"))
    out.append(("", f"  SASS {' '.join(stack.sass) or '-'}   PTX {' '.join(stack.ptx) or '-'}"))
    out.append(("bold", "On this machine"))
    if not findings:
        out.append(("$success", "  runs here"))
    for f in findings:
        out.append((STATUS_STYLE.get(f.severity, ""), f"  {f.severity}: {f.message}"))
        if f.fix:
            out.append(("", f"    fix: {f.fix}"))
    for note in recipe.notes:
        out.append(("", f"  note: {note}"))
    return out


# -- smoke test ----------------------------------------------------------------------------------------------
def smoke_argv(smoke: SmokeTest | None) -> list[str] | None:
    """The recipe's smoke test as argv (``python -c CODE`` or its command); None when it has none."""
    return smoke.argv() if smoke is not None else None
