"""Archives of a few text files, as the registries serve them, for the tests of fetching real projects."""

from __future__ import annotations

import io
import tarfile


def tarball(members: dict[str, str], mode: str = "w:gz") -> bytes:
    """A tar archive (gzip by default; `w:xz` for a Debian package's data) of these files and texts."""
    buffer = io.BytesIO()
    with tarfile.open(fileobj=buffer, mode=mode) as archive:  # type: ignore[call-overload]
        for name, text in members.items():
            info = tarfile.TarInfo(name)
            info.size = len(text.encode())
            archive.addfile(info, io.BytesIO(text.encode()))
    return buffer.getvalue()
