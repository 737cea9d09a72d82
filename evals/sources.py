"""Real projects for suites: a package's source distribution from the package index, pinned by version and
sha256 like the weights, unpacked once under the models cache and copied for every task.

pip fetches it (the user's index configuration applies); the archive's sha256 must be the pinned one or
nothing is unpacked; members are unpacked with tarfile's `data` filter (no absolute paths, no `..`, no
links that leave the tree, no devices), and the archive's single top folder is dropped.
"""

from __future__ import annotations

import shutil
import tarfile
import tempfile
import zipfile
from pathlib import Path

from models.errors import IntegrityError
from models.weights import cache_root, exclusive, file_sha256, pip_download


def sources_root() -> Path:
    return cache_root() / "sources"


def source_tree(package: str, version: str, sha256: str) -> Path:
    """The unpacked tree of `package==version`, fetched and checked the first time."""
    root = sources_root()
    tree, verified = root / f"{package}-{version}", root / f"{package}-{version}.verified"
    if verified.exists() and tree.is_dir():
        return tree
    root.mkdir(parents=True, exist_ok=True)
    with exclusive(tree), tempfile.TemporaryDirectory(dir=root) as scratch:
        if verified.exists() and tree.is_dir():
            return tree
        archive = pip_download(f"{package}=={version}", Path(scratch), f"the source of {package}", source=True)
        actual = file_sha256(archive)
        if actual != sha256:
            raise IntegrityError(f"{archive.name} has sha256 {actual}; the suite pins {sha256}")
        unpacked = Path(scratch) / "tree"
        unpack(archive, unpacked)
        tops = list(unpacked.iterdir())
        top = tops[0] if len(tops) == 1 and tops[0].is_dir() else unpacked
        shutil.rmtree(tree, ignore_errors=True)
        top.rename(tree)
        verified.write_text(sha256)
    return tree


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
