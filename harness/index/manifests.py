"""A project's manifests, parsed: what each declares of the project, as written there.

The formats each ecosystem's own tools read: a built package's PKG-INFO, pyproject.toml (PEP 621 or Poetry),
setup.cfg, package.json, composer.json, Cargo.toml, go.mod, and Maven's pom.xml. Values are given as the
manifest writes them (`>=3.8`, `^1.2.3`, `MIT OR Apache-2.0`), never interpreted: a person asking which
Python a project needs reads the constraint.
"""

from __future__ import annotations

import configparser
import json
import re
import tomllib
import xml.etree.ElementTree as ElementTree
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from email.parser import HeaderParser
from typing import Any

MANIFEST_NAMES = ("PKG-INFO", "pyproject.toml", "setup.cfg", "package.json", "composer.json", "Cargo.toml", "go.mod",
                  "pom.xml")  # fmt: skip


@dataclass(frozen=True)
class Manifest:
    """What one manifest declares; a field it does not declare is None or empty."""

    path: str
    name: str | None = None
    version: str | None = None
    license: str | None = None
    runtime: tuple[str, str] | None = None  # (the runtime, the versions it allows as written)
    dependencies: dict[str, str] = field(default_factory=dict)  # name -> constraint as written ("" for none)
    dev_dependencies: dict[str, str] = field(default_factory=dict)
    scripts: dict[str, str] = field(default_factory=dict)


def text(value: object) -> str | None:
    return value if isinstance(value, str) and value.strip() else None


def constraints(table: object) -> dict[str, str]:
    """A table of dependencies (`name: constraint` or `name: {version: ...}`) as names and constraints."""
    if not isinstance(table, Mapping):
        return {}
    out = {}
    for name, spec in table.items():
        version = spec if isinstance(spec, str) else spec.get("version") if isinstance(spec, Mapping) else None
        out[str(name)] = str(version or "")
    return out


REQUIREMENT = re.compile(r"^\s*([A-Za-z0-9][A-Za-z0-9._-]*)\s*(?:\[[^\]]*\])?\s*\(?([^;()]*)\)?\s*(?:;(.*))?$")


def requirements(lines: list[str], keep_extras: bool = False) -> dict[str, str]:
    """PEP 508 requirements as names and constraints; those an extra asks for are left out unless asked."""
    out = {}
    for line in lines:
        found = REQUIREMENT.match(line)
        if found is None or (not keep_extras and found.group(3) and "extra" in found.group(3)):
            continue
        out[found.group(1)] = found.group(2).strip()
    return out


def pkg_info(path: str, data: str) -> Manifest:
    fields = HeaderParser().parsestr(data)
    license_text = fields.get("License-Expression") or fields.get("License")
    classifiers = [c.split("::")[-1].strip() for c in fields.get_all("Classifier") or [] if c.startswith("License ::")]
    if not license_text or "\n" in license_text.strip() or len(license_text) > 80:
        license_text = ", ".join(classifiers) or None
    python = fields.get("Requires-Python")
    return Manifest(
        path,
        fields.get("Name"),
        fields.get("Version"),
        license_text,
        ("Python", python) if python else None,
        requirements(fields.get_all("Requires-Dist") or []),
    )


def pyproject(path: str, data: str) -> Manifest:
    parsed = tomllib.loads(data)
    project: dict[str, Any] = parsed.get("project") or {}
    poetry: dict[str, Any] = (parsed.get("tool") or {}).get("poetry") or {}
    if poetry and not project:
        deps = constraints(poetry.get("dependencies"))
        python = deps.pop("python", None)
        licensed = text(poetry.get("license"))
        return Manifest(path, text(poetry.get("name")), text(poetry.get("version")), licensed,
                        ("Python", python) if python else None, deps, constraints(poetry.get("dev-dependencies")),
                        {k: str(v) for k, v in (poetry.get("scripts") or {}).items()})  # fmt: skip
    licensed = project.get("license")
    licensed = licensed.get("text") if isinstance(licensed, Mapping) else licensed
    python = text(project.get("requires-python"))
    optional = project.get("optional-dependencies") or {}
    dev = {name: spec for group in optional.values() for name, spec in requirements(list(group), True).items()}
    return Manifest(path, text(project.get("name")), text(project.get("version")), text(licensed),
                    ("Python", python) if python else None, requirements(list(project.get("dependencies") or [])),
                    dev, {k: str(v) for k, v in (project.get("scripts") or {}).items()})  # fmt: skip


