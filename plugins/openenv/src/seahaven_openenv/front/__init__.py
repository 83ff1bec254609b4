"""The front: the guard on hosts and origins, running an app under uvicorn, one ``/ws``
connection's loop, and the front process of ``--workers`` that hands connections to workers.
"""
