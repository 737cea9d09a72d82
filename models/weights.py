"""Finding a model's GGUF and trusting it: a local path, a packaged file, the Hub at a pinned revision, split wheels.

Whatever the source, the bytes are used only after their size and sha256 match the registry entry; a
verified file is stamped (size, mtime, inode) so later starts skip the full hash. Third-party errors
(huggingface-hub, pip, zipfile, the OS) are translated here, once, into the models package's errors.
"""

from __future__ import annotations

import fcntl
import hashlib
import importlib.util
import json
import os
import socket
import subprocess
import sys
import tempfile
import zipfile
from collections.abc import Iterator
from contextlib import contextmanager, suppress
from pathlib import Path
from typing import IO, Any

from tqdm import tqdm

from models.errors import FetchFailed, IntegrityError, ModelUnavailable
from models.registry import Artifact, HubFile, ModelSpec, PackagedFile, SplitWheels, WheelPart

HUB_HOST = "huggingface.co"
CHUNK = 1 << 20
PIP_TIMEOUT_S = 1800


def offline() -> bool:
    return os.environ.get("HF_HUB_OFFLINE", "").lower() in ("1", "true", "yes", "on")


def cache_root() -> Path:
    """Where assembled model files and verification stamps live ($MODELS_CACHE_DIR, else the XDG cache)."""
    if os.environ.get("MODELS_CACHE_DIR"):
        return Path(os.environ["MODELS_CACHE_DIR"])
    base = os.environ.get("XDG_CACHE_HOME") or str(Path.home() / ".cache")
    return Path(base) / "local-agent-stack" / "models"


def hub_cache_dir() -> str | None:
    """HF_HUB_CACHE read now, not when huggingface_hub was first imported; None means its own default."""
    return os.environ.get("HF_HUB_CACHE") or None


# --- integrity ---------------------------------------------------------------------------------------------
def stamp_path(path: Path) -> Path:
    key = hashlib.sha256(str(path.resolve()).encode()).hexdigest()[:32]
    return cache_root() / "verified" / f"{key}.json"


def identity(path: Path) -> dict[str, int]:
    info = path.stat()
    return {"size": info.st_size, "mtime_ns": info.st_mtime_ns, "inode": info.st_ino, "device": info.st_dev}


def hash_file(path: Path, label: str | None = None) -> str:
    digest = hashlib.sha256()
    with path.open("rb") as handle, progress(path.stat().st_size, label) as bar:
        while chunk := handle.read(CHUNK):
            digest.update(chunk)
            bar.update(len(chunk))
    return digest.hexdigest()


def file_sha256(path: Path, label: str | None = None) -> str:
    """The file's sha256, from its stamp when the file is unchanged since it was hashed, else computed and stamped."""
    stamp, now = stamp_path(path), identity(path)
    with suppress(OSError, ValueError, KeyError, TypeError):
        saved = json.loads(stamp.read_text())
        if saved["identity"] == now and isinstance(saved["sha256"], str):
            return str(saved["sha256"])
    digest = hash_file(path, label)
    with suppress(OSError):  # a read-only cache only costs the next start a hash
        stamp.parent.mkdir(parents=True, exist_ok=True)
        write_atomic_text(stamp, json.dumps({"path": str(path.resolve()), "identity": now, "sha256": digest}))
    return digest


def verify(path: Path, artifact: Artifact, where: str) -> Path:
    """`path` if its size and sha256 are the published ones; IntegrityError naming both hashes otherwise."""
    size = path.stat().st_size
    if size != artifact.size:
        raise IntegrityError(
            f"{path} ({where}) is {size:,} bytes; {artifact.filename} is published as {artifact.size:,} bytes. "
            "Delete it to fetch it again."
        )
    actual = file_sha256(path, f"checking {artifact.filename}")
    if actual != artifact.sha256:
        raise IntegrityError(
            f"{path} ({where}) has sha256 {actual}; {artifact.filename} is published with sha256 {artifact.sha256}. "
            "Delete it to fetch it again."
        )
    return path


def write_atomic_text(path: Path, text: str) -> None:
    fd, temp = tempfile.mkstemp(dir=path.parent, prefix=f".{path.name}.", suffix=".tmp")
    with os.fdopen(fd, "w", encoding="utf-8") as handle:
        handle.write(text)
    os.replace(temp, path)


def progress(total: int, label: str | None) -> Any:
    """A byte progress bar on stderr (tqdm), or nothing when there is no label or stderr is not a terminal."""
    return tqdm(
        total=total,
        unit="B",
        unit_scale=True,
        desc=label,
        disable=label is None or not sys.stderr.isatty(),
        leave=False,
    )


