"""Ground truth from manifests: each ecosystem's file read as its own tools read it, and each value as a
person asked for it would give it."""

from __future__ import annotations

import json

from evals.manifests import declared, families, lowest, named_version

PKG_INFO = """Metadata-Version: 2.1
Name: demo
Version: 2.3.0
Requires-Python: !=3.0.*,!=3.1.*,>=2.7
Requires-Dist: idna<4,>=2.5
Requires-Dist: pytest>=7; extra == "test"
Classifier: License :: OSI Approved :: BSD License

A description that mentions the MIT license in passing.
"""
CARGO = """[package]
name = "demo"
version = "0.4.3"
license = "MIT/Apache-2.0"
rust-version = "1.56"

[dependencies.serde]
version = "1.0"
optional = true

[dependencies.core]
version = "1.0.0"
package = "rustc-std-workspace-core"
"""
GO_MOD = """module example.com/demo

go 1.15

require (
\tgithub.com/rivo/uniseg v0.2.0
\tgolang.org/x/sys v0.0.0-20220811171246-fbc7d0a398ab
)
"""


def test_a_source_distributions_metadata() -> None:
    made = declared({"PKG-INFO": PKG_INFO})
    assert made is not None
    assert (made.version, made.licenses, made.runtime) == ("2.3.0", ("BSD",), "2.7")
    assert made.dependencies == {"idna": "2.5"}  # an extra's requirement is not what the project needs
    assert made.runtime_name == "Python"


def test_package_json_cargo_toml_and_go_mod() -> None:
    package = {"version": "5.3.0", "license": "MIT", "engines": {"node": "^12.17.0 || ^14.13 || >=16.0.0"},
               "dependencies": {"ms": "2.1.2", "debug": "^4.3.4", "any": "*", "either": "1 || 2"}}  # fmt: skip
    made = declared({"package.json": json.dumps(package)})
    assert made is not None and (made.version, made.licenses, made.runtime) == ("5.3.0", ("MIT",), "12.17.0")
    assert made.dependencies == {"ms": "2.1.2", "debug": "4.3.4"}
    crate = declared({"Cargo.toml": CARGO})
    assert crate is not None and (crate.version, crate.licenses, crate.runtime) == ("0.4.3", ("MIT", "Apache"), "1.56")
    assert crate.dependencies == {"serde": "1.0"}  # a renamed crate is not what it is called
    module = declared({"go.mod": GO_MOD})
    assert module is not None and (module.version, module.runtime) == (None, "1.15")
    assert module.dependencies == {"github.com/rivo/uniseg": "v0.2.0"}  # a pseudo-version is no version to ask


def test_constraints_and_license_texts() -> None:
    assert lowest(">=3.8, !=3.9.*") == "3.8" and lowest("<4") is None
    assert named_version("^1.2.3") == "1.2.3" and named_version("=1.0.0-alpha.5") == "1.0.0"
    assert named_version("*") is None and named_version("1 - 2") is None
    assert families("Apache-2.0 OR MIT") == ("Apache", "MIT")
    assert families("GNU Lesser General Public License v3") == ("LGPL",)
    assert families("new BSD License") == ("BSD",)
