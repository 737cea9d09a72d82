"""The index's tokenizer, the same for a folder's files and for a question, in any script.

A text's terms: its words in lower case (Unicode letters and digits, so Cyrillic, Greek and Latin alike);
each identifier also as its parts (`parseHeaderLine` and `HTTP_TIMEOUT` give `parse`, `header`, `line`,
`http`, `timeout`; `db-96.internal` gives `db`, `96`, `internal`); a word of a script written without spaces
(Chinese, Japanese, Thai) as the pairs of characters it is made of; and each longer word also by its first
five letters, marked (`rotat~` of `rotation` and `rotating`). Cutting words to a fixed prefix is how a
retrieval index conflates the forms of a word without knowing its language (McNamee and Mayfield, "Character
n-gram tokenization for European language text retrieval", 2004): no word list and no stemmer of one
language is involved, so a question in any language meets the folder the same way.
"""

from __future__ import annotations

import re
from collections.abc import Iterator

PREFIX = 5  # letters a longer word is also indexed by
PREFIX_MARK = "~"
WORD = re.compile(r"\w+")  # letters, digits and `_`, of any script
# a script written without spaces: Han, Hiragana, Katakana, Hangul syllables, Thai
UNSPACED = re.compile(r"[\u3040-\u30ff\u3400-\u4dbf\u4e00-\u9fff\uf900-\ufaff\uac00-\ud7af\u0e00-\u0e7f]+")
MAX_TERM = 40  # longer runs (hashes, base64) are not words anyone asks for


def terms(text: str) -> list[str]:
    """Every term of the text, in order, repeats kept (BM25 counts them)."""
    return list(iter_terms(text))


def iter_terms(text: str) -> Iterator[str]:
    for match in WORD.finditer(text):
        word = match.group(0).strip("_")
        if not word or len(word) > MAX_TERM:
            continue
        if UNSPACED.search(word):
            yield from unspaced(word)
            continue
        lower = word.lower()
        yield lower
        pieces = parts(word)
        if len(pieces) > 1:
            yield from (p.lower() for p in pieces)
        for piece in pieces:
            if len(piece) > PREFIX and piece.isalpha():
                yield piece[:PREFIX].lower() + PREFIX_MARK


def parts(word: str) -> list[str]:
    """An identifier's parts: split at `_`, where a lower-case letter meets a capital, where a run of capitals
    meets a word (`XMLHttp`: `XML`, `Http`) and where letters meet digits. A plain word is one part."""
    if word.isalpha() and (word.islower() or word.isupper() or word.istitle()):
        return [word]
    pieces: list[str] = []
    for chunk in word.split("_"):
        start = 0
        for i in range(1, len(chunk)):
            before, here = chunk[i - 1], chunk[i]
            capitals_end = before.isupper() and here.isupper() and i + 1 < len(chunk) and chunk[i + 1].islower()
            if (before.islower() and here.isupper()) or before.isdigit() != here.isdigit() or capitals_end:
                pieces.append(chunk[start:i])
                start = i
        pieces.append(chunk[start:])
    return [p for p in pieces if p]


def unspaced(word: str) -> Iterator[str]:
    """A word with runs of an unspaced script: those runs as their character pairs (a lone character alone),
    the rest as words."""
    at = 0
    for run in UNSPACED.finditer(word):
        if run.start() > at:
            yield from iter_terms(word[at : run.start()])
        chars = run.group(0)
        if len(chars) == 1:
            yield chars
        else:
            yield from (chars[i : i + 2] for i in range(len(chars) - 1))
        at = run.end()
    if at < len(word):
        yield from iter_terms(word[at:])


def words_of(text: str) -> list[str]:
    """The text's words and identifiers as written (no parts, no prefixes): what a search for one would give."""
    return [m.group(0) for m in WORD.finditer(text) if len(m.group(0)) <= MAX_TERM and m.group(0).strip("_")]
