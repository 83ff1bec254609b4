"""The stores: what an instance's SQLite files are made of, and the records of what changed.

The bottom layer above ``errors``: connections and transactions (``db``), the
clock and the SQL time functions (``clock``), seeded ids (``ids``), a world's
schema (``schema``), the change log and the call log (``changelog``), where
stores live (``storage``, ``workdir``), and the rules every layer above checks
names and arguments against (``names``, ``arguments``), which the call log
records. Nothing here knows a world, a tool or an instance.

This package's face re-exports what the other layers and plugins use; the
framework's own modules import each module by its path.
"""

from seahaven.stores.changelog import CallRecord, ChangeLog, LogRecord
from seahaven.stores.clock import Clock, ClockMode
from seahaven.stores.db import Db, Exec
from seahaven.stores.ids import Ids
from seahaven.stores.schema import sql_files
from seahaven.stores.storage import Storage, default_storage, runner_storage

__all__ = [
    "CallRecord",
    "ChangeLog",
    "Clock",
    "ClockMode",
    "Db",
    "Exec",
    "Ids",
    "LogRecord",
    "Storage",
    "default_storage",
    "runner_storage",
    "sql_files",
]
