"""The real projects the eval draws from: open-source projects nobody here wrote, in five languages, each pinned
by version and sha256 (evals/sources.py fetches and checks them) and assigned once to the development or the
test split. A test split draws its sample from the test projects by its seed; what the eval is tuned on (the
development split) never holds one of them.

Python from source distributions on the package index, JavaScript and TypeScript from the npm registry, Go
and Rust from Debian's packages of their source (`golang-*-dev`, `librust-*-dev`: the module or crate as
published, under `/usr/share`).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Literal

from evals.sources import Archive

Split = Literal["dev", "test"]
Code = Literal["python", "javascript", "typescript", "go", "rust"]


@dataclass(frozen=True)
class Project:
    name: str
    language: Code  # the language most of its code is in
    split: Split
    archive: Archive


def debian(package: str, version: str, sha256: str, path: str, root: str) -> Archive:
    return Archive("debian", package, version, sha256, path, root)


PROJECTS: tuple[Project, ...] = (
    Project(
        "attrs",
        "python",
        "dev",
        Archive("pypi", "attrs", "24.2.0", "5cfb1b9148b5b086569baec03f20d7b6bf3bcacc9a42bebf87ffaaca362f6346"),
    ),
    Project(
        "click",
        "python",
        "dev",
        Archive("pypi", "click", "8.1.7", "ca9853ad459e787e2192211578cc907e7594e294c7ccc834310722b41b9ca6de"),
    ),
    Project(
        "tomli",
        "python",
        "dev",
        Archive("pypi", "tomli", "2.0.1", "de526c12914f0c550d15924c62d72abc48d6fe7364aa87328337a31007fe8a4f"),
    ),
    Project(
        "itsdangerous",
        "python",
        "test",
        Archive("pypi", "itsdangerous", "2.2.0", "e0050c0b7da1eea53ffaf149c0cfbb5c6e2e2b69c4bef22c81fa6eb73e5f6173"),
    ),
    Project(
        "markupsafe",
        "python",
        "test",
        Archive("pypi", "markupsafe", "2.1.5", "d283d37a890ba4c1ae73ffadf8046435c76e7bc2247bbb63c00bd1a709c6544b"),
    ),
    Project(
        "packaging",
        "python",
        "test",
        Archive("pypi", "packaging", "24.1", "026ed72c8ed3fcce5bf8950572258698927fd1dbda10a5e981cdf0ac37f4f002"),
    ),
    Project(
        "pluggy",
        "python",
        "test",
        Archive("pypi", "pluggy", "1.5.0", "2cffa88e94fdc978c4c574f15f9e59b7f4201d439195c3715ca9e2486f1d0cf1"),
    ),
    Project(
        "iniconfig",
        "python",
        "test",
        Archive("pypi", "iniconfig", "2.0.0", "2d91e135bf72d31a410b17c16da610a82cb55f6b0477d1a902134b24a455b8b3"),
    ),
    Project(
        "idna",
        "python",
        "test",
        Archive("pypi", "idna", "3.7", "028ff3aadf0609c1fd278d8ea3089299412a7a8b9bd005dd08b9f8285bcb5cfc"),
    ),
    Project(
        "colorama",
        "python",
        "test",
        Archive("pypi", "colorama", "0.4.6", "08695f5cb7ed6e0531a20572697297273c47b8cae5a63ffc6d6ed5c201be6e44"),
    ),
    Project(
        "decorator",
        "python",
        "test",
        Archive("pypi", "decorator", "5.1.1", "637996211036b6385ef91435e4fae22989472f9d571faba8927ba8253acbc330"),
    ),
    Project(
        "tabulate",
        "python",
        "test",
        Archive("pypi", "tabulate", "0.9.0", "0095b12bf5966de529c0feb1fa08671671b3368eec77d7ef7ab114be2c068b3c"),
    ),
    Project(
        "more-itertools",
        "python",
        "test",
        Archive("pypi", "more-itertools", "10.3.0", "e5d93ef411224fbcef366a6e8ddc4c5781bc6359d43412a65dd5964e46111463"),
    ),
    Project(
        "zipp",
        "python",
        "test",
        Archive("pypi", "zipp", "3.19.2", "bf1dcf6450f873a13e952a29504887c89e6de7506209e5b1bcc3460135d4de19"),
    ),
    Project(
        "python-dotenv",
        "python",
        "test",
        Archive("pypi", "python-dotenv", "1.0.1", "e324ee90a023d808f1959c46bcbc04446a10ced277783dc6ee09987c37ec10ca"),
    ),
    Project(
        "humanize",
        "python",
        "test",
        Archive("pypi", "humanize", "4.9.0", "582a265c931c683a7e9b8ed9559089dea7edcf6cc95be39a3cbc2c5d5ac2bcfa"),
    ),
    Project(
        "platformdirs",
        "python",
        "test",
        Archive("pypi", "platformdirs", "4.2.2", "38b7b51f512eed9e84a22788b4bce1de17c0adb134d6becb09836e37d8654cd3"),
    ),
    Project(
        "cachetools",
        "python",
        "test",
        Archive("pypi", "cachetools", "5.3.3", "ba29e2dfa0b8b556606f097407ed1aa62080ee108ab0dc5ec9d6a723a007d105"),
    ),
    Project(
        "toolz",
        "python",
        "test",
        Archive("pypi", "toolz", "0.12.1", "ecca342664893f177a13dac0e6b41cbd8ac25a358e5f215316d43e2100224f4d"),
    ),
    Project(
        "sortedcontainers",
        "python",
        "test",
        Archive(
            "pypi", "sortedcontainers", "2.4.0", "25caa5a06cc30b6b83d11423433f65d1f9d76c4c6a0c90e3379eaa43b9bfdb88"
        ),
    ),
    Project(
        "six",
        "python",
        "test",
        Archive("pypi", "six", "1.16.0", "1e61c37477a1626458e36f7b1d82aa5c9b094fa4802892072e49de9c60c4c926"),
    ),
    Project(
        "requests",
        "python",
        "test",
        Archive("pypi", "requests", "2.32.3", "55365417734eb18255590a9ff9eb97e9e1da868d4ccd6402399eaf68af20a760"),
    ),
    Project(
        "commander",
        "javascript",
        "dev",
        Archive("npm", "commander", "12.1.0", "56affc6ddafe486f94b428ae2823d059cf60d4dae2f33eaaf1b1ec4306f73173"),
    ),
    Project(
        "semver",
        "javascript",
        "dev",
        Archive("npm", "semver", "7.6.2", "def1e6490ac0c7810b0b815fe6542f3213d44c95b068059dcac2f81e2c2237a4"),
    ),
    Project(
        "immer",
        "typescript",
        "dev",
        Archive("npm", "immer", "10.1.1", "946cc79684ad1e080b09d4f2da14247b272aa667f3aaa100f35846148689f08f"),
    ),
    Project(
        "axios",
        "javascript",
        "test",
        Archive("npm", "axios", "1.7.2", "ee0d6056e1ea34aef4979f1b68c64fb978d4f8f667cdc985d739ea70caeb6ba6"),
    ),
    Project(
        "express",
        "javascript",
        "test",
        Archive("npm", "express", "4.19.2", "1b18c90e7e9fc4cb3e4dfe6b5f11c21b85509162e88ca5c6b63b9c6b5ca085bf"),
    ),
    Project(
        "js-yaml",
        "javascript",
        "test",
        Archive("npm", "js-yaml", "4.1.0", "0dae332559cf22b21c26ea70e732afd8303ff99412f9c3d9d209faa8882cf2ca"),
    ),
    Project(
        "minimist",
        "javascript",
        "test",
        Archive("npm", "minimist", "1.2.8", "350a76c115b393c19d24654834261e5dc9f0e8cc5e08f3937fa80140f3e4ce83"),
    ),
    Project(
        "uuid",
        "javascript",
        "test",
        Archive("npm", "uuid", "10.0.0", "d7af318b653a28eb73b1fe62bc6f88b2ccbd85c68c6764f98e8ddeca6f3b54b1"),
    ),
    Project(
        "qs",
        "javascript",
        "test",
        Archive("npm", "qs", "6.12.1", "0cf6560b332a307017549049de7ddd4fb588b5a0542d65069de7557f415fc763"),
    ),
    Project(
        "marked",
        "javascript",
        "test",
        Archive("npm", "marked", "13.0.2", "52a0f001a07f21735259e7bdc9967bc2b2aa4b710bc0e2f198031cd0f2cd7e52"),
    ),
    Project(
        "picomatch",
        "javascript",
        "test",
        Archive("npm", "picomatch", "4.0.2", "bbabc20a1c334a17839001c231e682eca122a66a3a838913790cba55cf73cea7"),
    ),
    Project(
        "yargs-parser",
        "javascript",
        "test",
        Archive("npm", "yargs-parser", "21.1.1", "342b7d527d4a72265b64f27711517349c3c05ee302ab3b8c7452f0bfbe709151"),
    ),
    Project(
        "dotenv",
        "javascript",
        "test",
        Archive("npm", "dotenv", "16.4.5", "0ae24e5b77e0346558b024ab2ee87bc4d42e3570147e7af755cf6e8671e96637"),
    ),
    Project(
        "chalk",
        "javascript",
        "test",
        Archive("npm", "chalk", "5.3.0", "02ae1fe87987a93d08098699e0dd5a029ecd0f81466d497de5c9262077e232e9"),
    ),
    Project(
        "debug",
        "javascript",
        "test",
        Archive("npm", "debug", "4.3.5", "c4929fdeaf8ec4c08ffbe88316b4db5e28080475f7cb90a494882d5b01bf3d1a"),
    ),
    Project(
        "mime",
        "typescript",
        "test",
        Archive("npm", "mime", "4.0.3", "c8cda3a1fe05596af26321611fa9c7dd593ec269ae388e85a2529ebc3d9040dd"),
    ),
    Project(
        "ajv",
        "typescript",
        "test",
        Archive("npm", "ajv", "8.16.0", "e16e63cca4da3ad832f6ed6a2b2b48bb721a5dc826bbecbdfb897e7806343a69"),
    ),
    Project(
        "zod",
        "javascript",
        "test",
        Archive("npm", "zod", "3.23.8", "461cea3c57c75a4ee97bf678e9e4669d963fc57c6ecec93a858aba11ca709e19"),
    ),
    Project(
        "github.com/BurntSushi/toml",
        "go",
        "dev",
        debian(
            "golang-github-burntsushi-toml-dev",
            "1.2.0-2",
            "eb0bc9f96d02b33034311604f787ca7ab071de026c9abdffa6ae40a63362f7b8",
            "pool/main/g/golang-toml/golang-github-burntsushi-toml-dev_1.2.0-2_all.deb",
            "usr/share/gocode/src/github.com/BurntSushi/toml",
        ),
    ),
    Project(
        "github.com/google/uuid",
        "go",
        "dev",
        debian(
            "golang-github-google-uuid-dev",
            "1.3.0-1",
            "f79ead959ee04842fcb410347e7023a3c4c357c17f77b9bb13cff30ef4353351",
            "pool/main/g/golang-github-google-uuid/golang-github-google-uuid-dev_1.3.0-1_all.deb",
            "usr/share/gocode/src/github.com/google/uuid",
        ),
    ),
    Project(
        "github.com/mattn/go-runewidth",
        "go",
        "dev",
        debian(
            "golang-github-mattn-go-runewidth-dev",
            "0.0.14-1",
            "422dd4fbccebaab51df46ee3c454ddd94b26b0be86c5b4d5a2c13d6555fc834b",
            "pool/main/g/golang-github-mattn-go-runewidth/golang-github-mattn-go-runewidth-dev_0.0.14-1_all.deb",
            "usr/share/gocode/src/github.com/mattn/go-runewidth",
        ),
    ),
    Project(
        "github.com/cespare/xxhash",
        "go",
        "test",
        debian(
            "golang-github-cespare-xxhash-dev",
            "2.1.1-2",
            "58e371a185bc1c41fefa1eb6eaacd4a39bf8a579645547c12f0121f4fe6daf95",
            "pool/main/g/golang-github-cespare-xxhash/golang-github-cespare-xxhash-dev_2.1.1-2_all.deb",
            "usr/share/gocode/src/github.com/cespare/xxhash",
        ),
    ),
    Project(
        "github.com/google/go-cmp",
        "go",
        "test",
        debian(
            "golang-github-google-go-cmp-dev",
            "0.5.9-1",
            "b68bd919daa7c1bdf02abfb68894e29e532f19b03b68c8615f50626c48f553b6",
            "pool/main/g/golang-github-google-go-cmp/golang-github-google-go-cmp-dev_0.5.9-1_all.deb",
            "usr/share/gocode/src/github.com/google/go-cmp",
        ),
    ),
    Project(
        "github.com/kr/pretty",
        "go",
        "test",
        debian(
            "golang-github-kr-pretty-dev",
            "0.3.0-1",
            "9d794440fbfbfc800c4aab86cb18cc912808fec1f51f1908f99f44684648be83",
            "pool/main/g/golang-pretty/golang-github-kr-pretty-dev_0.3.0-1_all.deb",
            "usr/share/gocode/src/github.com/kr/pretty",
        ),
    ),
    Project(
        "github.com/mattn/go-isatty",
        "go",
        "test",
        debian(
            "golang-github-mattn-go-isatty-dev",
            "0.0.17-1",
            "07dc6594466081a0622814dfd05f5f4de7dd54047fafb35e2af7bacfb307b402",
            "pool/main/g/golang-github-mattn-go-isatty/golang-github-mattn-go-isatty-dev_0.0.17-1_all.deb",
            "usr/share/gocode/src/github.com/mattn/go-isatty",
        ),
    ),
    Project(
        "github.com/rivo/uniseg",
        "go",
        "test",
        debian(
            "golang-github-rivo-uniseg-dev",
            "0.4.2-1",
            "b1539c251d3d1d46a7a5b60780f4d1c80fb4b7a5ba4721410234a0e23cc3f40d",
            "pool/main/g/golang-github-rivo-uniseg/golang-github-rivo-uniseg-dev_0.4.2-1_all.deb",
            "usr/share/gocode/src/github.com/rivo/uniseg",
        ),
    ),
    Project(
        "github.com/sirupsen/logrus",
        "go",
        "test",
        debian(
            "golang-github-sirupsen-logrus-dev",
            "1.9.0-1",
            "51fb87b05452e96be38b97c03d5f997f6ce3a144421f911338d6c4ea2e8aa118",
            "pool/main/g/golang-logrus/golang-github-sirupsen-logrus-dev_1.9.0-1_all.deb",
            "usr/share/gocode/src/github.com/sirupsen/logrus",
        ),
    ),
    Project(
        "github.com/spf13/cobra",
        "go",
        "test",
        debian(
            "golang-github-spf13-cobra-dev",
            "1.6.1-1",
            "4f5d20855133319beef3c5b49d3c21a0406f270bf94fb4b6f4d406b691283cb2",
            "pool/main/g/golang-github-spf13-cobra/golang-github-spf13-cobra-dev_1.6.1-1_all.deb",
            "usr/share/gocode/src/github.com/spf13/cobra",
        ),
    ),
    Project(
        "github.com/spf13/pflag",
        "go",
        "test",
        debian(
            "golang-github-spf13-pflag-dev",
            "1.0.6~git20210604-d5e0c0615ace-1",
            "bd1c3c2a3e47512a64da02ebea900eb5a3f3c5d386e559d5718a3a935c0ea570",
            "pool/main/g/golang-github-spf13-pflag/golang-github-spf13-pflag-dev_1.0.6~git20210604-d5e0c0615ace-1_all.deb",
            "usr/share/gocode/src/github.com/spf13/pflag",
        ),
    ),
    Project(
        "github.com/stretchr/testify",
        "go",
        "test",
        debian(
            "golang-github-stretchr-testify-dev",
            "1.8.1-1",
            "214a31391cf60e1d1abd9f218cb5134a1fd646340a147a04c2d95a981024a305",
            "pool/main/g/golang-testify/golang-github-stretchr-testify-dev_1.8.1-1_all.deb",
            "usr/share/gocode/src/github.com/stretchr/testify",
        ),
    ),
    Project(
        "itoa",
        "rust",
        "dev",
        debian(
            "librust-itoa-dev",
            "1.0.1-2",
            "42b9e2912127c5e2ae2ed959baf93667434422fdf924ff606364a54302fedbb0",
            "pool/main/r/rust-itoa/librust-itoa-dev_1.0.1-2_amd64.deb",
            "usr/share/cargo/registry/itoa-1.0.1",
        ),
    ),
    Project(
        "hex",
        "rust",
        "dev",
        debian(
            "librust-hex-dev",
            "0.4.3-1+b2",
            "e5fa26bdfbe778fdd0d748c984416649604f0a5d37c3926cb0c48e3c4b0a1606",
            "pool/main/r/rust-hex/librust-hex-dev_0.4.3-1+b2_amd64.deb",
            "usr/share/cargo/registry/hex-0.4.3",
        ),
    ),
    Project(
        "once_cell",
        "rust",
        "dev",
        debian(
            "librust-once-cell-dev",
            "1.17.0-1",
            "5126e64649512450509adaf47de979d2dfb330fb6c9a209731f9f508172428bf",
            "pool/main/r/rust-once-cell/librust-once-cell-dev_1.17.0-1_amd64.deb",
            "usr/share/cargo/registry/once_cell-1.17.0",
        ),
    ),
    Project(
        "memchr",
        "rust",
        "test",
        debian(
            "librust-memchr-dev",
            "2.5.0-1",
            "9b0f9497acbf8d8e706181a248a31624c6215ce86353a972d19d0cf0252f4183",
            "pool/main/r/rust-memchr/librust-memchr-dev_2.5.0-1_amd64.deb",
            "usr/share/cargo/registry/memchr-2.5.0",
        ),
    ),
    Project(
        "semver",
        "rust",
        "test",
        debian(
            "librust-semver-dev",
            "1.0.14-1",
            "bf3719b7aac4b7f16f0d68a7037306dbc1532758fe7a5dea01254e85cecaca8c",
            "pool/main/r/rust-semver/librust-semver-dev_1.0.14-1_amd64.deb",
            "usr/share/cargo/registry/semver-1.0.14",
        ),
    ),
    Project(
        "either",
        "rust",
        "test",
        debian(
            "librust-either-dev",
            "1.6.1-1",
            "2121396d02d07eefa389929ae695533bfc996fd5f9022b6f1b9305bf7ba7a129",
            "pool/main/r/rust-either/librust-either-dev_1.6.1-1_amd64.deb",
            "usr/share/cargo/registry/either-1.6.1",
        ),
    ),
    Project(
        "log",
        "rust",
        "test",
        debian(
            "librust-log-dev",
            "0.4.17-3",
            "bd34d9fc5aaa80121cb1446f848ec99993f97c18f743bcb3f6c4824644c1d0cd",
            "pool/main/r/rust-log/librust-log-dev_0.4.17-3_amd64.deb",
            "usr/share/cargo/registry/log-0.4.17",
        ),
    ),
    Project(
        "bitflags",
        "rust",
        "test",
        debian(
            "librust-bitflags-dev",
            "1.3.2-3",
            "c6624991a6a3d91cd6f4d12c0de251ac7cb4fdc94c02ba12caf9178711af157f",
            "pool/main/r/rust-bitflags/librust-bitflags-dev_1.3.2-3_amd64.deb",
            "usr/share/cargo/registry/bitflags-1.3.2",
        ),
    ),
    Project(
        "smallvec",
        "rust",
        "test",
        debian(
            "librust-smallvec-dev",
            "1.9.0-1",
            "ae859283a4b8979094ab41367116cede81298050fa50fa1f729f5310bd8e0d8b",
            "pool/main/r/rust-smallvec/librust-smallvec-dev_1.9.0-1_amd64.deb",
            "usr/share/cargo/registry/smallvec-1.9.0",
        ),
    ),
    Project(
        "anyhow",
        "rust",
        "test",
        debian(
            "librust-anyhow-dev",
            "1.0.69-1",
            "f877f024d95d8af3c3f62e2cf74e6ba5eb976a3cf27c920bda786cd32029b79d",
            "pool/main/r/rust-anyhow/librust-anyhow-dev_1.0.69-1_amd64.deb",
            "usr/share/cargo/registry/anyhow-1.0.69",
        ),
    ),
    Project(
        "thiserror",
        "rust",
        "test",
        debian(
            "librust-thiserror-dev",
            "1.0.38-1",
            "490bad6685680bb9e76e5baaa003d98835a440019205c714a31f1ebf8bfebe6e",
            "pool/main/r/rust-thiserror/librust-thiserror-dev_1.0.38-1_amd64.deb",
            "usr/share/cargo/registry/thiserror-1.0.38",
        ),
    ),
    Project(
        "cfg-if",
        "rust",
        "test",
        debian(
            "librust-cfg-if-dev",
            "1.0.0-1",
            "d14d3e514f6a497ad3bda68b6e810ddf5b821da7016ee388a45e97f94e15caa9",
            "pool/main/r/rust-cfg-if/librust-cfg-if-dev_1.0.0-1_amd64.deb",
            "usr/share/cargo/registry/cfg-if-1.0.0",
        ),
    ),
    Project(
        "base64",
        "rust",
        "test",
        debian(
            "librust-base64-dev",
            "0.13.0-1",
            "a1de922bb3fd81c6d5ce14b28b35734468423c85a82019298106c4c1f057220c",
            "pool/main/r/rust-base64/librust-base64-dev_0.13.0-1_amd64.deb",
            "usr/share/cargo/registry/base64-0.13.0",
        ),
    ),
    Project(
        "regex-syntax",
        "rust",
        "test",
        debian(
            "librust-regex-syntax-dev",
            "0.6.27-1",
            "16c9879e07d6f9c6b2618906126d17e51ec8b04bced0fe3bb0cf0f3062f8a353",
            "pool/main/r/rust-regex-syntax/librust-regex-syntax-dev_0.6.27-1_amd64.deb",
            "usr/share/cargo/registry/regex-syntax-0.6.27",
        ),
    ),
    Project(
        "unicode-width",
        "rust",
        "test",
        debian(
            "librust-unicode-width-dev",
            "0.1.10-1",
            "58c0db5674d5c127a6676a147534464a4a798ab34b6f971bfc5c6f6d21aed42b",
            "pool/main/r/rust-unicode-width/librust-unicode-width-dev_0.1.10-1_amd64.deb",
            "usr/share/cargo/registry/unicode-width-0.1.10",
        ),
    ),
    Project(
        "indexmap",
        "rust",
        "test",
        debian(
            "librust-indexmap-dev",
            "1.9.2-1",
            "691b9efb8df4abdfdb238713c1f66416f31e2c2a33fd15687aae2c4dcb9b5308",
            "pool/main/r/rust-indexmap/librust-indexmap-dev_1.9.2-1_amd64.deb",
            "usr/share/cargo/registry/indexmap-1.9.2",
        ),
    ),
)


def projects(split: Split, languages: tuple[Code, ...] | None = None) -> list[Project]:
    """The projects of one split (of some languages only), in the catalogue's order."""
    return [p for p in PROJECTS if p.split == split and (languages is None or p.language in languages)]
