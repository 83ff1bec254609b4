"""Deprecated: the old name of ``seahaven.cli.support``. Import from there instead.

Kept for one release, so a plugin written against the old path keeps
working; it re-exports every name and warns once, on import.
"""

from __future__ import annotations

import warnings

from seahaven.cli.support import (
    CliSession,
    Progress,
    WorldOption,
    fail,
    failures,
    one_line,
    plural,
    session,
)

__all__ = [
    "CliSession",
    "Progress",
    "WorldOption",
    "fail",
    "failures",
    "one_line",
    "plural",
    "session",
]

warnings.warn(
    "seahaven.cli_support is deprecated; import the same names from seahaven.cli.support",
    DeprecationWarning,
    stacklevel=2,
)
