"""The development and the test split: suites drawn at run time from a seed, over generated projects and real
ones, with every question asked in one of five languages.

`dev` is what a change to the harness is tuned on and cited with; `test` is run to judge it. The two never
share a project: generated projects are drawn from the split's own stream of seeds, real projects from the
split's own part of the catalogue (evals/repos.py). The same split and seed give the same tasks, in the
same words; another seed draws other projects, other kinds of question for them and other wordings. Each
task's language is dealt in turns (each language once per five tasks, in a shuffled order), so that every
language is asked about as often as every other.
"""

from __future__ import annotations

import random
import re
import secrets
import sys
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import re2

from evals.families import open_kinds, six
from evals.languages import LANGUAGES, Language
from evals.manifests import Declared, declared
from evals.project import Planted, project
from evals.repos import Code, Project, Split, projects
from evals.suite import DEFAULT_SUITE, READING, SUITES, Suite, load_suite
from evals.symbols import Symbols, symbols_of
from evals.truth import files_of
from evals.wordings import TOPICS, wordings

GENERATED_SIZES = (40, 80, 150, 300)
GENERATED_KINDS = (
    "timeout", "count", "quote", "largest", "rotation", "absent", "config", "python", "errors", "rows", "folder",
    "latest", "defines", "todo", "smallest", "newest", "joined", "recipe", "quote_line", "python_files",
    "mentions_host", "set", "append", "delete",
)  # fmt: skip
REAL_KINDS = (
    "version", "license", "runtime", "dependency", "uses", "defines", "folder_count", "largest", "quote_definition",
    "absent",
)  # fmt: skip
DEFAULTS: dict[Split, tuple[int, int]] = {"dev": (1, 4), "test": (2, 8)}  # generated projects, real projects
# names of things a project of any language may or may not mention: a question about one none mentions is a no
ABSENT_NAMES = (
    "Kubernetes", "GraphQL", "Protobuf", "Cassandra", "WebAssembly", "Terraform", "RabbitMQ", "Elasticsearch",
    "MongoDB", "Kafka", "Prometheus", "OAuth", "Redis", "PostgreSQL", "gRPC", "Bluetooth",
)  # fmt: skip
TEST_PARTS = ("test", "tests", "testing", "__tests__", "spec", "specs", "testdata", "benches", "bench", "examples")


class Dealer:
    """The languages, dealt in turns: each once per round of five, each round in a new shuffled order."""

    def __init__(self, rng: random.Random, languages: tuple[Language, ...] = LANGUAGES) -> None:
        self.rng, self.languages, self.hand = rng, languages, list[Language]()

    def __next__(self) -> Language:
        if not self.hand:
            self.hand = list(self.languages)
            self.rng.shuffle(self.hand)
        return self.hand.pop()

    def __iter__(self) -> Iterator[Language]:
        return self


def split_suites(
    split: Split,
    seed: int,
    generated: int | None = None,
    real: int | None = None,
    languages: tuple[Language, ...] = LANGUAGES,
) -> list[Suite]:
    """The split's suites for this seed: `generated` generated projects, then `real` real ones (a real
    project's source is fetched and checked the first time; it is read to choose what to ask)."""
    rng = random.Random(f"{split}:{seed}")
    dealer = Dealer(random.Random(f"{split}:{seed}:languages"), languages)
    many, few = DEFAULTS[split]
    suites = [generated_suite(split, seed, rng, dealer) for _ in range(many if generated is None else generated)]
    for chosen in sample(projects(split), few if real is None else real, rng):
        suites.append(real_suite(split, seed, chosen, rng, dealer))
    return suites


