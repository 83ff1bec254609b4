"""The agent's SQL tools at the path the reference documents: ``run_sql``, ``describe_schema``.

The same functions as ``seahaven.sql_tools``, which holds them.
"""

from seahaven.sql_tools import describe_schema, run_sql

__all__ = ["describe_schema", "run_sql"]
