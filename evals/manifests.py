"""Ground truth from a project's manifest: its version, its license, the oldest runtime it supports and the
version of each dependency, read from the file each ecosystem's tools read: a source distribution's
PKG-INFO (or pyproject.toml), package.json, Cargo.toml, go.mod.

Each value is what a person asked for it would answer: the version as declared; the license as its
families (`MIT OR Apache-2.0` is MIT and Apache); the oldest runtime as the lowest version a constraint
admits (`>=3.8` is 3.8, `^14.17.0 || >=16` is 14.17.0); a dependency's version as the one its constraint
names (`^1.2.3` and `>=1.2.3` are 1.2.3). A value a manifest does not say is None (no question is asked).
"""

from __future__ import annotations

import json
import re
import tomllib
from dataclasses import dataclass, field
from email.parser import HeaderParser
from typing import Any

from packaging.requirements import InvalidRequirement, Requirement

MANIFESTS = ("PKG-INFO", "package.json", "Cargo.toml", "go.mod", "pyproject.toml")
RUNTIMES = {"PKG-INFO": "Python", "pyproject.toml": "Python", "package.json": "Node.js", "Cargo.toml": "Rust",
            "go.mod": "Go"}  # fmt: skip
VERSION = re.compile(r"\d+(?:\.\d+)*")
# license families as they are written in a manifest, a classifier or an answer
FAMILIES = {
    "MIT": r"\bMIT\b",
    "Apache": r"\bApache\b",
    "BSD": r"\b0?BSD\b",
    "ISC": r"\bISC\b",
    "PSF": r"\bPSF\b|Python Software Foundation",
    "MPL": r"\bMPL\b|Mozilla Public",
    "LGPL": r"\bLGPL|Lesser General Public",
    "GPL": r"(?<!L)\bGPL|(?<!Lesser )General Public License",
    "Unlicense": r"\bUnlicense\b",
    "Zlib": r"\bzlib\b",
}


@dataclass(frozen=True)
class Declared:
    """What one manifest declares."""

    path: str
    version: str | None = None
    licenses: tuple[str, ...] = ()  # families, in the order written
    runtime: str | None = None  # the oldest version of the language's runtime it supports
    dependencies: dict[str, str] = field(default_factory=dict)  # name -> the version its constraint names

    @property
    def runtime_name(self) -> str:
        return RUNTIMES[self.path.rsplit("/", 1)[-1]]


def families(text: str) -> tuple[str, ...]:
    """The license families a text names, in the order they come."""
    found = [(m.start(), name) for name, pattern in FAMILIES.items() if (m := re.search(pattern, text, re.I))]
    return tuple(name for _, name in sorted(found))


def lowest(constraint: str) -> str | None:
    """The lowest version a constraint admits, as written (`>=3.8, !=3.9.*` is 3.8; `^12.17 || >=16` 12.17)."""
    candidates = []
    for part in re.split(r"\|\||,", constraint):
        part = part.strip()
        if part.startswith(("!=", "<", "<=")) or not part:
            continue
        found = VERSION.search(part)
        if found:
            candidates.append(found.group(0))
    return min(candidates, key=lambda v: tuple(int(x) for x in v.split("."))) if candidates else None


def named_version(constraint: str) -> str | None:
    """The version a dependency's constraint names, when it names one (`^1.2.3`, `>=1.2.3,<2`, `=1.0`, `1`)."""
    if "||" in constraint or " - " in constraint or constraint.strip() in ("*", "latest", ""):
        return None
    return lowest(constraint)


def declared(files: dict[str, str]) -> Declared | None:
    """The project's manifest at the top of its folder, read (the first of MANIFESTS there that parses)."""
    for path in MANIFESTS:
        if path in files:
            try:
                return READERS[path](path, files[path])
            except (ValueError, tomllib.TOMLDecodeError, KeyError, TypeError):
                continue
    return None


