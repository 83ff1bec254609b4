"""The committed generators of the telecom world's fixture and pack (see generate.py, pack.py)."""
