"""The committed generators of the airline world's fixture and pack (see generate.py, pack.py)."""
