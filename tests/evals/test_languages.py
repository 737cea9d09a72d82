"""Every scorer, in each of the five languages a question is asked in: a right answer in that language is
right, and the near misses a model gives in it (the wrong file, the right file said not to hold it, yes where
the truth is no, no where it is yes, a count one off, a version that is not the latest, a done item listed,
another license, a file too many) are wrong. An answer in English to a question in another language is
scored as well."""

from __future__ import annotations

from typing import get_args

import pytest

from evals.languages import LANGUAGES, Language
from evals.scoring import JUDGES, judge
from evals.suite import Check, CheckKind
from evals.truth import CHANGES, Truth

FILES = {"logs/api.log", "logs/db.log", "notes.txt", "config/app.ini", "src/core.py", "src/util.py", "README.md"}
NAMES = Truth(names=frozenset({"logs/api.log"}))
NO = Truth(expect_yes=False)
YES = Truth(names=frozenset({"notes.txt"}), expect_yes=True)
COUNT = Truth(count=15)
QUOTE = Truth(quote="Order more coffee filters. Call the landlord.")
VALUE = Truth(value="8080", others=frozenset({"8091"}))
LATEST = Truth(value="2.4.1", others=frozenset({"2.3.0", "2.2.5"}))
ITEMS = Truth(items=("renew the certificate", "check the backups"), not_items=("update the docs",))
LICENSE = Truth(items=("MIT", "Apache"), not_items=("BSD", "ISC", "GPL"))
ALL = Truth(names=frozenset({"src/core.py", "src/util.py"}), allowed=frozenset({"README.md"}), every=True)
EVERY = Truth(names=frozenset({"notes.txt", "README.md"}))
SHARED = Truth(names=frozenset({"quarterly"}))

