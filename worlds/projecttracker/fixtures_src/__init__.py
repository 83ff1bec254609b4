"""The committed fixture generator of ProjectTracker (see ``generate.py``)."""