def sample(pool: list[Project], count: int, rng: random.Random) -> list[Project]:
    """`count` projects, spread over their languages (a language at a time, round the languages)."""
    by_language: dict[Code, list[Project]] = {}
    for project_ in pool:
        by_language.setdefault(project_.language, []).append(project_)
    for members in by_language.values():
        rng.shuffle(members)
    order = list(by_language)
    rng.shuffle(order)
    chosen: list[Project] = []
    while len(chosen) < min(count, len(pool)):
        for code in order:
            if by_language[code] and len(chosen) < count:
                chosen.append(by_language[code].pop())
    return chosen


def task_entry(
    kind: str, made: dict[str, Any], language: Language, words: dict[str, str], rng: random.Random
) -> dict[str, Any]:
    prompt = rng.choice(wordings(kind, language)).format(**words)
    return {"id": kind, "prompt": prompt, "kind": kind, "language": language, **made}


def generated_suite(split: Split, seed: int, rng: random.Random, dealer: Dealer) -> Suite:
    """A generated project of a size drawn from GENERATED_SIZES, asked every kind of GENERATED_KINDS."""
    size, project_seed = rng.choice(GENERATED_SIZES), rng.randrange(1 << 30)
    planted = project(project_seed, size).planted
    makers = {**six(planted, size), **open_kinds(planted)}
    tasks = []
    for kind in GENERATED_KINDS:
        language = next(dealer)
        symbol = rng.choice((planted.function, planted.klass))
        made = makers["klass" if kind == "defines" and symbol == planted.klass else kind](planted, rng)
        tasks.append(task_entry(kind, made, language, generated_words(planted, made, symbol, language), rng))
    return Suite.model_validate(
        {
            "name": f"{split}-{seed}-generated-{size}-{project_seed}",
            "description": f"A generated project of {size} files, every kind of question in five languages.",
            "workspace": {"builder": "project", "seed": project_seed, "files": size},
            "tools": list(READING),
            "tasks": tasks,
            "split": split,
        }
    )


def generated_words(p: Planted, made: dict[str, Any], symbol: str, language: Language) -> dict[str, str]:
    check = made["check"]
    return {
        "notes": p.notes, "absent": TOPICS[p.absent][language], "key": p.config_key, "config": p.config,
        "error_log": p.error_log, "csv": p.csv, "folder": p.folder, "symbol": symbol, "refused_log": p.refused_log,
        "services": p.services, "timeout": p.timeout, "host": p.shared_host, "value": check.get("value", ""),
        "item": "check the backups", "bak": p.config + ".bak",
    }  # fmt: skip


@dataclass(frozen=True)
class Facts:
    """What a real project offers to ask about."""

    files: dict[str, str]
    sizes: dict[str, int]
    manifest: Declared | None
    symbols: Symbols


def real_suite(split: Split, seed: int, chosen: Project, rng: random.Random, dealer: Dealer) -> Suite:
    from evals.sources import tree  # fetched only when a split asks for a real project

    folder = tree(chosen.archive)
    files = files_of(folder)
    facts = Facts(files, {name: (folder / name).stat().st_size for name in files}, declared(files), symbols_of(files))
    tasks = []
    used: set[str] = set()
    for kind in REAL_KINDS:
        asked = REAL_MAKERS[kind](facts, rng, used)
        if asked is None:
            continue
        made, words = asked
        tasks.append(task_entry(kind, made, next(dealer), words, rng))
    archive = chosen.archive
    workspace = {"registry": archive.registry, "name": archive.name, "version": archive.version,
                 "sha256": archive.sha256, "path": archive.path, "root": archive.root}  # fmt: skip
    return Suite.model_validate(
        {
            "name": f"{split}-{seed}-{re.sub(r'[^A-Za-z0-9_.-]+', '_', chosen.name)}",
            "description": f"{chosen.name} {archive.version} ({chosen.language}), questions in five languages.",
            "workspace": workspace,
            "tools": list(READING),
            "tasks": tasks,
            "split": split,
            "code": chosen.language,
        }
    )


Asked = tuple[dict[str, Any], dict[str, str]] | None  # a task's check (and needs) and its words, or nothing to ask
Maker = Callable[[Facts, random.Random, set[str]], Asked]


