"""Real projects for suites: a project's source as a package registry publishes it, pinned by version and sha256
like the weights, unpacked once under the models cache and copied for every task.

Three registries this machine reaches: the Python package index (a source distribution, found through the
index's simple API, `$PIP_INDEX_URL` or pypi.org), the npm registry (the package's tarball,
`$NPM_CONFIG_REGISTRY` or registry.npmjs.org) and Debian's archive (a package of Go or Rust source, from the
pool of `$DEBIAN_MIRROR` or deb.debian.org). The bytes are downloaded by httpx, never by a tool that would
run the project's code (pip prepares an sdist's metadata by running its build backend). The archive's sha256
must be the pinned one or nothing is unpacked; members are unpacked with tarfile's `data` filter (no absolute
paths, no `..`, no links that leave the tree, no devices); the project's folder is the archive's single top
folder, or the folder the pin names inside it (a Debian package's `usr/share/gocode/src/...`). After the
first fetch a run needs no network.
"""

from __future__ import annotations

import hashlib
import io
import os
import re
import shutil
import tarfile
import tempfile
import zipfile
from dataclasses import dataclass
from html.parser import HTMLParser
from pathlib import Path
from typing import Literal
from urllib.parse import urljoin

import httpx

from models.errors import FetchFailed, IntegrityError
from models.weights import cache_root, exclusive

Registry = Literal["pypi", "npm", "debian"]
MOST_ARCHIVE_BYTES = 64 << 20
TIMEOUT = httpx.Timeout(60.0, connect=15.0)
SIMPLE_JSON = "application/vnd.pypi.simple.v1+json"


@dataclass(frozen=True)
class Archive:
    """One pinned source archive: where it comes from, which version, the sha256 its bytes must have."""

    registry: Registry
    name: str  # the package's name on its registry (Debian: the binary package)
    version: str
    sha256: str
    path: str = ""  # Debian: the file's path in the pool
    root: str = ""  # the project's folder inside the archive ("": its single top folder)

    @property
    def key(self) -> str:
        return f"{self.registry}-{self.name}-{self.version}".replace("/", "_")


def sources_root() -> Path:
    return cache_root() / "sources"


def source_tree(package: str, version: str, sha256: str) -> Path:
    """The unpacked tree of a source distribution from the Python package index."""
    return tree(Archive("pypi", package, version, sha256))


def tree(archive: Archive) -> Path:
    """The unpacked project of a pinned archive, fetched and checked the first time, then found in the cache."""
    root = sources_root()
    folder, verified = root / archive.key, root / f"{archive.key}.verified"
    if verified.exists() and folder.is_dir():
        return folder
    root.mkdir(parents=True, exist_ok=True)
    with exclusive(folder), tempfile.TemporaryDirectory(dir=root) as scratch:
        if verified.exists() and folder.is_dir():
            return folder
        data = download(location(archive), f"{archive.name} {archive.version}")
        actual = hashlib.sha256(data).hexdigest()
        if actual != archive.sha256:
            raise IntegrityError(
                f"{archive.name} {archive.version} has sha256 {actual}; the suite pins {archive.sha256}"
            )
        unpacked = Path(scratch) / "tree"
        unpack_bytes(data, archive, unpacked)
        project = project_folder(unpacked, archive.root)
        shutil.rmtree(folder, ignore_errors=True)
        project.rename(folder)
        verified.write_text(archive.sha256)
    return folder


def location(archive: Archive) -> str:
    """Where the registry serves the archive."""
    if archive.registry == "npm":
        registry = os.environ.get("NPM_CONFIG_REGISTRY") or "https://registry.npmjs.org"
        return f"{registry.rstrip('/')}/{archive.name}/-/{archive.name.rsplit('/', 1)[-1]}-{archive.version}.tgz"
    if archive.registry == "debian":
        return f"{(os.environ.get('DEBIAN_MIRROR') or 'http://deb.debian.org/debian').rstrip('/')}/{archive.path}"
    return pypi_file(archive)


