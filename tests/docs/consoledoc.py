"""Read the commands shown in the docs, run them in a real bash, compare with what the page shows.

The convention, for every page under docs/:

* A fenced ```` ```console ```` block holds commands and their output. A line starting with `$ ` is a
  command; a command ending in `\\` continues on the next line; a here-document (`<<'EOF'`) runs up
  to its terminator. Every other line is output the command printed.
* Each shown output line must appear in what the command printed (stdout and stderr together), in
  order; runs of spaces compare equal, and `...` stands for any text (a line of only `...` is
  skipped). A command must exit 0, unless the next command is `echo $?`, whose shown output is the
  expected exit status.
* All blocks of a page run in order in one bash session (an environment created in the first block
  is there in the next), with HOME, cuenv's home and config in a fresh folder and the page's folder
  as the working directory.
* HTML comments right before a block (blank lines between are fine) qualify it:
  `<!-- needs: gpu -->` (runs only where a GPU and driver are detected), `<!-- needs: network -->`
  (PyPI; the page's test carries pytest's `network` marker), `<!-- needs: slow -->` (only with
  `--run-slow`), `<!-- needs: internet -->` (hosts other than PyPI, such as conda channels or
  download.pytorch.org; only with CUENV_DOCS_INTERNET=1), and `<!-- test-setup: CODE -->` (bash run
  before the block, not shown on the page). `<!-- test-page-setup: CODE -->` anywhere runs once
  before the page's first block. Setup code sees $REPO_DIR and $DOCS_DIR.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from pathlib import Path

NEEDS = frozenset({"gpu", "network", "slow", "internet"})
_FENCE = re.compile(r"^(?P<indent>[ \t]*)```(?P<lang>[\w-]*)[^\n]*$")
_COMMENT = re.compile(r"^\s*<!--\s*(?P<key>needs|test-setup|test-page-setup):\s*(?P<value>.*?)\s*-->\s*$")
_HEREDOC = re.compile(r"<<-?\s*(['\"]?)(?P<word>\w+)\1")


@dataclass(frozen=True)
class Command:
    text: str  # the command as the shell reads it (continuations and here-documents included)
    output: tuple[str, ...]  # the lines the page shows after it
    line: int  # 1-based line of the `$ ` in the page


@dataclass(frozen=True)
class Block:
    page: Path
    line: int
    commands: tuple[Command, ...]
    needs: frozenset[str] = frozenset()
    setup: str = ""


@dataclass(frozen=True)
class Page:
    path: Path
    blocks: tuple[Block, ...]
    setup: str = ""
    needs: frozenset[str] = field(default_factory=frozenset)  # the union over its blocks


def parse_commands(lines: list[str], first_line: int) -> tuple[Command, ...]:
    commands: list[Command] = []
    i = 0
    while i < len(lines):
        if not lines[i].startswith("$ "):
            i += 1  # output before any command: nothing to compare it with
            continue
        start = i
        text = [lines[i][2:]]
        i += 1
        while text[-1].endswith("\\") and i < len(lines):
            text.append(lines[i])
            i += 1
        heredoc = _HEREDOC.search(text[0])
        if heredoc:
            while i < len(lines):
                text.append(lines[i])
                i += 1
                if text[-1].strip() == heredoc.group("word"):
                    break
        output = []
        while i < len(lines) and not lines[i].startswith("$ "):
            output.append(lines[i])
            i += 1
        commands.append(Command("\n".join(text), tuple(output), first_line + start))
    return tuple(commands)


def parse_page(path: Path) -> Page:
    lines = path.read_text(encoding="utf-8").splitlines()
    blocks: list[Block] = []
    page_setup: list[str] = []
    pending_needs: set[str] = set()
    pending_setup: list[str] = []
    i = 0
    while i < len(lines):
        comment = _COMMENT.match(lines[i])
        fence = _FENCE.match(lines[i])
        if comment:
            key, value = comment.group("key"), comment.group("value")
            if key == "needs":
                words = set(value.replace(",", " ").split())
                unknown = words - NEEDS
                if unknown:
                    raise ValueError(f"{path}:{i + 1}: unknown needs {sorted(unknown)}; known: {sorted(NEEDS)}")
                pending_needs |= words
            elif key == "test-setup":
                pending_setup.append(value)
            else:
                page_setup.append(value)
            i += 1
        elif fence:
            indent, lang = fence.group("indent"), fence.group("lang")
            body: list[str] = []
            i += 1
            while i < len(lines) and not lines[i].strip().startswith("```"):
                body.append(lines[i][len(indent):] if lines[i].startswith(indent) else lines[i].lstrip())
                i += 1
            start = i - len(body) + 1  # 1-based line of the block's first body line
            if lang == "console":
                blocks.append(Block(path, start - 1, parse_commands(body, start), frozenset(pending_needs),
                                    "\n".join(pending_setup)))
            pending_needs, pending_setup = set(), []
            i += 1
        else:
            if lines[i].strip():
                pending_needs, pending_setup = set(), []  # qualifiers bind to the very next block only
            i += 1
    needs = frozenset().union(*(b.needs for b in blocks)) if blocks else frozenset()
    return Page(path, tuple(blocks), "\n".join(page_setup), needs)


def _pattern(shown: str) -> re.Pattern[str]:
    parts = [re.escape(" ".join(p.split())) for p in shown.split("...")]
    return re.compile("^" + ".*".join(parts) + "$")


def output_mismatch(shown: tuple[str, ...], actual: str) -> str | None:
    """None when every shown line appears in ``actual`` in order; else the first line that does not."""
    got = [" ".join(line.split()) for line in actual.splitlines()]
    at = 0
    for line in shown:
        if not line.strip() or line.strip() == "...":
            continue
        pattern = _pattern(line.strip())
        while at < len(got) and not pattern.match(got[at]):
            at += 1
        if at == len(got):
            return line
        at += 1
    return None


def expected_status(commands: tuple[Command, ...], index: int) -> int | None:
    """0, or the status a following `echo $?` shows (None: that echo shows no number)."""
    if index + 1 < len(commands) and commands[index + 1].text.strip() == "echo $?":
        shown = [o.strip() for o in commands[index + 1].output if o.strip()]
        return int(shown[0]) if shown and shown[0].isdigit() else None
    return 0


def script(page: Page, blocks: list[Block], out_dir: Path) -> str:
    """One bash script for the page: each command's output and status land in out_dir/N.out, N.rc."""
    parts = ["exec </dev/null", page.setup]
    n = 0
    for block in blocks:
        parts.append(block.setup)
        for command in block.commands:
            # `{ ...; }` runs in this shell, so `cuenv use` (a shell function) changes it as on a terminal.
            parts.append(f"{{ {command.text}\n}} >{out_dir}/{n}.out 2>&1\n"
                         f"__doc_rc=$?; echo $__doc_rc >{out_dir}/{n}.rc; (exit $__doc_rc)")
            n += 1
    return "\n".join(p for p in parts if p) + "\n"
