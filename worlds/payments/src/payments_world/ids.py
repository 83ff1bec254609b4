"""Product-shaped identifiers (``ch_...``, ``cus_...``), drawn from the instance's seeded stream."""

from __future__ import annotations

import seahaven

__all__ = ["new_id"]

_ALPHABET = "0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz"
_LENGTH = 22  # 62**22 exceeds 2**128, so every seeded uuid has its own id


def new_id(ctx: seahaven.Ctx, prefix: str) -> str:
    """A fresh id such as ``ch_3kTb0Q...``: ``prefix``, an underscore and 22 base-62 digits."""
    number = int(ctx.ids.uuid().replace("-", ""), 16)
    digits = []
    for _ in range(_LENGTH):
        number, digit = divmod(number, 62)
        digits.append(_ALPHABET[digit])
    return f"{prefix}_{''.join(reversed(digits))}"
