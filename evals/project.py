"""A generated project folder of any size (3 to thousands of files), nested, with planted facts.

It looks like what a user points the harness at: source with functions and classes, tests, logs (some
longer than a small model's window), config files in several formats (and near-duplicates of them: a
`.bak`, an `old/` copy), CSV data, docs, a changelog, a checklist, a Makefile, and binary files. Facts are
planted so that each question has one answer: one log reports a timeout, one file defines a function,
one config sets a key, one file is the largest (longer than the window), one the smallest, one the
newest, and so on. The ground truth is never read from what was planted: the checks compute it from the
files (evals/truth.py); `Planted` only says where the task generator may point its questions.
"""

from __future__ import annotations

import random
from dataclasses import dataclass, field

SERVICES = (
    "api", "auth", "billing", "cache", "cron", "db", "deploy", "export", "gateway", "mail", "queue", "scheduler",
    "search", "upload", "worker", "audit", "backup", "metrics", "notify", "report",
)  # fmt: skip
VERBS = ("load", "parse", "build", "render", "fetch", "store", "merge", "split", "check", "format", "resolve", "send")
NOUNS = ("config", "record", "invoice", "user", "session", "report", "batch", "token", "page", "entry", "order")
TOPICS = ("install", "usage", "design", "faq", "deploy", "testing", "security", "api", "upgrade", "glossary")
PACKAGES = ("app", "core", "tools", "web", "data", "jobs")
EVENTS = (
    "request served in {n} ms", "user {n} signed in", "cache hit ratio {n}%", "job {n} finished",
    "disk at {n}%", "heartbeat {n}", "connection {n} opened", "batch {n} written",
)  # fmt: skip
PROSE = (
    "This section explains how the pieces fit together.", "Each step is described below with an example.",
    "The defaults work for most setups.", "See the glossary for the terms used here.",
    "Values are read once at start.", "Nothing here changes the stored data.",
    "The team reviews these notes every quarter.", "Questions go to the project channel.",
)  # fmt: skip
TIMEOUT_LINES = (
    "ERROR upstream call to the payment service timed out after {n} s",
    "WARN job {n} hit a timeout waiting for the database lock",
    "ERROR request {n} failed: read timeout from the storage node",
)
ROTATION_LINES = (
    "- set up weekly log rotation on the web hosts",
    "Reminder: rotate the logs before they fill the disk",
)
NOTES = (
    "Order more coffee filters.\nCall the landlord about the heating.\n",
    "Renew the TLS certificate before March.\nArchive last year's invoices.\n",
    "Ask Dana for the onboarding slides.\nBook the meeting room for Thursday.\n",
)
CHECKLIST = (
    "renew the certificate", "update the onboarding guide", "move the backups to the new bucket",
    "remove the old feature flags", "write the release notes", "rotate the API keys", "archive the 2025 reports",
    "fix the flaky upload test",
)  # fmt: skip
BINARY_HEADS = (b"\x89PNG\r\n\x1a\n", b"PK\x03\x04", b"SQLite format 3\x00", b"\x1f\x8b\x08\x00")
PROJECT_FACTS = 40  # from this many files on, a project holds every planted fact (fewer: the six kinds')
BINARY_NAMES = ("assets/logo.png", "assets/banner.png", "dist/bundle.zip", "data/cache.sqlite", "data/dump.gz")


@dataclass
class Planted:
    """Where the generator put each fact (for writing questions; checks recompute the truth from the files)."""

    timeout: str = ""
    rotation: str = ""
    notes: str = ""
    largest: str = ""
    config: str = ""
    config_key: str = ""
    config_section: str = ""
    toml: str = ""
    toml_key: str = ""
    csv: str = ""
    error_log: str = ""
    changelog: str = ""
    checklist: str = ""
    function: str = ""
    function_file: str = ""
    klass: str = ""
    makefile: str = ""
    make_target: str = ""
    shared_host: str = ""
    shared_files: tuple[str, str] = ("", "")
    services: str = ""
    refused_log: str = ""
    folder: str = ""
    absent: str = ""
    binaries: list[str] = field(default_factory=list)


@dataclass
class Project:
    files: dict[str, str | bytes]
    mtimes: dict[str, float]  # seconds since the epoch, per file
    planted: Planted


