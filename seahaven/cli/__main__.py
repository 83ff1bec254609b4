"""``python -m seahaven.cli``: the ``seahaven`` command, run as a module."""

from __future__ import annotations

from seahaven.cli import main

raise SystemExit(main())
