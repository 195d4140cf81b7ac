"""cuenv's default folders: the XDG spec read in cuenv.config equals platformdirs' answer (the ground truth)."""

from __future__ import annotations

import platformdirs
import pytest

from cuenv import config


@pytest.mark.parametrize("xdg", [None, "", "/x/data", "relative/dir", "/trailing/"])
@pytest.mark.parametrize("home", ["/home/u", "/", "/home/u/", "relative", None])
@pytest.mark.parametrize("kind", ["data", "cache", "config"])
def test_default_folders_are_platformdirs(kind, home, xdg, monkeypatch):
    var = config._XDG[kind][0]
    for name, value in ((var, xdg), ("HOME", home)):
        if value is None:
            monkeypatch.delenv(name, raising=False)
        else:
            monkeypatch.setenv(name, value)
    try:
        expected = str(getattr(platformdirs, f"user_{kind}_dir")("cuenv"))
    except RuntimeError:  # no home platformdirs could resolve: cuenv asks it too, and gets the same error
        with pytest.raises(RuntimeError):
            config._user_dir(kind)
        return
    assert str(config._user_dir(kind)) == expected
