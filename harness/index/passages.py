"""Ranked retrieval over a folder's files in chunks of lines: BM25 (Okapi, tantivy's scoring) in memory.

Each chunk of CHUNK_LINES lines is a document: its terms (tokens.py) in `body`, its file's path's terms in
`name`. A query is a bag of terms; a chunk's score is tantivy's BM25 over both fields, a path counting more
than a line (a file named for what is asked is likely about it) and a word's prefix less than the word. A
file's chunks are replaced when it changes, so the ranking follows the files through a run.

tantivy (Rust, in memory, incremental) rather than bm25s (which rebuilds its matrix on any change): a run
that writes a file needs only that file's chunks replaced.
"""

from __future__ import annotations

from collections import Counter
from dataclasses import dataclass

import tantivy

from harness.index.tokens import PREFIX_MARK, terms

CHUNK_LINES = 6
NAME_BOOST = 2.0
PREFIX_BOOST = 0.5
WRITER_HEAP = 32_000_000  # bytes of RAM the writer buffers before it flushes a segment


@dataclass(frozen=True)
class Hit:
    file: int  # the file's number in the index's table
    line: int  # the chunk's first line, from 1
    score: float


class Passages:
    def __init__(self) -> None:
        builder = tantivy.SchemaBuilder()
        builder.add_text_field("key", stored=False, tokenizer_name="raw", index_option="basic")
        builder.add_text_field("body", stored=False, tokenizer_name="whitespace", index_option="freq")
        builder.add_text_field("name", stored=False, tokenizer_name="whitespace", index_option="freq")
        builder.add_unsigned_field("file", stored=True)
        builder.add_unsigned_field("line", stored=True)
        self.schema = builder.build()
        self.index = tantivy.Index(self.schema)
        self.writer = self.index.writer(heap_size=WRITER_HEAP, num_threads=1)
        self.dirty = False

    def add(self, file: int, path: str, text: str) -> int:
        """The file's chunks, added (its old ones, if any, are removed first); how many chunks."""
        self.remove(file)
        name = " ".join(terms(path))
        lines = text.split("\n")
        count = 0
        for start in range(0, len(lines), CHUNK_LINES):
            body = " ".join(terms("\n".join(lines[start : start + CHUNK_LINES])))
            if not body:
                continue
            document = tantivy.Document()
            document.add_text("key", str(file))
            document.add_text("body", body)
            document.add_text("name", name)
            document.add_unsigned("file", file)
            document.add_unsigned("line", start + 1)
            self.writer.add_document(document)
            count += 1
        if not count and name:  # a file with no words is still found by its name
            document = tantivy.Document()
            document.add_text("key", str(file))
            document.add_text("name", name)
            document.add_unsigned("file", file)
            document.add_unsigned("line", 1)
            self.writer.add_document(document)
        self.dirty = True
        return count

    def remove(self, file: int) -> None:
        self.writer.delete_documents_by_term("key", str(file))
        self.dirty = True

    def searcher(self) -> tantivy.Searcher:
        if self.dirty:
            self.writer.commit()
            self.index.reload()
            self.dirty = False
        return self.index.searcher()

    def frequency(self, term: str) -> int:
        """In how many chunks the term is (0: this folder never says it)."""
        return int(self.searcher().doc_freq("body", term)) + int(self.searcher().doc_freq("name", term))

    def search(self, query: list[str], limit: int) -> list[Hit]:
        """The chunks that hold the query's terms, best first, at most `limit`."""
        weights = Counter(query)
        if not weights:
            return []
        clauses = []
        for term, times in weights.items():
            boost = (PREFIX_BOOST if term.endswith(PREFIX_MARK) else 1.0) * times
            for field, scale in (("body", 1.0), ("name", NAME_BOOST)):
                query_term = tantivy.Query.term_query(self.schema, field, term)
                clauses.append((tantivy.Occur.Should, tantivy.Query.boost_query(query_term, boost * scale)))
        searcher = self.searcher()
        found = searcher.search(tantivy.Query.boolean_query(clauses), limit)
        hits = []
        for score, address in found.hits:
            stored = searcher.doc(address)
            hits.append(Hit(int(stored["file"][0]), int(stored["line"][0]), float(score)))
        return hits
