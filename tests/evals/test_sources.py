"""Real projects for suites: a source archive fetched from the registry that publishes it (the package index's
simple API, the npm registry, a Debian mirror), unpacked only when its sha256 is the pinned one, never written
outside its folder, and found again offline. The registries here are a real HTTP server on loopback."""

from __future__ import annotations

import hashlib
import io
import tarfile
import zipfile
from collections.abc import Iterator
from pathlib import Path

import pytest
from fastapi import FastAPI, Request, Response

from evals.sources import Archive, deb_data, source_tree, tree, unpack
from models.errors import FetchFailed, IntegrityError
from tests.conftest import AppServer
from tests.evals.archives import tarball


def deb(members: dict[str, str]) -> bytes:
    """A Debian package: an ar archive of debian-binary, control.tar.xz and data.tar.xz."""
    data = tarball(members, "w:xz")
    parts = [("debian-binary", b"2.0\n"), ("control.tar.xz", b"\xfd7zXZ\x00"), ("data.tar.xz", data)]
    out = b"!<arch>\n"
    for name, body in parts:
        out += f"{name:<16}{0:<12}{0:<6}{0:<6}{100644:<8}{len(body):<10}`\n".encode() + body
        out += b"\n" if len(body) % 2 else b""
    return out


SDIST = tarball({"demo-1.0/PKG-INFO": "Name: demo\nVersion: 1.0\n", "demo-1.0/pkg/core.py": "VERSION = '1.0'\n"})
NPM = tarball({"package/package.json": '{"name": "demo", "version": "2.0.0"}', "package/index.js": "exports.a = 1\n"})
DEB = deb({"./usr/share/doc/demo/copyright": "x", "./usr/share/gocode/src/example.com/demo/go.mod": "module x\n"})


def sha(data: bytes) -> str:
    return hashlib.sha256(data).hexdigest()


def registry_app() -> FastAPI:
    app = FastAPI()

    @app.get("/simple/demo/")
    def listing(request: Request) -> Response:
        if "application/vnd.pypi.simple.v1+json" in request.headers.get("accept", ""):
            body = f'{{"files": [{{"url": "../../files/demo-1.0.tar.gz", "hashes": {{"sha256": "{sha(SDIST)}"}}}}]}}'
            return Response(body, media_type="application/vnd.pypi.simple.v1+json")
        return Response(f'<a href="/files/demo-1.0.tar.gz#sha256={sha(SDIST)}">demo-1.0.tar.gz</a>')

    @app.get("/html/demo/")
    def page() -> Response:  # PEP 503: an index that lists its files as links, whatever the client accepts
        return Response(f'<a href="/files/demo-1.0.tar.gz#sha256={sha(SDIST)}">demo-1.0.tar.gz</a>')

    @app.get("/files/demo-1.0.tar.gz")
    def sdist() -> Response:
        return Response(SDIST)

    @app.get("/npm/demo/-/demo-2.0.0.tgz")
    def npm() -> Response:
        return Response(NPM)

    @app.get("/debian/pool/main/d/demo/golang-demo-dev_1.0-1_all.deb")
    def package() -> Response:
        return Response(DEB)

    return app


@pytest.fixture
def registry(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[AppServer]:
    server = AppServer(registry_app())
    monkeypatch.setenv("PIP_INDEX_URL", f"{server.url}/simple")
    monkeypatch.setenv("NPM_CONFIG_REGISTRY", f"{server.url}/npm")
    monkeypatch.setenv("DEBIAN_MIRROR", f"{server.url}/debian")
    monkeypatch.setenv("MODELS_CACHE_DIR", str(tmp_path / "cache"))
    yield server
    if server.running:
        server.stop()


def test_an_sdist_is_found_through_the_index_unpacked_without_its_top_folder_and_then_found_offline(
    registry: AppServer,
) -> None:
    found = source_tree("demo", "1.0", sha(SDIST))
    assert (found / "pkg" / "core.py").read_text() == "VERSION = '1.0'\n"
    registry.stop()  # nothing to fetch from any more
    assert source_tree("demo", "1.0", sha(SDIST)) == found


def test_an_index_that_only_speaks_html_is_read_too(registry: AppServer, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("PIP_INDEX_URL", f"{registry.url}/html/")  # a trailing slash, as pip users write it
    original = Archive("pypi", "demo", "1.0", sha(SDIST))
    assert (tree(original) / "PKG-INFO").exists()


def test_an_npm_tarball_and_a_debian_package_unpack_to_the_project_inside(registry: AppServer) -> None:
    package = tree(Archive("npm", "demo", "2.0.0", sha(NPM)))
    assert sorted(p.name for p in package.iterdir()) == ["index.js", "package.json"]
    module = tree(
        Archive("debian", "golang-demo-dev", "1.0-1", sha(DEB), "pool/main/d/demo/golang-demo-dev_1.0-1_all.deb",
                "usr/share/gocode/src/example.com/demo")
    )  # fmt: skip
    assert [p.name for p in module.iterdir()] == ["go.mod"]


def test_an_archive_with_another_sha256_is_refused_naming_both_and_nothing_is_unpacked(
    registry: AppServer, tmp_path: Path
) -> None:
    wrong = "0" * 64
    with pytest.raises(IntegrityError, match=f"has sha256 {sha(NPM)}; the suite pins {wrong}"):
        tree(Archive("npm", "demo", "2.0.0", wrong))
    sources = tmp_path / "cache" / "sources"
    assert not (sources / "npm-demo-2.0.0").exists() and not (sources / "npm-demo-2.0.0.verified").exists()
    with pytest.raises(FetchFailed, match="lists no file of demo with sha256"):
        source_tree("demo", "1.0", wrong)


def test_a_debian_package_without_the_folder_pinned_or_without_data_is_refused(registry: AppServer) -> None:
    with pytest.raises(IntegrityError, match="has no folder usr/share/cargo"):
        tree(Archive("debian", "golang-demo-dev", "1.0-1", sha(DEB), "pool/main/d/demo/golang-demo-dev_1.0-1_all.deb",
                     "usr/share/cargo/registry/demo-1.0"))  # fmt: skip
    with pytest.raises(IntegrityError, match="not a Debian package"):
        deb_data(b"PK\x03\x04")


def test_a_registry_that_is_not_there_is_a_fetch_failure(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("MODELS_CACHE_DIR", str(tmp_path / "cache"))
    monkeypatch.setenv("NPM_CONFIG_REGISTRY", "http://127.0.0.1:9")
    with pytest.raises(FetchFailed, match=r"cannot fetch demo 2\.0\.0"):
        tree(Archive("npm", "demo", "2.0.0", sha(NPM)))


def test_members_that_would_leave_the_folder_are_refused(tmp_path: Path) -> None:
    zipped = tmp_path / "evil.zip"
    with zipfile.ZipFile(zipped, "w") as archive:
        archive.writestr("../outside.txt", "x")
    with pytest.raises(IntegrityError, match="would leave the folder"):
        unpack(zipped, tmp_path / "z")
    tarred = tmp_path / "evil.tar.gz"
    with tarfile.open(tarred, "w:gz") as archive:
        link = tarfile.TarInfo("top/escape")
        link.type, link.linkname = tarfile.SYMTYPE, "/etc/passwd"
        archive.addfile(link)
        member = tarfile.TarInfo("../outside.txt")
        member.size = 1
        archive.addfile(member, io.BytesIO(b"x"))
    with pytest.raises(tarfile.FilterError):
        unpack(tarred, tmp_path / "t")
    assert not (tmp_path / "outside.txt").exists()
