"""The five languages the eval asks in, and what its scorers must know of each to read an answer.

A question is asked in one of them; its answer is scored in that language or in English (a model asked in
German often answers in English). What a scorer reads of an answer's words is only this: the clauses it is
made of, whether a clause is negated, whether it says there is none, how it writes a small number, and the
nouns a count is said with. File names, values, versions and quoted lines are the same in every language.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Literal, get_args

Language = Literal["en", "es", "de", "zh", "ru"]
LANGUAGES: tuple[Language, ...] = get_args(Language)
NAMES: dict[Language, str] = {"en": "English", "es": "Spanish", "de": "German", "zh": "Chinese", "ru": "Russian"}

# Latin and Cyrillic letters, digits and `_`: what a word of a name or a number may not touch. Chinese is
# written without spaces, so a file name or a number there touches the characters around it.
WORD_CHAR = r"A-Za-z0-9_\u00c0-\u024f\u0400-\u04ff"


@dataclass(frozen=True)
class Vocabulary:
    """How a language says what a scorer looks for. Each pattern is matched case-insensitively."""

    negation: str  # a word that negates its clause
    clause_end: str  # where a clause ends (besides `.;!?` and a new line)
    says_none: str  # a phrase that says there is none (no file says it, nothing was found)
    opens_no: str  # an answer that opens with no
    numbers: dict[str, int]  # small numbers written as words (not the articles that look like them)
    counted: str  # the nouns a count is said with (files, lines, rows, ...)
    measure: str = ""  # Chinese: the measure words a number written in characters comes before


def numbered(words: str) -> dict[str, int]:
    """Number words from zero up, in order, separated by spaces."""
    return {word: value for value, word in enumerate(words.split())}


def bounded(words: str) -> str:
    """Alternatives that stand as whole words (no Latin or Cyrillic letter or digit on either side)."""
    return rf"(?<![{WORD_CHAR}])(?:{words})(?![{WORD_CHAR}])"


VOCABULARIES: dict[Language, Vocabulary] = {
    "en": Vocabulary(
        negation=bounded(r"not|no|none|never|neither|nor|without|cannot") + r"|n't\b",
        clause_end=bounded(r"but") + r"|,\s*(?:while|whereas)\b",
        says_none=r"\b(?:there (?:is|are)|i found|found) no\b|\bno (?:such )?files?\b|\bnone of (?:the|these) files\b"
        r"|\bnothing (?:in|about|mentions)\b|\b(?:could|can)(?:n't| ?not) find\b|\bnot (?:found|mentioned)\b"
        r"|\b(?:does|do)(?:n't| not) (?:mention|contain|say|refer)",
        opens_no=r"^\W*no\b",
        numbers=numbered(
            "zero one two three four five six seven eight nine ten eleven twelve thirteen fourteen fifteen sixteen"
        ),
        counted=r"files?|documents?|lines?|rows?|records?|entries|entry|items?|errors?|times|occurrences?|mentions?",
    ),
    "es": Vocabulary(
        negation=bounded(r"no|ni|nunca|jamás|ningún|ninguna|ninguno|ningunos|ningunas|nada|sin|tampoco"),
        clause_end=bounded(r"pero|sino|mientras que|aunque"),
        says_none=r"\bno (?:hay|existe|existen|encontr[ée]|se encontr[óo]|aparece|se menciona|menciona|mencionan"
        r"|contiene|contienen|habla)\b|\bning[úu]n (?:archivo|fichero)\b|\bninguno de los (?:archivos|ficheros)\b"
        r"|\bnada sobre\b",
        opens_no=r"^\W*no\b",
        numbers=numbered(
            "cero uno dos tres cuatro cinco seis siete ocho nueve diez once doce trece catorce quince dieciséis"
        ),
        counted=r"archivos?|ficheros?|documentos?|l[íi]neas?|filas?|registros?|entradas?|elementos?|errores?|error|veces",
    ),
    "de": Vocabulary(
        negation=bounded(r"nicht|kein|keine|keinen|keinem|keiner|keines|nie|niemals|ohne|weder|nichts"),
        clause_end=bounded(r"aber|sondern|während|jedoch"),
        says_none=r"\bkeine (?:der |einzige )?datei\b|\bin keiner (?:der )?dateien?\b|\bnicht (?:erwähnt|gefunden"
        r"|vorhanden|enthalten)\b|\b(?:gibt es|existiert) (?:keine|nicht)\b|\bkeine (?:erwähnung|treffer)\b"
        r"|\b(?:erwähnt|enthält|nennt) (?:\w+ )?(?:keine|nicht|nichts)\b|\bnichts (?:über|zu)\b",
        opens_no=r"^\W*nein\b",
        numbers=numbered(
            "null eins zwei drei vier fünf sechs sieben acht neun zehn elf zwölf dreizehn vierzehn fünfzehn sechzehn"
        ),
        counted=r"dateien|datei|dokumente|dokument|zeilen|zeile|einträge|eintrag|datensätze|datensatz|fehler|elemente|mal",
    ),
    "zh": Vocabulary(
        negation=r"不|没|无|未|并非|否",
        clause_end=r"[。；！？，]|但是|但|而是|然而",
        says_none=r"没有(?:任何)?(?:文件|一个文件|提到|提及|找到|发现|记录|出现)|未(?:提及|提到|找到|发现)|并未|不存在"
        r"|都没有|均未|都不|没有.{0,6}(?:提到|提及)|无(?:文件|记录)|找不到",
        opens_no=r"^\W*(?:不|没有|否)",
        numbers=numbered("零 一 两 三 四 五 六 七 八 九 十 十一 十二 十三 十四 十五 十六") | {"二": 2},
        counted=r"[个份]?(?:文件|档案|文档)|行|条(?:记录)?|项|个条目|个错误|次|处|条数据|行数据",
        measure=r"个|份|行|条|项|次|处",
    ),
    "ru": Vocabulary(
        negation=bounded(r"не|нет|ни|никакой|никакого|никаких|никакие|никогда|без|отсутствует|отсутствуют"),
        clause_end=bounded(r"но|однако|зато|тогда как"),
        says_none=r"\bни (?:один|в одном|одного) (?:файл|файле|из файлов)|\bне (?:упоминается|упоминают|упоминает"
        r"|найден[оаы]?|нашёл|нашел|нашла|содержит|содержат|встречается|говорится|сказано)\b|\bнет (?:ни )?"
        r"(?:файла|файлов|упоминани[йя])\b|\bотсутству(?:ет|ют)\b|\bничего (?:о|об|про)\b",
        opens_no=r"^\W*нет\b",
        numbers={
            "ноль": 0,
            "один": 1,
            "одна": 1,
            "одно": 1,
            "два": 2,
            "две": 2,
            "двух": 2,
            "три": 3,
            "трёх": 3,
            "трех": 3,
            "четыре": 4,
            "четырёх": 4,
            "пять": 5,
            "пяти": 5,
            "шесть": 6,
            "шести": 6,
            "семь": 7,
            "семи": 7,
            "восемь": 8,
            "восьми": 8,
            "девять": 9,
            "девяти": 9,
            "десять": 10,
            "десяти": 10,
            "одиннадцать": 11,
            "двенадцать": 12,
            "тринадцать": 13,
            "четырнадцать": 14,
            "пятнадцать": 15,
            "шестнадцать": 16,
        },
        counted=r"файл(?:а|ов|ы)?|документ(?:а|ов|ы)?|строк[аи]?|строчек|запис(?:ь|и|ей)|элемент(?:а|ов|ы)?|ошиб(?:ка|ки|ок)|раз"
        r"|пункт(?:а|ов|ы)?",
    ),
}


def vocabularies(language: Language) -> list[Vocabulary]:
    """What an answer to a question in `language` may be written in: that language, and English."""
    return [VOCABULARIES[language]] if language == "en" else [VOCABULARIES[language], VOCABULARIES["en"]]


def compiled(pattern: str) -> re.Pattern[str]:
    return re.compile(pattern, re.IGNORECASE)


def either(language: Language, part: str) -> re.Pattern[str]:
    """One of a vocabulary's patterns (`part`), of the language and of English, as one pattern."""
    return compiled("|".join(f"(?:{getattr(v, part)})" for v in vocabularies(language) if getattr(v, part)))


def number_words(language: Language) -> dict[str, int]:
    """The small numbers written as words in the language and in English, longest first (so that `fünfzehn`
    is read before `fünf`)."""
    merged = {word: n for v in reversed(vocabularies(language)) for word, n in v.numbers.items()}
    return dict(sorted(merged.items(), key=lambda item: -len(item[0])))
