"""Ground truth about code: the files that define a name and those that use it, by tree-sitter, in each
language with a query; a name in a comment or a string is neither."""

from __future__ import annotations

from evals.symbols import symbols_of

FILES = {
    "pkg/core.py": "class RetryPolicy:\n    def backoff(self):\n        return 1\n\n# RetryPolicy in a comment\n",
    "pkg/use.py": "from pkg.core import RetryPolicy\n\npolicy = RetryPolicy()\ntext = 'backoff'\n",
    "web/app.js": "export function renderPage(x) { return x }\nconst toSlug = (s) => s\n",
    "web/main.ts": "interface PageProps { title: string }\nimport { renderPage } from './app'\nrenderPage(1)\n",
    "cmd/main.go": "package main\ntype Server struct{}\nfunc (s *Server) Listen() {}\nfunc main() { run() }\n",
    "src/lib.rs": "pub struct Parser;\nimpl Parser { pub fn parse_all(&self) {} }\nmacro_rules! hello { () => {} }\n",
    "src/main.rs": "fn main() { let p = lib::Parser; p.parse_all(); }\n",
    "README.md": "RetryPolicy and renderPage are documented here.\n",
}


def test_definitions_in_each_language_with_their_lines() -> None:
    found = symbols_of(FILES)
    assert found.defined["pkg/core.py"] == {"RetryPolicy": 1, "backoff": 2}
    assert set(found.defined["web/app.js"]) == {"renderPage", "toSlug"}
    assert set(found.defined["web/main.ts"]) == {"PageProps"}
    assert set(found.defined["cmd/main.go"]) == {"Server", "Listen", "main"}
    assert set(found.defined["src/lib.rs"]) == {"Parser", "parse_all", "hello"}
    assert "README.md" not in found.defined


def test_uses_are_identifiers_elsewhere_not_comments_strings_or_documents() -> None:
    found = symbols_of(FILES)
    assert found.users("RetryPolicy") == {"pkg/use.py"}
    assert found.users("backoff") == set()  # only a string says it
    assert found.users("renderPage") == {"web/main.ts"}
    assert found.users("Parser") == {"src/main.rs"} and found.definers("parse_all") == {"src/lib.rs"}
