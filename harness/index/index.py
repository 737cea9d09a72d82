"""One index of the workspace per run: a table of its files, ranked retrieval over their lines, the symbols
their code defines and uses, and what their manifests declare. Every tool and control that needs to know
the folder asks it, so the folder is walked once; a write refreshes the files it changed.

Built when first asked, confined as the tools are (the same walk: no link followed, no special file opened,
what .gitignore names left out), and bounded: at most `max_files` files in the table, `max_text_bytes` of text
in the ranking and `seconds` of building; past a bound the index says it is partial (`partial`) and holds
what it reached. Symbols are parsed the first time one is asked for, under their own bounds.
"""

from __future__ import annotations

import math
import time
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from pathlib import Path

from harness.errors import ToolError
from harness.fs.sniff import SNIFF_BYTES, binary_kind
from harness.fs.workspace import Workspace, within
from harness.index.manifests import MANIFEST_NAMES, Manifest, parsed
from harness.index.passages import CHUNK_LINES, Passages
from harness.index.symbols import Definition, FileSymbols, language_for, symbols_of
from harness.index.tokens import terms, words_of

MAX_FILES = 200_000
MAX_FILE_BYTES = 1 << 20  # a longer file is ranked by its first megabyte
MAX_TEXT_BYTES = 256 << 20
SECONDS = 60.0
SYMBOL_FILE_BYTES = 512 << 10
SYMBOL_SECONDS = 30.0
PROGRESS_EVERY = 2000  # files between two progress reports on a large folder
COMMON = 0.25  # a term in more than this share of the chunks says little of which file is meant


@dataclass
class FileRecord:
    path: str
    size: int
    modified: float
    number: int  # its number in the ranking's documents
    text: bool | None = None  # None until read: a binary file is not ranked
    language: str | None = None  # the language of its code, when a grammar parses it


@dataclass(frozen=True)
class Passage:
    path: str
    line: int  # the chunk's first line, from 1
    score: float


@dataclass(frozen=True)
class Named:
    """What a text names of the folder by path: files, and folders of two names or more."""

    files: list[str]
    folders: list[str]

    def holds(self, path: str) -> bool:
        """Whether the file is named, or lies in a folder that is."""
        return path in self.files or any(path.startswith(folder + "/") for folder in self.folders)


def writes(text: str, path: str) -> bool:
    """Whether the text writes the path whole: not inside a longer path or name (`old/a.ini`, `a.ini.bak`)."""
    at = text.find(path)
    while at >= 0:
        end = at + len(path)
        before = text[at - 1] if at else " "
        after = text[end : end + 2] + "  "
        longer = (
            (after[0].isalnum() and after[0].isascii()) or after[0] in "/_-" or (after[0] == "." and after[1].isalnum())
        )
        if not ((before.isalnum() and before.isascii()) or before in "/._-") and not longer:
            return True
        at = text.find(path, at + 1)
    return False


@dataclass
class Built:
    """What a build reached: files read, their bytes, how long it took, and why it stopped early if it did."""

    files: int = 0
    read: int = 0
    bytes: int = 0
    seconds: float = 0.0
    stopped: str | None = None
    skipped: int = 0  # links, special files and files with several names the walk left out
    ignored: int = 0  # what .gitignore and version control keep out


@dataclass
class Symbols:
    by_file: dict[str, FileSymbols] = field(default_factory=dict)
    stopped: str | None = None


