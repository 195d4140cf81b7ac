"""`cuenv doctor`: the acceptance checklist as pure checks over gathered facts (issue 8).

    facts = gather.gather(environ, home=...)        # this machine (I/O, cuenv.doctor.gather)
    facts = report.parse(text)                      # or a pasted report (pure, cuenv.doctor.report)
    checks = diagnose(facts)                        # list[Check]; prints nothing
    diagnosis(facts)                                # both, as one typed Diagnosis (`cuenv doctor`, the TUI)
    diagnosis(facts).to_json()                      # the --json document

Doctor's own finding codes are listed in ``cuenv.doctor.checks.CODES``.
"""

from __future__ import annotations

from typing import Final

from cuenv.doctor.model import Check, Diagnosis, Facts

# Causes that explain the rest: shown first, under the driver check, wherever a check found them.
PRIMARY: Final = ("no-driver", "driver-library-mismatch", "driver-too-old")


def diagnose(facts: Facts) -> list[Check]:
    """Run every check that has facts to work on, in the checklist's order, primary causes first."""
    from cuenv.doctor.checks import CHECKS

    return primary_first([c for c in (check(facts) for check in CHECKS) if c is not None])


def primary_first(checks: list[Check]) -> list[Check]:
    """Move a driver-level cause found by another check (torch's "driver too old", a framework's
    CUDA newer than the driver) to the top of the driver check, so it is read before its effects."""
    from cuenv.doctor.model import make_check

    driver = next((c for c in checks if c.name == "driver"), None)
    have = {f.code for f in driver.findings} if driver else set()
    moved = [f for c in checks if c.name != "driver" for f in c.findings if f.code in PRIMARY and f.code not in have]
    if not moved:
        return checks
    moved = sorted(dict.fromkeys(moved), key=lambda f: PRIMARY.index(f.code))
    out = []
    for c in checks:
        rest = [f for f in c.findings if f not in moved]
        if c.name == "errors" and not rest:
            continue  # its only message moved up
        if len(rest) != len(c.findings) and c.name != "driver":
            c = make_check(c.name, c.detail, rest)
        out.append(c)
    new_driver = make_check("driver", driver.detail if driver else (), [*moved, *(driver.findings if driver else ())])
    if driver is None:
        return [new_driver, *out]
    return [new_driver if c.name == "driver" else c for c in out]


def ok(checks: list[Check]) -> bool:
    return all(c.status != "error" for c in checks)


def diagnosis(facts: Facts) -> Diagnosis:
    """Every check run over ``facts``, with where they came from: what `cuenv doctor` and the TUI show."""
    return Diagnosis(origin=facts.origin, environment=facts.env.name if facts.env is not None else None,
                     missing=tuple(facts.missing) if facts.origin != "this machine" else None,
                     checks=tuple(diagnose(facts)))


__all__ = ["Check", "Diagnosis", "Facts", "diagnose", "diagnosis", "ok"]
