"""The OpenEnv side: the typed models on the wire, ``SeahavenClient``, trials against a
served world, OpenEnv's harness, and a world as an OpenEnv ``Environment``.
"""
