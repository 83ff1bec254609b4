"""The wire: reading a client's frames (strict JSON, their errors, bounded echoes of
what the client sent), the close codes, the scenarios a reset names, and a connection's inbox.
"""
