"""The running seahaven's version, in a module of its own so any layer can read it.

``seahaven.__version__`` is the public spelling; the framework's own modules
read ``VERSION`` from here, which imports nothing, instead of importing the
package and, through it, everything else.
"""

from __future__ import annotations

__all__ = ["VERSION"]

VERSION = "0.1.0"
