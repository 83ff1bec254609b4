"""The committed generator of the company world's fixtures (see generate.py)."""