# --- sources -------------------------------------------------------------------------------------------------
def packaged(spec: ModelSpec, source: PackagedFile) -> Path:
    found = importlib.util.find_spec(source.package)  # locates without importing (its __init__ may pull heavy deps)
    if found is None or not found.submodule_search_locations:
        raise ModelUnavailable(
            f"the package {source.pip_name} is not installed: pip install --no-deps {source.pip_name}"
        )
    path = Path(next(iter(found.submodule_search_locations))) / spec.file.filename
    if not path.is_file():
        raise ModelUnavailable(f"{path} is missing from the installed {source.pip_name}; reinstall it")
    return verify(path, spec.file, f"inside {source.pip_name}")


def hub_reachable(timeout: float = 3.0) -> bool:
    """A quick TCP probe, so an unreachable hub fails in seconds, not after a minute of retries.

    Behind a proxy the probe proves nothing, so it is skipped and the download itself decides."""
    if any(os.environ.get(v) for v in ("HTTPS_PROXY", "https_proxy", "HTTP_PROXY", "http_proxy")):
        return True
    try:
        with socket.create_connection((HUB_HOST, 443), timeout=timeout):
            return True
    except OSError:
        return False


def hub_cached(spec: ModelSpec, source: HubFile) -> Path | None:
    """The file from the local Hugging Face cache at the pinned revision, without touching the network."""
    from huggingface_hub import try_to_load_from_cache

    found = try_to_load_from_cache(
        source.repo_id, spec.file.filename, cache_dir=hub_cache_dir(), revision=source.revision
    )
    return Path(found) if isinstance(found, str) else None


def hub_download(spec: ModelSpec, source: HubFile) -> Path:
    from huggingface_hub import hf_hub_download
    from huggingface_hub.errors import HfHubHTTPError, LocalEntryNotFoundError

    where = f"{source.repo_id}/{spec.file.filename}@{source.revision[:12]}"
    advice = (
        f"Connect once and start the server to download it ({spec.file.size / 1e9:.1f} GB), pass --gguf PATH to a "
        "copy, or use qwen2.5-coder-0.5b-instruct, which comes from the package index."
    )
    if offline():
        raise ModelUnavailable(f"{where} is not in the Hugging Face cache and HF_HUB_OFFLINE is set. {advice}")
    if not hub_reachable():
        raise ModelUnavailable(f"{where} is not in the Hugging Face cache and {HUB_HOST} is unreachable. {advice}")
    try:
        path = hf_hub_download(source.repo_id, spec.file.filename, revision=source.revision, cache_dir=hub_cache_dir())
    except (LocalEntryNotFoundError, HfHubHTTPError, OSError) as exc:
        raise FetchFailed(f"cannot download {where}: {exc}. {advice}") from exc
    return Path(str(path))


def hub_file(spec: ModelSpec, source: HubFile, fetch: bool) -> Path:
    found = hub_cached(spec, source)
    if found is None:
        if not fetch:
            raise ModelUnavailable(f"{spec.name} is not in the Hugging Face cache")
        found = hub_download(spec, source)
    return verify(found, spec.file, f"{source.repo_id} at {source.revision[:12]}")


@contextmanager
def exclusive(path: Path) -> Iterator[None]:
    """One process assembles a file at a time; the others wait, then find it in place."""
    fd = os.open(path.with_name(path.name + ".lock"), os.O_RDWR | os.O_CREAT | os.O_CLOEXEC, 0o644)
    try:
        fcntl.flock(fd, fcntl.LOCK_EX)
        yield
    finally:
        os.close(fd)


def pip_download(requirement: str, scratch: Path, what: str, source: bool = False) -> Path:
    """The one file pip fetches for `requirement` (a wheel, or with `source` the sdist), fetched by pip itself
    so the user's index configuration applies."""
    kind = "--no-binary=:all:" if source else "--only-binary=:all:"
    command = [sys.executable, "-m", "pip", "download", "--no-deps", kind, "--quiet"]
    try:
        done = subprocess.run(
            [*command, "--dest", str(scratch), requirement],
            capture_output=True,
            text=True,
            timeout=PIP_TIMEOUT_S,
            check=False,
        )
    except (OSError, subprocess.TimeoutExpired) as exc:
        raise FetchFailed(f"cannot fetch {what} ({requirement}): {exc}") from exc
    found = sorted(p for p in scratch.iterdir() if p.is_file())
    if done.returncode != 0 or len(found) != 1:
        said = [line for line in done.stderr.splitlines() if line.strip() and not line.startswith("WARNING: Location")]
        raise FetchFailed(
            f"cannot fetch {what} ({requirement}): pip exited {done.returncode}: "
            + (" / ".join(said[-3:]) or "nothing was downloaded")
        )
    return found[0]


