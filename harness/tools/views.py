"""How a file's bytes are shown to a model: text as text (a window of numbered lines when it is long), a
binary file described by its kind and size, never dumped. What one tool result may hold is sized to the
model's window."""

from __future__ import annotations

from dataclasses import dataclass

SNIFF_BYTES = 8192
MAX_LINE_CHARS = 500  # a longer line is shown cut, saying so
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


def described(path: str, kind: str, size: int) -> str:
    return f"{path} is a binary file ({kind}, {size:,} bytes); it is not shown as text."


def output_chars(window: int | None) -> int:
    """What one tool result may hold: three eighths of the model's window in characters (logs and code take a
    token for every one or two characters of digits, so this stays under about a quarter of the window), from
    2,000 to 20,000 characters; 3,000 when the window is unknown."""
    if not window:
        return 3_000
    return max(2_000, min(20_000, window * 3 // 8))


@dataclass(frozen=True)
class Window:
    """Lines `first` to `last` (1-based) of a text of `total` lines."""

    text: str
    first: int
    last: int
    total: int

    @property
    def whole(self) -> bool:
        return self.first == 1 and self.last == self.total


def lines_of(text: str) -> list[str]:
    lines = text.split("\n")
    return lines[:-1] if lines and lines[-1] == "" else lines


def window(text: str, offset: int, limit: int | None, chars: int) -> Window:
    """Up to `limit` lines from line `offset` on, as many as fit in `chars` (at least one), each cut to
    MAX_LINE_CHARS; numbered (`12: text`) unless the window is the whole text."""
    lines = lines_of(text)
    total = len(lines)
    first = min(max(1, offset), max(1, total))
    end = total if limit is None else min(total, first - 1 + max(1, limit))
    if first == 1 and end == total and len(text) <= chars:
        return Window(text, 1, total, total)
    shown: list[str] = []
    used = 0
    for number in range(first, end + 1):
        line = lines[number - 1]
        if len(line) > MAX_LINE_CHARS:
            line = line[:MAX_LINE_CHARS] + f" [... line cut: {len(line):,} characters]"
        entry = f"{number}: {line}"
        if shown and used + len(entry) + 1 > chars:
            break
        shown.append(entry)
        used += len(entry) + 1
    return Window("\n".join(shown), first, first + len(shown) - 1, total)