def stamp(rng: random.Random, day: int | None = None) -> str:
    day = day or rng.randint(1, 28)
    return f"2026-10-{day:02d} {rng.randint(0, 23):02d}:{rng.randint(0, 59):02d}:{rng.randint(0, 59):02d}"


def log_lines(rng: random.Random, count: int) -> str:
    levels = ("INFO", "INFO", "INFO", "DEBUG", "WARN")
    return "".join(
        f"{stamp(rng)} {rng.choice(levels)} {rng.choice(EVENTS).format(n=rng.randint(1, 999))}\n" for _ in range(count)
    )


def python_module(rng: random.Random, names: list[str]) -> str:
    parts = ['"""Helpers for the ' + rng.choice(NOUNS) + ' pipeline."""\n\nimport json\nimport os\n']
    for name in names:
        arg = rng.choice(NOUNS)
        parts.append(
            f"\n\ndef {name}({arg}, strict=False):\n"
            f'    """{name.replace("_", " ").capitalize()} one {arg}."""\n'
            f"    if strict and not {arg}:\n        raise ValueError('empty {arg}')\n"
            f"    return json.dumps({arg}, sort_keys=True)\n"
        )
    return "".join(parts)


def markdown(rng: random.Random, title: str, paragraphs: int) -> str:
    body = "\n\n".join(" ".join(rng.sample(PROSE, 3)) for _ in range(paragraphs))
    return f"# {title}\n\n{body}\n"


