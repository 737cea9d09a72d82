"""Exceptions of the `models` package.

ModelsError
├── UnknownModelName    a name the registry does not have (lists the ones it has)
├── ModelUnavailable    the weights cannot be had: not cached, not fetchable, file missing; says what to do
│   └── FetchFailed     fetching failed part-way (pip or the Hub said no); nothing is left under the final name
├── IntegrityError      bytes whose size or sha256 is not the published one (names the file or part and both hashes)
└── TemplateError       the GGUF's chat template failed to render
"""

from __future__ import annotations


class ModelsError(Exception):
    """Base of every error the models package raises on purpose."""


class UnknownModelName(ModelsError):
    pass


class ModelUnavailable(ModelsError):
    pass


class FetchFailed(ModelUnavailable):
    pass


class IntegrityError(ModelsError):
    pass


class TemplateError(ModelsError):
    pass
