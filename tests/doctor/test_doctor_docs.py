"""Doctor's docs stay in step with the code: every code has a section, every message a table row."""

from __future__ import annotations

import re
from pathlib import Path

from cuenv.doctor import checks, signatures

DOCS = Path(__file__).resolve().parents[2] / "docs"


def test_every_doctor_code_is_explained():
    text = (DOCS / "reference" / "findings-doctor.md").read_text(encoding="utf-8")
    sections = set(re.findall(r"^## `([a-z0-9-]+)`$", text, re.MULTILINE))
    assert set(checks.CODES) <= sections


def test_every_recognised_message_maps_to_a_code_in_the_troubleshooting_table():
    text = (DOCS / "guides" / "troubleshooting.md").read_text(encoding="utf-8")
    rows = re.findall(r"^\| `(.+?)`.*?\| `([a-z0-9-]+)` \|", text, re.MULTILINE)
    assert {code for _, code in rows} >= {s.code for s in signatures.SIGNATURES}
    for message, code in rows:  # each documented message is recognised, with the documented code
        sample = message.replace("...", "").replace("\\|", "|")
        hits = signatures.scan([sample])
        assert hits and hits[0].code == code, message
