"""The committed generator of the payments world's fixtures (see generate.py)."""