def manifest_task(key: str) -> Maker:
    def make(facts: Facts, rng: random.Random, used: set[str]) -> Asked:
        made = facts.manifest
        if made is None:
            return None
        words = {"manifest": made.path, "runtime": made.runtime_name}
        check: dict[str, Any] = {"kind": "license" if key == "license" else "manifest_value", "path": made.path}
        if key == "license" and not made.licenses:
            return None
        if key in ("version", "runtime") and not getattr(made, key):
            return None
        if key == "dependency":
            if not made.dependencies:
                return None
            name = rng.choice(sorted(made.dependencies))
            check["target"], words["dep"] = name, name
        return {"check": {**check, "key": key}, "needs": ["read_file"]}, words

    return make


def in_tests(path: str) -> bool:
    parts = path.lower().split("/")
    name = parts[-1]
    return (
        any(p in TEST_PARTS for p in parts[:-1])
        or name.startswith("test_")
        or bool(re.search(r"(_test\.go|\.test\.[jt]sx?|\.spec\.[jt]sx?|_test\.py)$", name))
    )


def distinctive(name: str) -> bool:
    """A name a question can ask about without meaning something else: long, or written as code."""
    return len(name) >= 6 and not name.startswith("__") and (len(name) >= 9 or "_" in name or name != name.lower())


def defined_once(facts: Facts) -> dict[str, str]:
    """The distinctive names defined in exactly one file, outside tests, with that file."""
    where: dict[str, set[str]] = {}
    for path, names in facts.symbols.defined.items():
        for name in names:
            where.setdefault(name, set()).add(path)
    return {
        name: next(iter(paths))
        for name, paths in sorted(where.items())
        if len(paths) == 1 and distinctive(name) and not in_tests(next(iter(paths)))
    }


def defines_task(facts: Facts, rng: random.Random, used: set[str]) -> Asked:
    candidates = [name for name in defined_once(facts) if name not in used]
    if not candidates:
        return None
    name = rng.choice(candidates)
    used.add(name)
    return {"check": {"kind": "defines", "symbol": name}, "needs": ["search"]}, {"symbol": name}


def uses_task(facts: Facts, rng: random.Random, used: set[str]) -> Asked:
    candidates = [name for name in defined_once(facts) if name not in used and 1 <= len(facts.symbols.users(name)) <= 3]
    if not candidates:
        return None
    name = rng.choice(candidates)
    used.add(name)
    return {"check": {"kind": "uses", "symbol": name}, "needs": ["search"]}, {"symbol": name}


def quote_task(facts: Facts, rng: random.Random, used: set[str]) -> Asked:
    lines = []
    for name, path in defined_once(facts).items():
        if name in used:
            continue
        line = facts.files[path].splitlines()[facts.symbols.defined[path][name] - 1].strip()
        if 10 <= len(line) <= 120 and sum(1 for other in facts.files[path].splitlines() if other.strip() == line) == 1:
            lines.append((name, path, line))
    if not lines:
        return None
    name, path, line = rng.choice(lines)
    used.add(name)
    check = {"kind": "quotes_line", "path": path, "files_matching": rf"^\s*{re2.escape(line)}\s*$"}
    return {"check": check, "needs": ["read_file"]}, {"symbol": name, "file": path}


def folder_task(facts: Facts, rng: random.Random, used: set[str]) -> Asked:
    """A folder of two to thirty files and no folder inside it (so that its files are counted one way)."""
    holding: dict[str, int] = {}
    for path in facts.files:
        if "/" in path:
            holding[path.rsplit("/", 1)[0]] = holding.get(path.rsplit("/", 1)[0], 0) + 1
    leaves = [f for f, n in sorted(holding.items()) if 2 <= n <= 30 and not any(o.startswith(f + "/") for o in holding)]
    if not leaves:
        return None
    folder = rng.choice(leaves)
    return {"check": {"kind": "file_count", "path": folder}, "needs": ["list_files"]}, {"folder": folder}


