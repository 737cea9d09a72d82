"""Whether a file's first bytes are text, or which kind of binary file they begin."""

from __future__ import annotations

SNIFF_BYTES = 8192
# the kinds of binary file a workspace holds most often, by their first bytes (a short table, kept by hand:
# libmagic is a system library, and naming the kind is all the model needs)
MAGIC: tuple[tuple[int, bytes, str], ...] = (
    (0, b"\x89PNG\r\n\x1a\n", "PNG image"),
    (0, b"\xff\xd8\xff", "JPEG image"),
    (0, b"GIF87a", "GIF image"),
    (0, b"GIF89a", "GIF image"),
    (0, b"%PDF-", "PDF document"),
    (0, b"PK\x03\x04", "ZIP archive (or a format built on one: docx, xlsx, jar, wheel)"),
    (0, b"\x1f\x8b", "gzip-compressed data"),
    (0, b"BZh", "bzip2-compressed data"),
    (0, b"\xfd7zXZ\x00", "xz-compressed data"),
    (0, b"7z\xbc\xaf\x27\x1c", "7-Zip archive"),
    (0, b"\x7fELF", "ELF executable or library"),
    (0, b"SQLite format 3\x00", "SQLite database"),
    (0, b"\x00asm", "WebAssembly module"),
    (0, b"\xca\xfe\xba\xbe", "Java class file or Mach-O binary"),
    (0, b"MZ", "Windows executable"),
    (0, b"GGUF", "GGUF model file"),
    (257, b"ustar", "tar archive"),
)


def binary_kind(head: bytes) -> str | None:
    """What kind of binary file these first bytes begin, or None for text (no NUL byte, and UTF-8 or close)."""
    for offset, magic, kind in MAGIC:
        if head[offset : offset + len(magic)] == magic:
            return kind
    if b"\x00" in head[:SNIFF_BYTES]:
        return "binary data"
    sample = head[:SNIFF_BYTES]
    undecodable = len(sample) - len(sample.decode("utf-8", errors="ignore").encode("utf-8"))
    return "binary data" if sample and undecodable > len(sample) // 10 + 4 else None
