"""The session and its pool: what one ``/ws`` or ``POST /mcp`` session does with each frame,
the snapshots it keeps, resuming it, and the pool every session of a server shares (capacity
and admission, worker threads, the loop clock, the reaper, the board the workers share).
"""