def largest_task(facts: Facts, rng: random.Random, used: set[str]) -> Asked:
    sizes = sorted(facts.sizes.values())
    if len(sizes) < 2 or sizes[-1] == sizes[-2]:
        return None
    return {"check": {"kind": "largest_file"}, "needs": ["list_files"]}, {}


def absent_task(facts: Facts, rng: random.Random, used: set[str]) -> Asked:
    text = "\n".join(facts.files.values()).lower()
    names = [name for name in ABSENT_NAMES if name.lower() not in text]
    if not names:
        return None
    name = rng.choice(names)
    return {"check": {"kind": "yes_names_file", "files_matching": re2.escape(name)}, "needs": ["search"]}, {
        "absent": name
    }


REAL_MAKERS: dict[str, Maker] = {
    "version": manifest_task("version"),
    "license": manifest_task("license"),
    "runtime": manifest_task("runtime"),
    "dependency": manifest_task("dependency"),
    "defines": defines_task,
    "uses": uses_task,
    "folder_count": folder_task,
    "largest": largest_task,
    "quote_definition": quote_task,
    "absent": absent_task,
}


def write_split(suites: list[Suite], folder: Path) -> list[Path]:
    """The split's suites as JSON files (to look at, or to run one alone with --suite FILE)."""
    folder.mkdir(parents=True, exist_ok=True)
    written = []
    for suite in suites:
        path = folder / f"{suite.name}.json"
        path.write_text(suite.model_dump_json(indent=1, exclude_none=True) + "\n", encoding="utf-8")
        written.append(path)
    return written


def files_in(path: Path) -> int:
    """How many files a suite's workspace has, for ordering suites small to large (a folder's: unknown, last)."""
    workspace = load_suite(path).workspace
    return getattr(workspace, "files", 3) if hasattr(workspace, "builder") else 1000


def suites_named(names: list[str], draw: Draw | None = None) -> list[Suite]:
    """Suites by file or by name; 'all' is every suite in evals/suites but the seed's tool set; 'dev' and
    'test' are the splits' suites, drawn as `draw` says."""
    wanted = names or [str(DEFAULT_SUITE)]
    if "all" in wanted:
        found = [p for p in SUITES.glob("*.json") if p.stem != "seed"]
        wanted = [str(p) for p in sorted(found, key=lambda p: (p.stem.startswith("family"), files_in(p), p.stem))]
    suites: list[Suite] = []
    for name in wanted:
        split = SPLITS.get(name)
        if split is not None:
            draw = draw or Draw()
            suites += split_suites(split, draw.seed_for(split), draw.generated, draw.real, draw.languages)
            continue
        path = SUITES / f"{name}.json" if "/" not in name and not name.endswith(".json") else Path(name)
        suites.append(load_suite(path))
    return suites


SPLITS: dict[str, Split] = {"dev": "dev", "test": "test"}


@dataclass
class Draw:
    """How a split is drawn: its seed (dev: 0 unless given; test: a fresh one unless given), its size, its
    languages."""

    seed: int | None = None
    generated: int | None = None
    real: int | None = None
    languages: tuple[Language, ...] = LANGUAGES

    def seed_for(self, split: str) -> int:
        if self.seed is None:
            self.seed = 0 if split == "dev" else secrets.randbelow(1_000_000)
            print(f"eval: the {split} split is drawn with --seed {self.seed}", file=sys.stderr)
        return self.seed


def languages_from(text: str) -> tuple[Language, ...]:
    chosen = tuple(part.strip() for part in text.split(",") if part.strip())
    unknown = [c for c in chosen if c not in LANGUAGES]
    if unknown or not chosen:
        raise ValueError(f"--languages takes some of {','.join(LANGUAGES)}, not {text!r}")
    return tuple(c for c in LANGUAGES if c in chosen)