class WorkspaceIndex:
    def __init__(
        self,
        workspace: Workspace,
        *,
        max_files: int = MAX_FILES,
        max_text_bytes: int = MAX_TEXT_BYTES,
        seconds: float = SECONDS,
        progress: Callable[[str], None] | None = None,
    ) -> None:
        self.workspace, self.max_files, self.max_text_bytes, self.seconds = (
            workspace,
            max_files,
            max_text_bytes,
            seconds,
        )
        self.progress = progress
        self.table: dict[str, FileRecord] = {}
        self.by_number: dict[int, FileRecord] = {}
        self.passages: Passages | None = None
        self.built = Built()
        self.symbols_cache: Symbols | None = None
        self.manifests_cache: list[Manifest] | None = None
        self.sorted_files: list[FileRecord] | None = None
        self.named_cache: tuple[tuple[str, int], Named] | None = None
        self.next_number = 0

    # building ------------------------------------------------------------------------------------------
    def ensure(self) -> None:
        if self.passages is None:
            self.build()

    def build(self) -> Built:
        began, over = time.monotonic(), within(self.seconds)
        self.passages = Passages()
        walked = self.workspace.walk(self.max_files, over=over)
        self.built = Built(files=len(walked.entries), skipped=walked.skipped, ignored=walked.ignored)
        if walked.more or walked.stopped:
            reached = "its time bound" if walked.stopped else f"{self.max_files:,} files"
            self.built.stopped = (
                f"the table holds the first {len(walked.entries):,} files by path (it reached {reached})"
            )
        for entry in walked.entries:
            self.record(entry.path, entry.size, entry.modified)
        for count, record in enumerate(list(self.table.values()), start=1):
            if self.built.bytes >= self.max_text_bytes or over():
                self.built.stopped = self.built.stopped or (
                    f"ranked the first {self.built.read:,} of {len(self.table):,} files, within "
                    f"{self.max_text_bytes >> 20} MB and {self.seconds:g} s"
                )
                break
            self.read_into(record)
            if self.progress is not None and count % PROGRESS_EVERY == 0:
                self.progress(f"indexing the workspace: {count:,} of {len(self.table):,} files")
        self.built.seconds = round(time.monotonic() - began, 3)
        return self.built

    def record(self, path: str, size: int, modified: float) -> FileRecord:
        old = self.table.get(path)
        number = old.number if old is not None else self.next_number
        self.next_number += old is None
        record = FileRecord(path, size, modified, number, language=language_for(path))
        self.table[path], self.by_number[number] = record, record
        self.sorted_files = None
        return record

    def read_into(self, record: FileRecord) -> None:
        """Read a file and rank its lines (a binary file, or one that cannot be read now, is not ranked)."""
        assert self.passages is not None
        try:
            data, _ = self.workspace.read_bytes(record.path, MAX_FILE_BYTES)
        except ToolError:
            record.text = False
            return
        record.text = binary_kind(data[:SNIFF_BYTES]) is None
        if record.text:
            self.passages.add(record.number, record.path, data.decode("utf-8", errors="replace"))
            self.built.read += 1
            self.built.bytes += len(data)
        else:
            self.passages.add(record.number, record.path, "")  # found by its name alone

    def refresh(self, paths: Iterable[str]) -> None:
        """Files that changed (written, edited, deleted): their rows, ranking, symbols and manifests anew."""
        if self.passages is None:
            return  # nothing built yet: the first question builds it from the files as they are then
        for path in paths:
            old = self.table.pop(path, None)
            self.sorted_files = None
            if old is not None:
                self.passages.remove(old.number)
                self.by_number.pop(old.number, None)
            if self.symbols_cache is not None:
                self.symbols_cache.by_file.pop(path, None)
            if path.rsplit("/", 1)[-1] in MANIFEST_NAMES:
                self.manifests_cache = None
            try:
                entry = self.workspace.entry(path)
            except ToolError:
                entry = None  # a link or a special file now: not a file of the table
            if entry is not None:
                self.read_into(self.record(entry.path, entry.size, entry.modified))

    @property
    def root(self) -> Path:
        return self.workspace.root

    @property
    def partial(self) -> bool:
        return self.built.stopped is not None

    # what the index knows ------------------------------------------------------------------------------
    def files(self) -> list[FileRecord]:
        """The table's files, by path (kept sorted between changes: controls ask every turn)."""
        self.ensure()
        if self.sorted_files is None:
            self.sorted_files = sorted(self.table.values(), key=lambda r: r.path)
        return self.sorted_files

    def passages_for(self, text: str, limit: int = 20) -> list[Passage]:
        """The chunks of lines most like the text (BM25 over its terms), best first."""
        self.ensure()
        assert self.passages is not None
        hits = self.passages.search(self.query(text), limit)
        return [Passage(self.by_number[h.file].path, h.line, h.score) for h in hits if h.file in self.by_number]

    def files_for(self, text: str, limit: int = 10) -> list[tuple[str, float]]:
        """The files most like the text: each by its best chunk, a little more for each further chunk."""
        scores: dict[str, list[float]] = {}
        for passage in self.passages_for(text, limit * 8):
            scores.setdefault(passage.path, []).append(passage.score)
        ranked = {path: best[0] + 0.1 * sum(best[1:]) for path, best in scores.items()}
        return sorted(ranked.items(), key=lambda item: -item[1])[:limit]

    def query(self, text: str) -> list[str]:
        """The text's terms, less those so common in this folder that they say nothing of which file is meant."""
        assert self.passages is not None
        documents = max(1, self.passages.searcher().num_docs)
        return [t for t in terms(text) if self.passages.frequency(t) <= max(2, COMMON * documents)]

    def words_here(self, text: str) -> list[str]:
        """The text's words as it writes them that this folder's files also hold (a name, an identifier, a word):
        the names the folder's code defines first, then the rarest here; none that most of the folder holds."""
        self.ensure()
        assert self.passages is not None
        documents = max(1, self.passages.searcher().num_docs)
        found: dict[str, int] = {}
        for word in words_of(text):
            lowered = word.lower()
            frequency = self.passages.frequency(lowered)
            if 0 < frequency <= max(2, COMMON * documents) and lowered not in {w.lower() for w in found}:
                found[word] = frequency
        defined = self.defined_names()
        return sorted(found, key=lambda w: (w not in defined, found[w], -len(w)))

    def defined_names(self) -> set[str]:
        """Every name the folder's code defines."""
        return {d.name for found in self.symbols().by_file.values() for d in found.definitions}

    def lines_of(self, passage: Passage, text: str, most: int = 2) -> list[tuple[int, str]]:
        """The lines of a chunk that hold most of the text's terms (line number from 1, and the line)."""
        try:
            data, _ = self.workspace.read_bytes(passage.path, MAX_FILE_BYTES)
        except ToolError:
            return []
        lines = data.decode("utf-8", errors="replace").split("\n")
        wanted = set(self.query(text))
        chunk = range(passage.line - 1, min(len(lines), passage.line - 1 + CHUNK_LINES))
        scored = [(len(wanted & set(terms(lines[i]))), i) for i in chunk]
        best = sorted((s for s in scored if s[0]), key=lambda s: (-s[0], s[1]))[:most]
        return [(i + 1, lines[i]) for _, i in sorted(best, key=lambda s: s[1])]

    def weights(self, text: str) -> dict[str, float]:
        """The text's terms, each weighted by how rare it is in this folder (BM25's idf over the chunks; a term
        the folder never holds weighs most)."""
        self.ensure()
        assert self.passages is not None
        documents = max(1, self.passages.searcher().num_docs)
        weights = {}
        for term in dict.fromkeys(terms(text)):
            frequency = self.passages.frequency(term)
            weights[term] = math.log(1 + (documents - frequency + 0.5) / (frequency + 0.5))
        return weights

    @staticmethod
    def relevance(text: str, weights: dict[str, float]) -> float:
        """How much a text bears on what `weights` came from: the weights of the terms it holds, each once."""
        return sum(weights.get(term, 0.0) for term in set(terms(text)))

    def named(self, text: str) -> Named:
        """The files, and the folders of two names or more, that the text writes whole by their path (a path is
        the same in any language), in the table's order; worked out once per text and state of the table."""
        key = (text, id(self.files()))
        if self.named_cache is None or self.named_cache[0] != key:
            folders = {
                "/".join(r.path.split("/")[:end]) for r in self.files() for end in range(2, r.path.count("/") + 1)
            }
            files = [r.path for r in self.files() if r.path in text and writes(text, r.path)]
            self.named_cache = (key, Named(files, sorted(f for f in folders if f in text and writes(text, f))))
        return self.named_cache[1]

    # symbols -------------------------------------------------------------------------------------------
    def symbols(self) -> Symbols:
        """Every code file's definitions and uses (tree-sitter), parsed the first time they are asked for."""
        if self.symbols_cache is None:
            self.symbols_cache = Symbols()
            began = time.monotonic()
            for record in self.files():
                if record.language is None or record.text is False or record.size > SYMBOL_FILE_BYTES:
                    continue
                if time.monotonic() - began > SYMBOL_SECONDS:
                    self.symbols_cache.stopped = f"parsed the code of {len(self.symbols_cache.by_file):,} files"
                    break
                self.parse(record.path)
        for path in [p for p, r in self.table.items() if r.language and p not in self.symbols_cache.by_file]:
            if self.table[path].size <= SYMBOL_FILE_BYTES and self.symbols_cache.stopped is None:
                self.parse(path)  # a file written since
        return self.symbols_cache

    def parse(self, path: str) -> None:
        assert self.symbols_cache is not None
        try:
            data, _ = self.workspace.read_bytes(path, SYMBOL_FILE_BYTES)
        except ToolError:
            return
        found = symbols_of(path, data)
        if found is not None:
            self.symbols_cache.by_file[path] = found

    def definitions(self, name: str) -> list[tuple[str, Definition]]:
        """Where a name is defined: exactly as written, else in any case."""
        every = [(path, d) for path, found in self.symbols().by_file.items() for d in found.definitions]
        exact = [(p, d) for p, d in every if d.name == name]
        return exact or [(p, d) for p, d in every if d.name.lower() == name.lower()]

    def uses(self, name: str) -> dict[str, list[int]]:
        """The files that use a name (as an identifier, not in a comment or a string), with the lines."""
        return {path: found.uses[name] for path, found in self.symbols().by_file.items() if name in found.uses}

    # manifests -----------------------------------------------------------------------------------------
    def manifests(self) -> list[Manifest]:
        """The manifests at the top of the folder and one folder down, the top ones first."""
        if self.manifests_cache is None:
            found = []
            for record in sorted(self.files(), key=lambda r: (r.path.count("/"), r.path)):
                if record.path.count("/") > 1 or record.path.rsplit("/", 1)[-1] not in MANIFEST_NAMES:
                    continue
                try:
                    data, _ = self.workspace.read_bytes(record.path, MAX_FILE_BYTES)
                except ToolError:
                    continue
                manifest = parsed(record.path, data.decode("utf-8", errors="replace"))
                if manifest is not None:
                    found.append(manifest)
            self.manifests_cache = found
        return self.manifests_cache