def pypi_file(archive: Archive) -> str:
    """The address of the index's file for `name==version` whose sha256 is the pinned one (PEP 691 or 503)."""
    index = (os.environ.get("PIP_INDEX_URL") or "https://pypi.org/simple").rstrip("/")
    page = f"{index}/{re.sub(r'[-_.]+', '-', archive.name).lower()}/"
    try:
        answer = httpx.get(page, headers={"Accept": f"{SIMPLE_JSON}, text/html;q=0.1"}, timeout=TIMEOUT,
                           follow_redirects=True)  # fmt: skip
        answer.raise_for_status()
    except httpx.HTTPError as exc:
        raise FetchFailed(f"cannot list {archive.name} on {index}: {exc}") from exc
    if answer.headers.get("content-type", "").startswith(SIMPLE_JSON):
        files = [(str(f["url"]), f.get("hashes", {}).get("sha256", "")) for f in answer.json().get("files", [])]
    else:
        links = Links()
        links.feed(answer.text)
        files = [(href.split("#", 1)[0], href.partition("#sha256=")[2]) for href in links.found]
    for url, sha256 in files:
        if sha256 == archive.sha256:
            return urljoin(page, url)
    raise FetchFailed(f"{index} lists no file of {archive.name} with sha256 {archive.sha256}")


class Links(HTMLParser):
    """The links of a PEP 503 page."""

    def __init__(self) -> None:
        super().__init__()
        self.found: list[str] = []

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        href = dict(attrs).get("href")
        if tag == "a" and href:
            self.found.append(href)


def download(url: str, what: str) -> bytes:
    """The bytes at `url`, at most MOST_ARCHIVE_BYTES."""
    try:
        with httpx.stream("GET", url, timeout=TIMEOUT, follow_redirects=True) as answer:
            answer.raise_for_status()
            chunks, size = [], 0
            for chunk in answer.iter_bytes():
                size += len(chunk)
                if size > MOST_ARCHIVE_BYTES:
                    raise FetchFailed(f"{what}: {url} is larger than {MOST_ARCHIVE_BYTES >> 20} MB")
                chunks.append(chunk)
    except httpx.HTTPError as exc:
        raise FetchFailed(f"cannot fetch {what} from {url}: {exc}") from exc
    return b"".join(chunks)


def unpack_bytes(data: bytes, archive: Archive, into: Path) -> None:
    """Unpack an archive of any of the registries' kinds: a Debian package's data, a tar or a zip."""
    if archive.registry == "debian":
        payload = deb_data(data)
        with tarfile.open(fileobj=io.BytesIO(payload), mode="r:*") as packed:
            into.mkdir()
            packed.extractall(into, filter="data")
        return
    with tempfile.NamedTemporaryFile(suffix=".zip" if data[:2] == b"PK" else ".tar.gz") as handle:
        handle.write(data)
        handle.flush()
        unpack(Path(handle.name), into)


def deb_data(data: bytes) -> bytes:
    """The bytes of a Debian package's data archive (a .deb is an `ar` archive of three members)."""
    if not data.startswith(b"!<arch>\n"):
        raise IntegrityError("not a Debian package (no ar header)")
    at = 8
    while at + 60 <= len(data):
        header = data[at : at + 60]
        name, size = header[:16].decode("ascii", "replace").strip().rstrip("/"), int(header[48:58].decode() or 0)
        body = data[at + 60 : at + 60 + size]
        if name.startswith("data.tar.") and name.rsplit(".", 1)[-1] in ("xz", "gz", "bz2"):
            return body
        at += 60 + size + (size % 2)
    raise IntegrityError("the Debian package holds no data archive this Python can read (xz, gz or bz2)")


def project_folder(unpacked: Path, root: str) -> Path:
    """The project inside an unpacked archive: the folder `root` names, else its single top folder."""
    if root:
        folder = (unpacked / root).resolve()
        if not folder.is_relative_to(unpacked.resolve()) or not folder.is_dir():
            raise IntegrityError(f"the archive has no folder {root}")
        return folder
    tops = list(unpacked.iterdir())
    return tops[0] if len(tops) == 1 and tops[0].is_dir() else unpacked


def unpack(archive: Path, into: Path) -> None:
    into.mkdir()
    if archive.name.endswith(".zip"):
        with zipfile.ZipFile(archive) as packed:
            for member in packed.namelist():
                target = (into / member).resolve()
                if not target.is_relative_to(into.resolve()):
                    raise IntegrityError(f"{archive.name} holds {member}, which would leave the folder")
            packed.extractall(into)
        return
    with tarfile.open(archive) as packed:
        packed.extractall(into, filter="data")