def setup_cfg(path: str, data: str) -> Manifest:
    parser = configparser.ConfigParser(interpolation=None)
    parser.read_string(data)
    metadata = parser["metadata"] if parser.has_section("metadata") else {}
    options = parser["options"] if parser.has_section("options") else {}
    python = options.get("python_requires")
    needs = [line for line in str(options.get("install_requires", "")).splitlines() if line.strip()]
    return Manifest(path, metadata.get("name"), metadata.get("version"), metadata.get("license"),
                    ("Python", python) if python else None, requirements(needs))  # fmt: skip


def package_json(path: str, data: str) -> Manifest:
    parsed = json.loads(data)
    if not isinstance(parsed, dict):
        raise ValueError("not an object")
    engines: dict[str, Any] = parsed["engines"] if isinstance(parsed.get("engines"), dict) else {}
    node = text(engines.get("node"))
    licensed = parsed.get("license")
    licensed = licensed.get("type") if isinstance(licensed, Mapping) else licensed
    scripts: dict[str, Any] = parsed["scripts"] if isinstance(parsed.get("scripts"), dict) else {}
    return Manifest(path, text(parsed.get("name")), text(parsed.get("version")), text(licensed),
                    ("Node.js", node) if node else None, constraints(parsed.get("dependencies")),
                    constraints(parsed.get("devDependencies")), {k: str(v) for k, v in scripts.items()})  # fmt: skip


def composer_json(path: str, data: str) -> Manifest:
    parsed = json.loads(data)
    if not isinstance(parsed, dict):
        raise ValueError("not an object")
    needs = constraints(parsed.get("require"))
    php = needs.pop("php", None)
    licensed = parsed.get("license")
    licensed = " OR ".join(licensed) if isinstance(licensed, list) else licensed
    return Manifest(path, text(parsed.get("name")), text(parsed.get("version")), text(licensed),
                    ("PHP", php) if php else None, needs, constraints(parsed.get("require-dev")))  # fmt: skip


def cargo_toml(path: str, data: str) -> Manifest:
    parsed = tomllib.loads(data)
    package: dict[str, Any] = parsed.get("package") or {}
    rust = text(package.get("rust-version"))
    return Manifest(path, text(package.get("name")), text(package.get("version")), text(package.get("license")),
                    ("Rust", rust) if rust else None, constraints(parsed.get("dependencies")),
                    constraints(parsed.get("dev-dependencies")))  # fmt: skip


GO_REQUIRE = re.compile(r"^\s*(?:require\s+)?([\w.~-]+(?:/[\w.~-]+)+)\s+(v[\w.+-]+)", re.M)


def go_mod(path: str, data: str) -> Manifest:
    module = re.search(r"^module\s+(\S+)", data, re.M)
    version = re.search(r"^go\s+(\S+)", data, re.M)
    needs = {m.group(1): m.group(2) for m in GO_REQUIRE.finditer(data)}
    return Manifest(path, module.group(1) if module else None, None, None,
                    ("Go", version.group(1)) if version else None, needs)  # fmt: skip


def pom_xml(path: str, data: str) -> Manifest:
    root = ElementTree.fromstring(data)
    ns = {"m": root.tag[1:].split("}")[0]} if root.tag.startswith("{") else {}
    prefix = "m:" if ns else ""

    def find(node: ElementTree.Element, name: str) -> str | None:
        found = node.find(f"{prefix}{name}", ns)
        return found.text.strip() if found is not None and found.text else None

    needs = {}
    for dependency in root.findall(f"{prefix}dependencies/{prefix}dependency", ns):
        needs[f"{find(dependency, 'groupId')}:{find(dependency, 'artifactId')}"] = find(dependency, "version") or ""
    java = root.find(f"{prefix}properties/{prefix}maven.compiler.source", ns)
    licensed = root.find(f"{prefix}licenses/{prefix}license/{prefix}name", ns)
    return Manifest(path, find(root, "artifactId"), find(root, "version"),
                    licensed.text.strip() if licensed is not None and licensed.text else None,
                    ("Java", java.text.strip()) if java is not None and java.text else None, needs)  # fmt: skip


READERS: dict[str, Callable[[str, str], Manifest]] = {
    "PKG-INFO": pkg_info, "pyproject.toml": pyproject, "setup.cfg": setup_cfg, "package.json": package_json,
    "composer.json": composer_json, "Cargo.toml": cargo_toml, "go.mod": go_mod, "pom.xml": pom_xml,
}  # fmt: skip


def parsed(path: str, data: str) -> Manifest | None:
    """The manifest at `path` (known by its file name), or None when it does not parse as what it says."""
    reader = READERS.get(path.rsplit("/", 1)[-1])
    if reader is None:
        return None
    try:
        return reader(path, data)
    except (ValueError, KeyError, TypeError, AttributeError, tomllib.TOMLDecodeError, configparser.Error,
            ElementTree.ParseError):  # fmt: skip
        return None
