"""The docs-command convention itself (tests/docs/consoledoc.py): parsing and comparing."""

from __future__ import annotations

from pathlib import Path

import pytest

from . import consoledoc

PAGE = """\
# Title

<!-- test-page-setup: export A=1 -->

<!-- needs: network -->
```console
$ cuenv create x \\
    --engine venv
Created 'x' (...)
$ cat > f.yaml <<'EOF'
$ not a command: inside the here-document
EOF
$ false
$ echo $?
1
```

Some text.

=== "tab"

    <!-- needs: gpu -->
    ```console
    $ cuenv test x
    ```

```bash
cuenv use x   # not a console block: not run
```

<!-- needs: slow -->
text between the comment and the block unbinds it

```console
$ cuenv list
```
"""


def test_parse_page(tmp_path: Path) -> None:
    path = tmp_path / "p.md"
    path.write_text(PAGE)
    page = consoledoc.parse_page(path)
    assert page.setup == "export A=1"
    assert [b.needs for b in page.blocks] == [frozenset({"network"}), frozenset({"gpu"}), frozenset()]
    first = page.blocks[0].commands
    assert [c.text for c in first] == ["cuenv create x \\\n    --engine venv",
                                       "cat > f.yaml <<'EOF'\n$ not a command: inside the here-document\nEOF",
                                       "false", "echo $?"]
    assert first[0].output == ("Created 'x' (...)",) and first[0].line == 7
    assert [c.text for c in page.blocks[1].commands] == ["cuenv test x"]
    assert consoledoc.expected_status(first, 0) == 0
    assert consoledoc.expected_status(first, 2) == 1


def test_unknown_needs_is_an_error(tmp_path: Path) -> None:
    path = tmp_path / "p.md"
    path.write_text("<!-- needs: gpus -->\n```console\n$ true\n```\n")
    with pytest.raises(ValueError, match="unknown needs"):
        consoledoc.parse_page(path)


@pytest.mark.parametrize(("shown", "actual", "ok"), [
    (("a", "c"), "a\nb\nc\n", True),
    (("c", "a"), "a\nb\nc\n", False),  # order counts
    (("x ... z",), "x  yy   z\n", True),  # ... is any text; runs of spaces are equal
    (("...", ""), "", True),
    (("missing",), "present\n", False),
    (("  indented   line",), "indented line", True),
])
def test_output_matching(shown: tuple[str, ...], actual: str, ok: bool) -> None:
    assert (consoledoc.output_mismatch(shown, actual) is None) is ok