# kind -> (check kind, truth, {language: [(answer, right)]})
CASES: dict[str, tuple[str, Truth, dict[Language, list[tuple[str, bool]]]]] = {
    "which file": (
        "names_file",
        NAMES,
        {
            "en": [
                ("logs/api.log mentions it.", True),
                ("logs/db.log mentions it.", False),
                ("logs/api.log does not mention it; logs/db.log does.", False),
                ("Either logs/api.log or logs/db.log.", False),
            ],
            "es": [
                ("El archivo logs/api.log lo menciona.", True),
                ("Lo menciona logs/db.log.", False),
                ("logs/api.log no lo menciona, pero logs/db.log sí.", False),
            ],
            "de": [
                ("Die Datei logs/api.log erwähnt es.", True),
                ("Es steht in logs/db.log.", False),
                ("logs/api.log erwähnt es nicht, aber logs/db.log.", False),
            ],
            "zh": [
                ("是 logs/api.log 文件。", True),
                ("在logs/db.log里。", False),
                ("logs/api.log没有提到，但是logs/db.log提到了。", False),
            ],
            "ru": [
                ("Это файл logs/api.log.", True),
                ("Это logs/db.log.", False),
                ("logs/api.log не упоминает, но logs/db.log да.", False),
            ],
        },
    ),
    "a negative": (
        "yes_names_file",
        NO,
        {
            "en": [
                ("No, no file mentions it.", True),
                ("Yes, logs/api.log mentions it.", False),
                ("notes.txt talks about it.", False),
            ],
            "es": [
                ("No, ningún archivo lo menciona.", True),
                ("Sí, lo menciona logs/api.log.", False),
                ("El fichero notes.txt habla de ello.", False),
            ],
            "de": [
                ("Nein, keine Datei erwähnt das.", True),
                ("Ja, logs/api.log erwähnt es.", False),
                ("Die Datei notes.txt spricht darüber.", False),
            ],
            "zh": [
                ("没有，没有任何文件提到它。", True),
                ("有，logs/api.log 提到了。", False),
                ("notes.txt 里讲到了。", False),
            ],
            "ru": [
                ("Нет, ни один файл это не упоминает.", True),
                ("Да, это упоминается в logs/api.log.", False),
                ("Об этом говорится в notes.txt.", False),
            ],
        },
    ),
    "a positive": (
        "yes_names_file",
        YES,
        {
            "en": [
                ("Yes: notes.txt talks about it.", True),
                ("No, there is no such file.", False),
                ("Yes, logs/api.log.", False),
            ],
            "es": [
                ("Sí: notes.txt habla de ello.", True),
                ("No, no hay ningún archivo así.", False),
                ("Sí, logs/api.log.", False),
            ],
            "de": [
                ("Ja: notes.txt spricht darüber.", True),
                ("Nein, keine Datei erwähnt das.", False),
                ("Ja, logs/api.log.", False),
            ],
            "zh": [
                ("有：notes.txt 提到了。", True),
                ("没有，没有文件提到它。", False),
                ("有，在logs/api.log里。", False),
            ],
            "ru": [
                ("Да: об этом говорится в notes.txt.", True),
                ("Нет, такого файла нет.", False),
                ("Да, logs/api.log.", False),
            ],
        },
    ),
    "a count": (
        "file_count",
        COUNT,
        {
            "en": [
                ("There are 15 files.", True),
                ("There are fifteen files.", True),
                ("14 files.", False),
                ("15 files, or maybe 16 files.", False),
                ("There are 15 documents; the largest is 1,289 bytes.", True),  # the word its questions use
                ("There are 16 documents; the largest is 1,289 bytes.", False),
            ],
            "es": [
                ("Hay 15 archivos.", True),
                ("Hay quince archivos.", True),
                ("Hay 14 archivos.", False),
                ("Son dieciséis ficheros.", False),
                ("Hay 15 documentos; el mayor tiene 1,289 bytes.", True),
                ("Hay 16 documentos; el mayor tiene 1,289 bytes.", False),
            ],
            "de": [
                ("Es gibt 15 Dateien.", True),
                ("Es sind fünfzehn Dateien.", True),
                ("Es gibt 14 Dateien.", False),
                ("Es sind sechzehn Dateien.", False),
                ("Es gibt 15 Dokumente. Die größte Datei hat 1,289 Bytes.", True),
                ("Es gibt 16 Dokumente. Die größte Datei hat 1,289 Bytes.", False),
            ],
            "zh": [
                ("一共有15个文件。", True),
                ("共有十五个文件。", True),
                ("一共有14个文件。", False),
                ("有十六个文件。", False),
                ("共有15份文档，最大的有1,289字节。", True),
                ("共有16份文档，最大的有1,289字节。", False),
            ],
            "ru": [
                ("Всего 15 файлов.", True),
                ("Пятнадцать файлов.", True),
                ("Всего 14 файлов.", False),
                ("Шестнадцать файлов.", False),
                ("В каталоге 15 документов; самый большой — 1,289 байт.", True),
                ("В каталоге 16 документов; самый большой — 1,289 байт.", False),
            ],
        },
    ),
    "a quote": (
        "quotes_file",
        QUOTE,
        {
            "en": [
                ("It says: Order more coffee filters. Call the landlord.", True),
                ("It says: buy more coffee.", False),
            ],
            "es": [
                ("Dice: «Order more coffee filters. Call the landlord.»", True),
                ("Dice que hay que comprar café.", False),
            ],
            "de": [("Dort steht: Order more coffee filters. Call the landlord.", True), ("Es geht um Kaffee.", False)],
            "zh": [("内容是：Order more coffee filters. Call the landlord.", True), ("内容是：多买点咖啡。", False)],
            "ru": [("Там написано: Order more coffee filters. Call the landlord.", True), ("Там про кофе.", False)],
        },
    ),
    "a value": (
        "config_value",
        VALUE,
        {
            "en": [("port is set to 8080.", True), ("It is 8091.", False), ("8080 or 8091.", False)],
            "es": [("El puerto está fijado a 8080.", True), ("Vale 8091.", False), ("Es 8080 o 8091.", False)],
            "de": [("Der Port ist auf 8080 gesetzt.", True), ("Er ist 8091.", False), ("8080 oder 8091.", False)],
            "zh": [("端口被设置为8080。", True), ("端口是8091。", False), ("是8080或者8091。", False)],
            "ru": [("Порт равен 8080.", True), ("Значение 8091.", False), ("8080 или 8091.", False)],
        },
    ),
    "the latest version": (
        "latest_version",
        LATEST,
        {
            "en": [("The latest is 2.4.1.", True), ("The latest is 2.3.0.", False), ("2.3.0, then 2.4.1.", False)],
            "es": [("La última es la 2.4.1.", True), ("La más reciente es 2.3.0.", False)],
            "de": [("Die neueste ist 2.4.1.", True), ("Die neueste ist 2.3.0.", False)],
            "zh": [("最新版本是2.4.1。", True), ("最新的是2.3.0。", False)],
            "ru": [("Последняя версия 2.4.1.", True), ("Последняя версия — 2.3.0.", False)],
        },
    ),
    "open items": (
        "open_items",
        ITEMS,
        {
            "en": [
                ("Still open: renew the certificate; check the backups.", True),
                ("Open: renew the certificate, check the backups, update the docs.", False),
                ("Open: renew the certificate.", False),
            ],
            "es": [
                ("Quedan: renew the certificate y check the backups.", True),
                ("Quedan: renew the certificate, check the backups y update the docs.", False),
            ],
            "de": [
                ("Offen sind: renew the certificate, check the backups.", True),
                ("Offen ist: renew the certificate.", False),
            ],
            "zh": [("未完成：renew the certificate；check the backups。", True), ("未完成：update the docs。", False)],
            "ru": [
                ("Открыты: renew the certificate, check the backups.", True),
                ("Открыты: renew the certificate, update the docs.", False),
            ],
        },
    ),
    "a license": (
        "license",
        LICENSE,
        {
            "en": [("It is dual-licensed under MIT or Apache-2.0.", True), ("MIT.", False), ("BSD-3-Clause.", False)],
            "es": [
                ("Tiene doble licencia: MIT o Apache 2.0.", True),
                ("Licencia MIT.", False),
                ("MIT, Apache-2.0 y BSD.", False),
            ],
            "de": [("Doppelt lizenziert unter MIT oder Apache-2.0.", True), ("Unter der ISC-Lizenz.", False)],
            "zh": [("采用 MIT 或 Apache-2.0 双许可证。", True), ("采用MIT许可证。", False)],
            "ru": [("Двойная лицензия: MIT или Apache 2.0.", True), ("Лицензия GPL.", False)],
        },
    ),
    "every file of a set": (
        "uses",
        ALL,
        {
            "en": [
                ("src/core.py and src/util.py use it.", True),
                ("src/core.py uses it.", False),
                ("src/core.py, src/util.py and notes.txt.", False),
                ("src/core.py and src/util.py (defined in README.md).", True),
            ],
            "es": [("Lo usan src/core.py y src/util.py.", True), ("Solo src/core.py.", False)],
            "de": [("Es wird in src/core.py und src/util.py verwendet.", True), ("Nur in src/util.py.", False)],
            "zh": [("src/core.py和src/util.py使用了它。", True), ("只有src/core.py。", False)],
            "ru": [("Его используют src/core.py и src/util.py.", True), ("Только src/util.py.", False)],
        },
    ),
    "what each file holds": (
        "reads_every_file",
        EVERY,
        {
            "en": [
                ("notes.txt holds a shopping list; README.md describes the project.", True),
                ("notes.txt and README.md.", False),
                ("You can call read_file(path) on each file.", False),
            ],
            "es": [
                ("notes.txt contiene la lista de la compra; README.md describe el proyecto.", True),
                ("notes.txt y README.md.", False),
            ],
            "de": [
                ("notes.txt enthält die Einkaufsliste; README.md beschreibt das Projekt.", True),
                ("notes.txt und README.md.", False),
            ],
            "zh": [("notes.txt 是购物清单；README.md 介绍这个项目。", True), ("notes.txt 和 README.md。", False)],
            "ru": [("notes.txt: список покупок; README.md описывает проект.", True), ("notes.txt и README.md.", False)],
        },
    ),
    "the word they share": (
        "shared_word",
        SHARED,
        {
            "en": [("They share the word quarterly.", True), ("They share the word report.", False)],
            "es": [("Comparten la palabra quarterly.", True), ("Comparten la palabra report.", False)],
            "de": [("Gemeinsam ist das Wort quarterly.", True), ("Gemeinsam ist das Wort report.", False)],
            "zh": [("共同的词是 quarterly。", True), ("共同的词是 report。", False)],
            "ru": [("Общее слово — quarterly.", True), ("Общее слово — report.", False)],
        },
    ),
}


