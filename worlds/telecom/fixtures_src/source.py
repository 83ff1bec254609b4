"""Where the tau2-bench data the generators read lives.

The data (MIT, tau2-bench's) is not part of this repository's source: the
generators and the tests that rebuild from it read it from
``$SEAHAVEN_TAU2_DATA`` when that is set, otherwise from the nearest
``shared/data/tau2`` folder above this checkout.
"""

from __future__ import annotations

import os
from pathlib import Path

__all__ = ["DATA_VARIABLE", "tau2_data"]

DATA_VARIABLE = "SEAHAVEN_TAU2_DATA"
"""The environment variable naming the folder that holds ``airline/``, ``telecom/``, ..."""


def tau2_data(domain: str = "telecom") -> Path | None:
    """The folder of the telecom data (``db.toml``, ``user_db.toml``, ...), or ``None``."""
    given = os.environ.get(DATA_VARIABLE)
    if given:
        candidates = [Path(given)]
    else:
        here = Path(__file__).resolve()
        candidates = [parent / "shared" / "data" / "tau2" for parent in here.parents]
    for root in candidates:
        if (root / domain / "db.toml").is_file():
            return root / domain
    return None
