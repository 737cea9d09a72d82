"""Exceptions of the `models` package.

ModelsError
├── UnknownModelName    a name the registry does not have (lists the ones it has)
├── ModelUnavailable    the weights cannot be had: not cached, not downloadable, file missing; says what to do
└── TemplateError       the GGUF's chat template failed to render
"""

from __future__ import annotations


class ModelsError(Exception):
    """Base of every error the models package raises on purpose."""


class UnknownModelName(ModelsError):
    pass


class ModelUnavailable(ModelsError):
    pass


class TemplateError(ModelsError):
    pass
