"""Real projects for suites: a source archive fetched by pip from the index it is configured with, unpacked only
when its sha256 is the pinned one, and never written outside its folder."""

from __future__ import annotations

import hashlib
import io
import shutil
import tarfile
import zipfile
from pathlib import Path

import pytest

from evals.sources import source_tree, unpack
from models.errors import IntegrityError

BACKEND = """import os
def get_requires_for_build_wheel(config_settings=None):
    return []
def prepare_metadata_for_build_wheel(directory, config_settings=None):
    os.makedirs(os.path.join(directory, "demo-1.0.dist-info"))
    with open(os.path.join(directory, "demo-1.0.dist-info", "METADATA"), "w") as f:
        f.write("Metadata-Version: 2.1\\nName: demo\\nVersion: 1.0\\n")
    return "demo-1.0.dist-info"
"""
PYPROJECT = '[build-system]\nrequires = []\nbuild-backend = "backend"\nbackend-path = ["."]\n'


@pytest.fixture
def index(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """A find-links folder pip uses instead of the network, holding demo-1.0.tar.gz (an in-tree build backend, so
    pip reads its metadata offline); an empty cache. Returns the archive."""
    source = tmp_path / "src" / "demo-1.0"
    (source / "pkg").mkdir(parents=True)
    for name, text in {"pyproject.toml": PYPROJECT, "backend.py": BACKEND, "pkg/core.py": "VERSION = '1.0'\n",
                       "PKG-INFO": "Metadata-Version: 2.1\nName: demo\nVersion: 1.0\n"}.items():  # fmt: skip
        (source / name).write_text(text)
    links = tmp_path / "links"
    links.mkdir()
    with tarfile.open(links / "demo-1.0.tar.gz", "w:gz") as archive:
        archive.add(source, arcname="demo-1.0")
    monkeypatch.setenv("PIP_NO_INDEX", "1")
    monkeypatch.setenv("PIP_FIND_LINKS", str(links))
    monkeypatch.setenv("MODELS_CACHE_DIR", str(tmp_path / "cache"))
    return links / "demo-1.0.tar.gz"


def test_a_pinned_archive_is_fetched_unpacked_without_its_top_folder_and_then_found_offline(index: Path) -> None:
    sha256 = hashlib.sha256(index.read_bytes()).hexdigest()
    tree = source_tree("demo", "1.0", sha256)
    assert (tree / "pkg" / "core.py").read_text() == "VERSION = '1.0'\n"
    shutil.rmtree(index.parent)  # nothing to fetch from any more
    assert source_tree("demo", "1.0", sha256) == tree


def test_an_archive_with_another_sha256_is_refused_naming_both_and_nothing_is_unpacked(index: Path) -> None:
    actual = hashlib.sha256(index.read_bytes()).hexdigest()
    with pytest.raises(IntegrityError, match=f"has sha256 {actual}; the suite pins {'0' * 64}"):
        source_tree("demo", "1.0", "0" * 64)
    sources = index.parent.parent / "cache" / "sources"
    assert not (sources / "demo-1.0").exists() and not (sources / "demo-1.0.verified").exists()


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
