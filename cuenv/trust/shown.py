"""What reaches a terminal, a log or an export from a shared file or a secret-bearing setting (issue 31 §2, §5). Pure.

Two functions, each the one home of its rule:

- ``terminal_safe(text)``: a string from a shared file (a lock's ``recipe.name`` or
  ``contract.label``, an archive's recipe name, a file name) with every control character written
  as a visible escape (``\\x1b``, ``\\n``, ``\\u2028``), so it cannot set the window title, clear the
  screen, write the clipboard (OSC 52) or forge a second line of output;
- ``redact(text)``: every URL credential (``https://user:token@host``) and every ``user:token``
  part of a URL inside a longer text replaced by ``***``, so a mirror or index URL with a token
  never reaches a message, a log line, a JSON document or an export.
"""

from __future__ import annotations

import re

TYPE_CHECKING = False  # no `typing` at run time: the start-up path does without it (issue 29)
if TYPE_CHECKING:
    from typing import Any, Final

# C0, DEL, C1, and the Unicode line and paragraph separators, bidi overrides and isolates.
_CONTROL: Final = re.compile("[\x00-\x1f\x7f-\x9f\u2028\u2029\u202a-\u202e\u2066-\u2069]")
_NAMED: Final = {"\n": "\\n", "\r": "\\r", "\t": "\\t"}
REDACTED: Final = "***"


def _escape(match: re.Match[str]) -> str:
    ch = match.group(0)
    if ch in _NAMED:
        return _NAMED[ch]
    code = ord(ch)
    return f"\\x{code:02x}" if code < 0x100 else f"\\u{code:04x}"


def terminal_safe(text: object) -> str:
    """``text`` (any value, as ``str``) with each control character escaped: one printable line."""
    s = text if isinstance(text, str) else str(text)
    return _CONTROL.sub(_escape, s)


# scheme://userinfo@host  -> scheme://***@host. Userinfo ends at the last '@' before the host's '/', '?', '#'.
_URL_USERINFO: Final = re.compile(r"(?P<scheme>[A-Za-z][A-Za-z0-9+.-]*://)(?P<userinfo>[^/?#@\s]*(?:@[^/?#@\s]*)*)@")


# ssh's conventional user (git+ssh://git@github.com/...) is no secret; any other user or password is.
_PUBLIC_USER: Final = re.compile(r"git")


def redact(text: object) -> str:
    """``text`` with the credentials of every URL in it replaced by ``***`` (scheme, host and path kept)."""
    s = text if isinstance(text, str) else str(text)
    if "@" not in s:
        return s
    return _URL_USERINFO.sub(lambda m: m.group(0) if _PUBLIC_USER.fullmatch(m.group("userinfo")) else
                             f"{m.group('scheme')}{REDACTED}@", s)


def strip_credentials(text: object) -> str:
    """``text`` with the user and password of every URL in it removed (for files cuenv writes: an export
    names the index, and the credentials are passed at build time)."""
    s = text if isinstance(text, str) else str(text)
    if "@" not in s:
        return s
    return _URL_USERINFO.sub(lambda m: m.group(0) if _PUBLIC_USER.fullmatch(m.group("userinfo")) else m.group("scheme"), s)


# Output for a terminal keeps its line breaks and tabs; every other control character is escaped.
_CONTROL_IN_OUTPUT: Final = re.compile("[\x00-\x08\x0b-\x1f\x7f-\x9f\u2028\u2029\u202a-\u202e\u2066-\u2069]")


def output(text: object) -> str:
    """What cuenv's command line prints (messages, tables, logs): credentials redacted, and every control
    character but line breaks and tabs escaped (a shared file's name cannot retitle or clear the terminal)."""
    return _CONTROL_IN_OUTPUT.sub(_escape, redact(text))


def shown(text: object) -> str:
    """A string for a terminal from a shared file or a setting: credentials redacted, controls escaped."""
    return terminal_safe(redact(text))


def redact_data(data: object) -> Any:
    """A JSON-shaped document with every string redacted (for ``--json`` output and ``config show``)."""
    if isinstance(data, str):
        return redact(data)
    if isinstance(data, dict):
        return {k: redact_data(v) for k, v in data.items()}
    if isinstance(data, (list, tuple)):
        return [redact_data(v) for v in data]
    return data
