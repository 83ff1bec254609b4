"""The running seahaven's version, ``VERSION``, in a module that imports nothing.

``seahaven.__version__`` is the public spelling; the framework's own modules
read ``VERSION`` from here, which imports nothing, instead of importing the
package and, through it, everything else.
"""

from __future__ import annotations

__all__ = ["VERSION"]

VERSION = "0.1.0"