class Builder:
    """Fills a project of `count` files: the planted ones first, then filler of every kind."""

    def __init__(self, seed: int, count: int) -> None:
        self.rng = random.Random(seed)
        self.count = max(3, count)
        self.files: dict[str, str | bytes] = {}
        self.planted = Planted()
        self.used_names: set[str] = set()
        self.lowest_free: dict[tuple[str, str, str], int] = {}  # per folder, stem and suffix: where to look first
        self.depth = 1 if count < 10 else 2 if count < 60 else 3

    def path(self, folder: str, stem: str, suffix: str) -> str:
        """A path in a folder (deeper for bigger projects), new and distinct from every other: the stem itself, or
        the stem numbered with the lowest number free (found in time linear in the names taken, at any size)."""
        rng = self.rng
        parts = [folder] if folder else []
        for _ in range(rng.randint(0, self.depth - 1) if folder else 0):
            parts.append(rng.choice(("2026", "old", "v2", "internal", "extra", "eu", "us", "nightly")))
        key = ("/".join(parts), stem, suffix)
        attempt = self.lowest_free.get(key, 0)  # names are only ever taken, so the lowest free one only rises
        while True:
            name = f"{stem}{suffix}" if attempt == 0 else f"{stem}_{attempt + 1}{suffix}"
            candidate = "/".join([*parts, name])
            if candidate not in self.files and candidate not in self.used_names:
                self.used_names.add(candidate)
                self.lowest_free[key] = attempt + 1
                return candidate
            attempt += 1

    def room(self) -> int:
        return self.count - len(self.files)

    def build(self) -> Project:
        self.plant_small()
        if self.count >= PROJECT_FACTS:
            self.plant_project()
        self.fill()
        self.files = dict(sorted(self.files.items(), key=lambda _: self.rng.random()))
        return Project(self.files, self.times(), self.planted)

    def plant_small(self) -> None:
        """Facts even a folder of three files has: a timeout, a note, the largest (a long log)."""
        rng, p = self.rng, self.planted
        services = rng.sample(SERVICES, 3)
        p.timeout = self.path("logs" if self.count > 6 else "", services[0], ".log")
        self.files[p.timeout] = log_lines(rng, rng.randint(3, 8)) + rng.choice(TIMEOUT_LINES).format(
            n=rng.randint(10, 99)
        ) + "\n" + log_lines(rng, 2)  # fmt: skip
        p.notes = self.path("docs" if self.count > 6 else "", "notes", ".txt")
        self.files[p.notes] = rng.choice(NOTES) + rng.choice(ROTATION_LINES) + "\n"
        p.rotation = p.notes
        p.largest = self.path("logs" if self.count > 6 else "", services[1], ".log")
        lines = 40 if self.count < 12 else 2500  # past a small model's window on larger projects
        self.files[p.largest] = log_lines(rng, lines)
        p.absent = rng.choice(("a certificate expiry", "a memory leak", "a failed backup", "a DNS outage"))

    def plant_project(self) -> None:
        for plant in (
            self.plant_configs, self.plant_data, self.plant_docs, self.plant_source, self.plant_pairs,
            self.plant_binaries,
        ):  # fmt: skip
            plant()

    def plant_configs(self) -> None:
        """A config, near-duplicates of it that differ in the value asked about, and a pyproject.toml."""
        rng, p = self.rng, self.planted
        section, key = rng.choice((("server", "port"), ("database", "pool_size"), ("cache", "ttl_seconds")))
        value = rng.randint(100, 9999)
        p.config, p.config_key, p.config_section = self.path("config", "settings", ".ini"), key, section
        self.files[p.config] = f"[{section}]\n{key} = {value}\nhost = 0.0.0.0\n\n[logging]\nlevel = info\n"
        self.files[p.config + ".bak"] = f"[{section}]\n{key} = {value + 11}\nhost = 127.0.0.1\n"
        self.files[self.path("old", "settings", ".ini")] = f"[{section}]\n{key} = {value - 7}\n"
        p.toml, p.toml_key = "pyproject.toml", "requires-python"
        self.files[p.toml] = (
            f'[project]\nname = "{rng.choice(PACKAGES)}-{rng.choice(NOUNS)}"\nversion = "{rng.randint(1, 4)}.'
            f'{rng.randint(0, 20)}.{rng.randint(0, 9)}"\nrequires-python = ">=3.{rng.randint(8, 12)}"\n'
        )

    def plant_data(self) -> None:
        """Rows to count, and a log whose ERROR lines are counted."""
        rng, p = self.rng, self.planted
        p.csv = self.path("data", rng.choice(("orders", "customers", "shipments")), ".csv")
        rows = rng.randint(7, 40)
        self.files[p.csv] = "id,name,amount\n" + "".join(
            f"{i},{rng.choice(NOUNS)}-{i},{rng.randint(1, 999)}.{rng.randint(0, 99):02d}\n" for i in range(1, rows + 1)
        )
        p.error_log = self.path("logs", rng.choice([s for s in SERVICES if s not in p.timeout]), ".log")
        lines = [
            f"{stamp(rng)} ERROR {rng.choice(VERBS)} step failed: code {rng.randint(1, 99)}"
            for _ in range(rng.randint(2, 9))
        ]
        lines += log_lines(rng, rng.randint(10, 30)).splitlines()
        rng.shuffle(lines)
        self.files[p.error_log] = "\n".join(lines) + "\n"

    def plant_docs(self) -> None:
        """A changelog newest first, a checklist with done and open items, a Makefile, a small folder."""
        rng, p = self.rng, self.planted
        p.changelog = "CHANGELOG.md"
        major, minor = rng.randint(1, 3), rng.randint(3, 9)
        versions = [f"{major}.{minor - i}.{rng.randint(0, 5)}" for i in range(4)]
        self.files[p.changelog] = "# Changelog\n\n" + "".join(
            f"## {v} ({stamp(rng, 28 - 5 * i)[:10]})\n\n- {rng.choice(VERBS)} the {rng.choice(NOUNS)} handling\n\n"
            for i, v in enumerate(versions)
        )
        p.checklist = "TODO.md"
        items = rng.sample(CHECKLIST, 6)
        done = set(rng.sample(items, 3))
        self.files[p.checklist] = "# To do\n\n" + "".join(f"- [{'x' if i in done else ' '}] {i}\n" for i in items)
        p.makefile, p.make_target = "Makefile", "test"
        runner = rng.choice(("pytest -q tests", "python -m unittest discover -s tests", "tox -e py312"))
        self.files[p.makefile] = (
            ".PHONY: test lint build\n\ntest:\n\t" + runner + "\n\nlint:\n\truff check .\n\nbuild:\n\tpython -m build\n"
        )
        p.folder = "docs/guide"
        for topic in rng.sample(TOPICS, rng.randint(2, 4)):
            self.files[f"{p.folder}/{topic}.md"] = markdown(rng, topic.capitalize(), rng.randint(1, 3))
        self.files["README.md"] = markdown(rng, "Project", 3)

    def plant_source(self) -> None:
        """One function and one class, each defined once."""
        rng, p = self.rng, self.planted
        names = [f"{v}_{n}" for v in VERBS for n in NOUNS]
        rng.shuffle(names)
        self.names = names
        p.function = names.pop()
        package = rng.choice(PACKAGES)
        p.function_file = self.path(f"src/{package}", rng.choice(NOUNS) + "s", ".py")
        self.files[p.function_file] = python_module(rng, [names.pop(), p.function, names.pop()])
        p.klass = "".join(w.capitalize() for w in (rng.choice(NOUNS), rng.choice(("Store", "Client", "Parser"))))
        self.files[self.path(f"src/{package}", "models", ".py")] = (
            f'"""Models."""\n\n\nclass {p.klass}:\n    """Keeps one {rng.choice(NOUNS)}."""\n\n'
            "    def __init__(self, path):\n        self.path = path\n"
        )

    def plant_pairs(self) -> None:
        """Two files sharing a host name no other file holds; a port a log reports refused, and the service
        that listens on it (a join of two files)."""
        rng, p = self.rng, self.planted
        host = f"{rng.choice(('db', 'cache', 'mq'))}-{rng.randint(10, 99)}.internal"
        p.shared_host = host
        first, second = self.path("config", "deploy", ".yaml"), self.path("docs", "runbook", ".md")
        self.files[first] = f"service: {rng.choice(SERVICES)}\nreplicas: {rng.randint(2, 9)}\nbackend: {host}\n"
        self.files[second] = f"# Runbook\n\nWhen the queue stalls, restart the backend on {host} first.\n"
        p.shared_files = (first, second)
        ports = rng.sample(range(2000, 9000), 4)
        p.services = self.path("config", "services", ".yaml")
        self.files[p.services] = "".join(
            f"{n}:\n  port: {port}\n" for n, port in zip(rng.sample(SERVICES, 4), ports, strict=True)
        )
        p.refused_log = self.path("logs", "connections", ".log")
        self.files[p.refused_log] = (
            log_lines(rng, 4)
            + f"{stamp(rng)} ERROR connection refused on port {rng.choice(ports)}\n"
            + log_lines(rng, 3)
        )

    def plant_binaries(self) -> None:
        for name in self.rng.sample(BINARY_NAMES, 2):
            self.files[name] = self.rng.choice(BINARY_HEADS) + self.rng.randbytes(self.rng.randint(300, 3000))
            self.planted.binaries.append(name)

    def fill(self) -> None:
        """Files of every kind until the project has `count` of them (the facts stay unique)."""
        rng = self.rng
        makers = (self.filler_log, self.filler_source, self.filler_doc, self.filler_test, self.filler_data)
        while self.room() > 0:
            rng.choice(makers)()

    def filler_log(self) -> None:
        name = self.path("logs", self.rng.choice(SERVICES), ".log")
        self.files[name] = log_lines(self.rng, self.rng.randint(3, 60))

    def filler_source(self) -> None:
        names = getattr(self, "names", None) or [f"{v}_{n}_{self.rng.randint(2, 999)}" for v in VERBS for n in NOUNS]
        picked = [names.pop() if names else f"step_{self.rng.randint(1000, 9999)}" for _ in range(2)]
        path = self.path(f"src/{self.rng.choice(PACKAGES)}", self.rng.choice(NOUNS) + "_utils", ".py")
        self.files[path] = python_module(self.rng, picked)

    def filler_doc(self) -> None:
        topic = self.rng.choice(TOPICS)
        self.files[self.path("docs", topic, ".md")] = markdown(self.rng, topic.capitalize(), self.rng.randint(1, 4))

    def filler_test(self) -> None:
        noun = self.rng.choice(NOUNS)
        self.files[self.path("tests", f"test_{noun}", ".py")] = (
            f"def test_{noun}_round_trips():\n    assert {noun!r}.upper().lower() == {noun!r}\n"
        )

    def filler_data(self) -> None:
        name = self.path("data", self.rng.choice(("items", "events", "rates", "stock")), ".csv")
        self.files[name] = "key,value\n" + "".join(f"k{i},{self.rng.randint(1, 99)}\n" for i in range(5))

    def times(self) -> dict[str, float]:
        """Modification times a few minutes apart in a random order: one file is the newest."""
        names = list(self.files)
        self.rng.shuffle(names)
        base = 1_791_000_000.0  # 2026-10
        return {name: base + 300 * index for index, name in enumerate(names)}


def project(seed: int, count: int) -> Project:
    return Builder(seed, count).build()
