"""`cuenv doctor`: the acceptance checklist as pure checks over gathered facts (issue 8).

    facts = gather.gather(environ, home=...)        # this machine (I/O, cuenv.doctor.gather)
    facts = report.parse(text)                      # or a pasted report (pure, cuenv.doctor.report)
    checks = diagnose(facts)                        # list[Check]; prints nothing
    to_json(facts, checks)                          # the --json document

Doctor's own finding codes are listed in ``cuenv.doctor.checks.CODES``.
"""

from __future__ import annotations

from cuenv.doctor.model import Check, Facts


def diagnose(facts: Facts) -> list[Check]:
    """Run every check that has facts to work on, in the checklist's order."""
    from cuenv.doctor.checks import CHECKS

    return [c for c in (check(facts) for check in CHECKS) if c is not None]


def ok(checks: list[Check]) -> bool:
    return all(c.status != "error" for c in checks)


def to_json(facts: Facts, checks: list[Check]) -> dict:
    data = {"ok": ok(checks), "origin": facts.origin, "checks": [c.to_json() for c in checks]}
    if facts.env is not None:
        data["environment"] = facts.env.name
    if facts.origin != "this machine":
        data["missing"] = list(facts.missing)
    return data


__all__ = ["Check", "Facts", "diagnose", "ok", "to_json"]