def pkg_info(path: str, text: str) -> Declared:
    fields = HeaderParser().parsestr(text)
    license_text = fields.get("License-Expression") or ""
    short = fields.get("License") or ""
    if not license_text and short and "\n" not in short.strip() and len(short) <= 40:
        license_text = short
    classifiers = " ".join(c for c in fields.get_all("Classifier") or [] if c.startswith("License ::"))
    dependencies = {}
    for line in fields.get_all("Requires-Dist") or []:
        try:
            requirement = Requirement(line)
        except InvalidRequirement:
            continue
        if requirement.marker is not None and "extra" in str(requirement.marker):
            continue  # an optional extra, not what the project needs
        version = named_version(str(requirement.specifier))
        if version:
            dependencies[requirement.name] = version
    runtime = lowest(fields.get("Requires-Python") or "")
    return Declared(path, fields.get("Version"), families(license_text) or families(classifiers), runtime, dependencies)


def package_json(path: str, text: str) -> Declared:
    data = json.loads(text)
    if not isinstance(data, dict):
        raise ValueError("package.json is not an object")
    licensed = data.get("license")
    engines: dict[str, Any] = data["engines"] if isinstance(data.get("engines"), dict) else {}
    dependencies = {
        name: version
        for name, constraint in (data.get("dependencies") or {}).items()
        if isinstance(constraint, str) and (version := named_version(constraint))
    }
    node = str(engines.get("node") or "")
    return Declared(
        path, data.get("version"), families(licensed) if isinstance(licensed, str) else (), lowest(node), dependencies
    )


def cargo_toml(path: str, text: str) -> Declared:
    data = tomllib.loads(text)
    package: dict[str, Any] = data.get("package", {})
    dependencies = {}
    for name, spec in (data.get("dependencies") or {}).items():
        if isinstance(spec, dict) and "package" in spec:
            continue  # a renamed crate (`core` for rustc-std-workspace-core): not what it says it is
        constraint = spec if isinstance(spec, str) else spec.get("version") if isinstance(spec, dict) else None
        if isinstance(constraint, str) and (version := named_version(constraint)):
            dependencies[name] = version
    licensed = package.get("license")
    return Declared(
        path,
        package.get("version") if isinstance(package.get("version"), str) else None,
        families(licensed) if isinstance(licensed, str) else (),
        package.get("rust-version") if isinstance(package.get("rust-version"), str) else None,
        dependencies,
    )


GO_REQUIRE = re.compile(r"^\s*(?:require\s+)?([\w.\-/]+\.[\w.\-/]+)\s+(v\d+\.\d+\.\d+)(?:\s|$)", re.M)
GO_VERSION = re.compile(r"^go\s+(\d+\.\d+(?:\.\d+)?)\s*$", re.M)


def go_mod(path: str, text: str) -> Declared:
    """A module's go.mod: the Go version it is written for, its requirements (pseudo-versions left out); a
    module declares no version or license of its own."""
    runtime = GO_VERSION.search(text)
    dependencies = {
        m.group(1): m.group(2) for m in GO_REQUIRE.finditer(text) if not m.group(0).lstrip().startswith("module")
    }
    return Declared(path, None, (), runtime.group(1) if runtime else None, dependencies)


def pyproject(path: str, text: str) -> Declared:
    project: dict[str, Any] = tomllib.loads(text).get("project", {})
    licensed = project.get("license")
    licensed = licensed.get("text", "") if isinstance(licensed, dict) else licensed or ""
    dependencies = {}
    for line in project.get("dependencies") or []:
        try:
            requirement = Requirement(line)
        except InvalidRequirement:
            continue
        if version := named_version(str(requirement.specifier)):
            dependencies[requirement.name] = version
    return Declared(
        path,
        project.get("version"),
        families(str(licensed)),
        lowest(project.get("requires-python") or ""),
        dependencies,
    )


READERS = {"PKG-INFO": pkg_info, "package.json": package_json, "Cargo.toml": cargo_toml, "go.mod": go_mod,
           "pyproject.toml": pyproject}  # fmt: skip