def copy_part(wheel: Path, part: WheelPart, out: IO[bytes], whole: Any, bar: Any) -> None:
    """Stream the part out of its wheel into `out`, checking its size and sha256 on the way."""
    digest, size = hashlib.sha256(), 0
    try:
        with zipfile.ZipFile(wheel) as archive, archive.open(part.member) as member:
            while chunk := member.read(CHUNK):
                digest.update(chunk)
                whole.update(chunk)
                out.write(chunk)
                size += len(chunk)
                bar.update(len(chunk))
    except KeyError as exc:
        raise IntegrityError(f"part {part.number} ({part.requirement}) has no {part.member}") from exc
    except (zipfile.BadZipFile, OSError) as exc:
        raise IntegrityError(f"part {part.number} ({part.requirement}) is not a readable wheel: {exc}") from exc
    if size != part.size or digest.hexdigest() != part.sha256:
        raise IntegrityError(
            f"part {part.number} ({part.requirement}, {part.member}) has {size:,} bytes with sha256 "
            f"{digest.hexdigest()}; expected {part.size:,} bytes with sha256 {part.sha256}"
        )


def assemble(spec: ModelSpec, source: SplitWheels, final: Path, label: str | None) -> Path:
    """Fetch each part, stream it into `<final>.partial`, check the whole, and only then rename it into place."""
    partial = final.with_name(final.name + ".partial")
    whole = hashlib.sha256()
    try:
        with tempfile.TemporaryDirectory(dir=final.parent, prefix=".wheels-") as scratch, partial.open("wb") as out:
            with progress(spec.file.size, label) as bar:
                for part in source.parts:
                    wheel = pip_download(part.requirement, Path(scratch), f"part {part.number}")
                    copy_part(wheel, part, out, whole, bar)
                    wheel.unlink()  # never a second full copy
            out.flush()
            os.fsync(out.fileno())
        if whole.hexdigest() != spec.file.sha256:
            raise IntegrityError(
                f"the assembled {spec.file.filename} has sha256 {whole.hexdigest()}; expected {spec.file.sha256}"
            )
        os.replace(partial, final)
    finally:
        partial.unlink(missing_ok=True)
    file_sha256(final)  # stamps it: the file was just hashed on the way in, but the stamp needs its final identity
    return final


def split_file(spec: ModelSpec, source: SplitWheels, fetch: bool, label: str | None) -> Path:
    final = cache_root() / spec.file.filename
    if final.is_file():
        return verify(final, spec.file, "in the model cache")
    if not fetch:
        raise ModelUnavailable(f"{spec.name} is not in the model cache ({final})")
    final.parent.mkdir(parents=True, exist_ok=True)
    with exclusive(final):
        if final.is_file():  # another process assembled it while we waited
            return verify(final, spec.file, "in the model cache")
        return assemble(spec, source, final, label)


def locate(spec: ModelSpec, gguf: str | Path | None = None, fetch: bool = True, show_progress: bool = True) -> Path:
    """The GGUF to load: an explicit path, or the registry's file from its source (fetched if `fetch`), verified."""
    if gguf is not None:
        path = Path(gguf).expanduser()
        if not path.is_file():
            raise ModelUnavailable(f"{path} does not exist or is not a file")
        return path
    label = f"fetching {spec.file.filename}" if show_progress else None
    try:
        if isinstance(spec.source, PackagedFile):
            return packaged(spec, spec.source)
        if isinstance(spec.source, HubFile):
            return hub_file(spec, spec.source, fetch)
        return split_file(spec, spec.source, fetch, label)
    except OSError as exc:
        raise ModelUnavailable(f"cannot use {spec.name}: {exc}") from exc


def on_disk(spec: ModelSpec) -> Path | None:
    """The verified file if it is here already, without any network."""
    try:
        return locate(spec, fetch=False, show_progress=False)
    except (ModelUnavailable, IntegrityError):
        return None


def obtainable(spec: ModelSpec) -> bool:
    """On disk, or fetchable now: the Hub when reachable, the package index as pip is configured."""
    if on_disk(spec) is not None:
        return True
    if isinstance(spec.source, HubFile):
        return not offline() and hub_reachable()
    return isinstance(spec.source, SplitWheels)
