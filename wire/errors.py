"""Exceptions of the `wire` package.

WireError
└── TokenizerUnavailable   the o200k_base encoding can be neither loaded from tiktoken's cache nor restored offline
"""

from __future__ import annotations


class WireError(Exception):
    """Base of every error the wire package raises."""


class TokenizerUnavailable(WireError, RuntimeError):
    """The o200k_base encoding can be neither loaded from tiktoken's cache nor restored offline."""
