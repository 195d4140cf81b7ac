"""cuenv.export.push against a real registry (Debian's docker-registry) on 127.0.0.1 (issue 19 §3).

Every push is read back: ``skopeo inspect`` for the digest, ``skopeo copy`` into an OCI layout
for the bytes, compared with what was pushed.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
from pathlib import Path

import pytest
from hypothesis import given
from hypothesis import strategies as st

from cuenv.errors import ToolError, UsageError
from cuenv.export import push as p
from tests.export import registry

needs_skopeo = pytest.mark.skipif(shutil.which("skopeo") is None, reason="skopeo is not installed")


# -- pure ----------------------------------------------------------------------------------------------
@pytest.mark.parametrize(("text", "want"), [
    ("registry.example.com/team/env:1.0", ("registry.example.com", "team/env", "1.0", False)),
    ("docker://127.0.0.1:5000/env", ("127.0.0.1:5000", "env", "latest", True)),
    ("localhost:5000/a/b/c:x_y", ("localhost:5000", "a/b/c", "x_y", True)),
    ("[::1]:5000/env:2", ("[::1]:5000", "env", "2", True)),
])
def test_destinations(text: str, want: tuple[str, str, str, bool]) -> None:
    d = p.parse_destination(text)
    assert (d.host, d.path, d.tag, d.loopback) == want


@pytest.mark.parametrize("bad", ["env:1", "team/env", "Registry.example/Env", "host.example/env:bad tag", "", "a b/c"])
def test_bad_destinations(bad: str) -> None:
    with pytest.raises(UsageError, match="is not a registry destination"):
        p.parse_destination(bad)


@given(st.text(max_size=60))
def test_destination_parser_raises_only_usage_errors(text: str) -> None:
    try:
        d = p.parse_destination(text)
    except UsageError:
        return
    assert p.parse_destination(d.ref) == d


def test_sources(tmp_path: Path) -> None:
    (tmp_path / "img.tar").write_bytes(b"")
    assert p.parse_source(f"oci-archive:{tmp_path / 'img.tar'}") == p.Source("oci-archive", str(tmp_path / "img.tar"))
    assert p.parse_source(f"oci:{tmp_path}:v1") == p.Source("oci", f"{tmp_path}:v1")
    assert p.parse_source("cuenv-myenv:latest") == p.Source("local", "cuenv-myenv:latest")
    with pytest.raises(UsageError, match="does not exist"):
        p.parse_source(f"docker-archive:{tmp_path / 'missing.tar'}")


def test_argv_per_tool(tmp_path: Path) -> None:
    arc = p.Source("oci-archive", "/x/img.tar")
    local = p.Source("local", "cuenv-env")
    remote = p.parse_destination("registry.example.com/team/env:1")
    here = p.parse_destination("127.0.0.1:5000/env:1")
    auth = tmp_path / "auth.json"
    assert p.push_argv("skopeo", "skopeo", arc, remote, authfile=auth) == [
        ["skopeo", "copy", "--dest-authfile", str(auth), "oci-archive:/x/img.tar", "docker://registry.example.com/team/env:1"]]
    assert p.push_argv("skopeo", "skopeo", arc, here) == [
        ["skopeo", "copy", "--dest-tls-verify=false", "oci-archive:/x/img.tar", "docker://127.0.0.1:5000/env:1"]]
    assert p.push_argv("buildah", "buildah", local, remote, insecure=True, global_args=("--storage-driver", "vfs")) == [
        ["buildah", "--storage-driver", "vfs", "push", "--tls-verify=false", "cuenv-env", "docker://registry.example.com/team/env:1"]]
    assert p.push_argv("podman", "podman", arc, remote) == [["podman", "push", "oci-archive:/x/img.tar", "docker://registry.example.com/team/env:1"]]
    assert p.push_argv("docker", "docker", local, remote) == [
        ["docker", "tag", "cuenv-env", "registry.example.com/team/env:1"], ["docker", "push", "registry.example.com/team/env:1"]]
    with pytest.raises(UsageError, match="skopeo pushes archives"):
        p.push_argv("skopeo", "skopeo", local, remote)
    with pytest.raises(UsageError, match="docker pushes images from its own store"):
        p.push_argv("docker", "docker", arc, remote)


def test_failures_are_one_line_with_the_fix() -> None:
    dest = p.parse_destination("registry.example.com/env:1")
    err = p.explain("time=... level=fatal msg=\"...: unauthorized: authentication required\"", dest, "skopeo")
    assert err.message == "registry.example.com refused the push of registry.example.com/env:1: not logged in, or no right to push there."
    assert err.hint == "Log in once: `skopeo login registry.example.com` (the credentials stay in the tool's auth file)."
    assert "--insecure" in p.explain("http: server gave HTTP response to HTTPS client", dest, "skopeo").hint


# -- a real registry ----------------------------------------------------------------------------------------
@pytest.fixture
def image(tmp_path: Path) -> Path:
    return registry.oci_archive(registry.oci_layout(tmp_path / "layout"), tmp_path / "img.tar")


def pull_back(host: str, ref: str, dest: Path, *, authfile: Path | None = None) -> dict:
    argv = ["skopeo", "copy", "--src-tls-verify=false", f"docker://{host}/{ref}", f"oci:{dest}:pulled"]
    if authfile:
        argv[2:2] = ["--src-authfile", str(authfile)]
    subprocess.run(argv, check=True, capture_output=True, text=True, timeout=120)
    index = json.loads((dest / "index.json").read_text())
    manifest = json.loads((dest / "blobs" / "sha256" / index["manifests"][0]["digest"].split(":")[1]).read_text())
    return manifest


@needs_skopeo
def test_push_an_archive_and_pull_it_back(tmp_path: Path, image: Path) -> None:
    with registry.registry(tmp_path / "reg") as host:
        done = p.push(p.parse_source(f"oci-archive:{image}"), p.parse_destination(f"{host}/team/env:1.0"), dict(os.environ))
        assert (done.tool, done.destination) == ("skopeo", f"{host}/team/env:1.0")
        assert done.digest and done.digest.startswith("sha256:")
        back = pull_back(host, "team/env:1.0", tmp_path / "back")
    sent = json.loads((tmp_path / "layout" / "index.json").read_text())["manifests"][0]
    sent_manifest = json.loads((tmp_path / "layout" / "blobs" / "sha256" / sent["digest"].split(":")[1]).read_text())
    assert [layer["digest"] for layer in back["layers"]] == [layer["digest"] for layer in sent_manifest["layers"]]
    assert back["config"]["digest"] == sent_manifest["config"]["digest"]


@needs_skopeo
def test_push_an_oci_layout_folder(tmp_path: Path) -> None:
    layout = registry.oci_layout(tmp_path / "layout", tag="v2")
    with registry.registry(tmp_path / "reg") as host:
        done = p.push(p.parse_source(f"oci:{layout}:v2"), p.parse_destination(f"{host}/env:v2"), dict(os.environ))
        assert done.digest


@needs_skopeo
def test_a_registry_that_is_not_there(tmp_path: Path, image: Path) -> None:
    port = registry.free_port()
    with pytest.raises(ToolError, match=f"The registry 127.0.0.1:{port} cannot be reached"):
        p.push(p.parse_source(f"oci-archive:{image}"), p.parse_destination(f"127.0.0.1:{port}/env:1"), dict(os.environ))


@needs_skopeo
def test_credentials_come_from_the_tools_auth_file_and_are_never_printed(tmp_path: Path, image: Path) -> None:
    import warnings

    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", DeprecationWarning)  # crypt leaves the standard library in 3.13
            import crypt  # bcrypt through libxcrypt: docker-registry reads only bcrypt htpasswd entries
    except ImportError:
        pytest.skip("no crypt module to write a bcrypt htpasswd file")
    secret = "s3cret-Pa55word"
    salt = crypt.mksalt(crypt.METHOD_BLOWFISH)
    hashed = crypt.crypt(secret, salt)
    if not hashed or not hashed.startswith("$2"):
        pytest.skip("this libc's crypt has no bcrypt")
    (tmp_path / "reg").mkdir()
    htpasswd = tmp_path / "reg" / "htpasswd"
    htpasswd.write_text(f"cuenv:{hashed}\n")
    auth = tmp_path / "auth.json"
    env = dict(os.environ, REGISTRY_AUTH_FILE=str(auth))
    with registry.registry(tmp_path / "reg", htpasswd=htpasswd) as host:
        dest = p.parse_destination(f"{host}/private/env:1")
        with pytest.raises(ToolError, match="not logged in") as refused:
            p.push(p.parse_source(f"oci-archive:{image}"), dest, env)
        assert refused.value.hint == f"Log in once: `skopeo login {host}` (the credentials stay in the tool's auth file)."
        subprocess.run(["skopeo", "login", "--tls-verify=false", "--authfile", str(auth), "-u", "cuenv", "--password-stdin", host],
                       input=secret, check=True, capture_output=True, text=True, timeout=60)
        done = p.push(p.parse_source(f"oci-archive:{image}"), dest, env)
        assert done.digest
        assert secret not in json.dumps(done.to_json())
        pull_back(host, "private/env:1", tmp_path / "back", authfile=auth)


@pytest.mark.skipif(shutil.which("buildah") is None or os.geteuid() != 0, reason="needs buildah as root")
def test_a_builders_local_image_is_pushed_by_the_builder(tmp_path: Path, image: Path) -> None:
    store = ("--storage-driver", "vfs", "--root", str(tmp_path / "storage"), "--runroot", str(tmp_path / "run"))
    subprocess.run(["buildah", *store, "pull", "--quiet", f"oci-archive:{image}"], check=True, capture_output=True, timeout=120)
    subprocess.run(["buildah", *store, "tag", next(iter(json.loads(subprocess.run(
        ["buildah", *store, "images", "--json"], check=True, capture_output=True, text=True).stdout)))["id"], "cuenv-env:1"],
        check=True, capture_output=True, timeout=60)
    with registry.registry(tmp_path / "reg") as host:
        done = p.push(p.Source("local", "cuenv-env:1"), p.parse_destination(f"{host}/env:1"), dict(os.environ),
                      tool="buildah", global_args=store)
        assert done.tool == "buildah" and done.digest
        assert pull_back(host, "env:1", tmp_path / "back")["layers"]


# -- the command line -----------------------------------------------------------------------------------
@needs_skopeo
def test_cuenv_image_push(cli, tmp_path: Path, image: Path) -> None:
    with registry.registry(tmp_path / "reg") as host:
        code, out, err = cli("image", "push", f"oci-archive:{image}", f"{host}/team/env:1", "--json")
        assert code == 0, err
        data = json.loads(out)
        assert (data["tool"], data["destination"]) == ("skopeo", f"{host}/team/env:1")
        code, out, err = cli("image", "push", f"oci-archive:{image}", f"{host}/team/env:2")
        assert code == 0 and out.startswith(f"Pushed {host}/team/env:2 with skopeo (sha256:")
        assert f"Pull it: skopeo copy docker://{host}/team/env@sha256:" in out
        assert pull_back(host, "team/env:2", tmp_path / "back")["layers"]


def test_cuenv_image_push_bad_input(cli, tmp_path: Path) -> None:
    code, _, err = cli("image", "push", f"oci-archive:{tmp_path / 'none.tar'}", "127.0.0.1:5000/env:1")
    assert code == 2 and err.splitlines()[0] == f"error: {tmp_path / 'none.tar'} does not exist."
    code, _, err = cli("image", "push", "cuenv-env", "env:1")
    assert code == 2 and err.startswith("error: 'env:1' is not a registry destination.\nhint: ")


@pytest.mark.network
def test_cuenv_image_build_push(venv_env: str, tmp_path: Path) -> None:
    """A real environment's image, built by buildah on the local base image, pushed by buildah."""
    from tests.export.baseimage import BUILDAH_ENV, ensure_base, usable
    from tests.export.exportkit import cuenv

    why = usable() or (None if shutil.which("skopeo") else "skopeo is not installed")
    if why:
        pytest.skip(why)
    base = ensure_base()
    tag = "localhost/cuenv-push-test:1"
    with registry.registry(tmp_path / "reg") as host:
        done = cuenv("image", "build", venv_env, "-t", tag, "--base", base, "--builder", "buildah",
                     "--push", f"{host}/team/{venv_env}:1", "--json", env=dict(BUILDAH_ENV))
        pushed = json.loads(done.stdout)["pushed"]
        assert (pushed["tool"], pushed["destination"]) == ("buildah", f"{host}/team/{venv_env}:1")
        inspected = json.loads(subprocess.run(["skopeo", "inspect", "--tls-verify=false", f"docker://{host}/team/{venv_env}:1"],
                                              check=True, capture_output=True, text=True).stdout)
        assert inspected["Digest"] == pushed["digest"]
        assert inspected["Labels"]["io.cuenv.recipe"] == venv_env
    subprocess.run(["buildah", "rmi", tag], capture_output=True, env={**os.environ, **BUILDAH_ENV}, check=False)
