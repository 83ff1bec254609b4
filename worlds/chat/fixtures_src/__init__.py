"""The committed fixture generator of the chat world (see ``generate.py``)."""