def test_every_question_a_check_asks_is_scored_by_a_judge_held_to_near_misses_here() -> None:
    held = {id(JUDGES[check_kind]) for check_kind, _, _ in CASES.values()}
    questions = [kind for kind in get_args(CheckKind) if kind not in CHANGES]
    assert [kind for kind in questions if id(JUDGES[kind]) not in held] == []


@pytest.mark.parametrize("language", LANGUAGES)
@pytest.mark.parametrize("kind", list(CASES))
def test_each_scorer_takes_right_answers_and_refuses_near_misses_in_each_language(
    kind: str, language: Language
) -> None:
    check_kind, truth, answers = CASES[kind]
    check = Check.model_validate({"kind": check_kind})
    cases = answers[language]
    assert any(right for _, right in cases) and sum(not right for _, right in cases) >= 1
    for answer, right in cases:
        verdict = judge(check, truth, answer, FILES, FILES, language=language)
        assert verdict.correct is right, f"{language}: {answer!r} scored {verdict.correct} ({verdict.why})"


@pytest.mark.parametrize("language", [code for code in LANGUAGES if code != "en"])
def test_an_answer_in_english_to_a_question_in_another_language_is_read_as_english(language: Language) -> None:
    check = Check.model_validate({"kind": "yes_names_file"})
    assert judge(check, NO, "No, none of the files mention it.", FILES, FILES, language=language).correct
    assert not judge(check, NO, "Yes, logs/api.log does.", FILES, FILES, language=language).correct
    count = Check.model_validate({"kind": "file_count"})
    assert judge(count, COUNT, "There are fifteen files.", FILES, FILES, language=language).correct


def test_a_number_or_a_name_written_against_chinese_characters_is_read() -> None:
    count, names = Check.model_validate({"kind": "file_count"}), Check.model_validate({"kind": "names_file"})
    assert judge(count, COUNT, "有15个", FILES, FILES, language="zh").correct
    assert judge(names, NAMES, "答案是logs/api.log这个文件", FILES, FILES, language="zh").correct
    assert not judge(count, COUNT, "版本2.15", FILES, FILES, language="zh").correct  # a version is not a count
