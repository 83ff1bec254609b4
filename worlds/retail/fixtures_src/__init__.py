"""The committed generators of the retail world's fixture and pack (see generate.py, pack.py)."""
