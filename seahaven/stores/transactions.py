"""Transactions on a store's connection, and the episode a kept connection runs in.

A store in memory loaded from an image this process loads again and again (a
fixture's, a blank schema's) lives inside one transaction, its *episode*: opened
when the store opens, rolled back when it closes, so that the connection, its
schema parsed and its statements prepared, serves the next store of that image
(``seahaven.stores.pool``) instead of a new one paying for both again.

Inside an episode a transaction the framework opens where it would ``BEGIN``
(a call's, ``ctx.db.transaction()``, a startup hook's) is a savepoint, the *top*,
and these helpers make it behave as the ``BEGIN`` and ``COMMIT`` it stands for:
the deferred foreign keys are checked when it ends, and ``transaction_open``
says no transaction is open between calls. Everything that opens, ends or asks
about such a transaction goes through ``begin``, ``commit``, ``roll_back`` and
``transaction_open``; a connection with no episode gets plain ``BEGIN``,
``COMMIT`` and ``ROLLBACK`` from them.

An episode ends early, committed (``settle``), where the committed image itself
is needed or world code takes transactions into its own hands: a reader's copy,
a snapshot, a freeze, ``setup_sql``, ``bulk()``, a tool declared without a
transaction; and before a call past its hundredth (``EPISODE_COMMITS``). The
store then goes on as any other, and its connection closes with it.

SQLite rolls a whole transaction back when a statement that writes is
interrupted, or fails for want of memory, disk or I/O. Over an episode that
would take back every call before it too. When it happens and the episode had
kept nothing (no change committed since it began), the store is still exactly
its image and a new episode goes on; otherwise the connection says why in
``lost``, and the instance refuses further use, as for any store that no longer
matches its change log.
"""

from __future__ import annotations

from typing import Any

import apsw

__all__ = [
    "EPISODE_COMMITS",
    "StoreConnection",
    "begin",
    "begin_unless_open",
    "commit",
    "end_episode",
    "rest",
    "roll_back",
    "run_cleanup",
    "run_script",
    "run_statement",
    "settle",
    "start_episode",
    "transaction_open",
]

# The savepoint standing for BEGIN inside an episode: one at a time, never nested in itself.
_TOP = "seahaven_top"
_OPEN_TOP = f"SAVEPOINT {_TOP}"
_DEFERRED_FKS = apsw.SQLITE_DBSTATUS_DEFERRED_FKS

# An episode ends, committed, at its hundredth call: running in one costs a call a few
# microseconds more (the savepoint's own journal of the pages it writes), and by then that
# outweighs what keeping the connection saves a small world at its end. It also bounds
# what the episode's journal holds for a long-lived instance.
EPISODE_COMMITS = 100
_RELEASE_TOP = f"RELEASE {_TOP}"

_CLEANUP_ATTEMPTS = 5

LOST = (
    "an interrupt (or a failure for want of memory or disk) stopped a statement that wrote, "
    "and SQLite rolled back every change the store had kept since it was made"
)


class StoreConnection(apsw.Connection):
    """An APSW connection with what this module and the pool keep about it.

    ``episode`` says an episode is open on it; ``top`` that a call's transaction
    is open over that episode. ``start_changes`` and ``top_changes`` are
    ``total_changes()`` when the episode and the top began: equal, nothing was
    written before the top (nor undone: the count never goes back, so the test
    errs on the side of "something was kept"). ``lost`` says why the store no
    longer holds what its calls committed, once that has happened. ``kept`` is
    whatever the pool keeps with the connection between stores. ``statements``
    is the cursor the framework's own statements without rows run on
    (``run_statement``).
    """

    __slots__ = (
        "commits",
        "episode",
        "kept",
        "lost",
        "start_changes",
        "statements",
        "top",
        "top_changes",
    )

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        # Kept for the connection's life: a cursor made for each statement (what
        # ``Connection.execute`` does) cost more than a BEGIN or a COMMIT itself.
        self.statements = self.cursor()
        self.episode = False
        self.top: str | None = None
        self.start_changes = 0
        self.top_changes = 0
        self.commits = 0
        self.lost: str | None = None
        self.kept: Any = None


def run_script(conn: apsw.Connection, sql: str) -> None:
    """Run every statement of ``sql``.

    APSW runs a script lazily: it stops after a statement that returns rows
    until the cursor is read, so a script is always read to the end. Its
    statements stay out of the connection's statement cache: a script runs once
    or rarely (a schema, pragmas, a rollback), and each cached statement is a few
    KiB every idle instance would hold.
    """
    for _ in conn.execute(sql, can_cache=False):
        pass


def run_cleanup(conn: apsw.Connection, sql: str) -> None:
    """``run_script`` for statements that undo (a ``ROLLBACK``), which an interrupt must not stop.

    An interrupt from another thread is meant for the statement running when it
    came, but SQLite also stops a statement that starts before that one has wound
    down; losing a rollback to it would leave the transaction open. So an
    interrupted cleanup is run again, a few times.
    """
    for attempt in range(_CLEANUP_ATTEMPTS):
        try:
            run_script(conn, sql)
            return
        except apsw.InterruptError:
            if attempt == _CLEANUP_ATTEMPTS - 1:
                raise


def run_statement(conn: apsw.Connection, sql: str) -> None:
    """Run one statement that returns no rows, on the store's own cursor where it has one.

    That cursor is the framework's alone, and never left part way through a
    statement; if it is in use all the same (another thread's statement, or one
    re-entered from inside a statement), a cursor of its own runs ``sql``.
    """
    if type(conn) is StoreConnection:
        try:
            conn.statements.execute(sql)
            return
        except apsw.ThreadingViolationError:
            pass
    conn.execute(sql)


def transaction_open(conn: apsw.Connection) -> bool:
    """Whether a transaction is open on ``conn``, not counting the episode it may run in."""
    if type(conn) is StoreConnection and conn.episode:
        return conn.top is not None
    return bool(conn.in_transaction)


def begin(conn: apsw.Connection) -> None:
    """``BEGIN``; over an episode, the savepoint standing for it.

    Inside a transaction already open this fails as ``BEGIN`` would.
    """
    if not begin_unless_open(conn):
        run_statement(conn, "BEGIN")


def begin_unless_open(conn: apsw.Connection) -> bool:
    """``begin`` if no transaction is open; ``False`` if one is, for the caller to nest in.

    Every call's transaction starts here, so it looks at the connection once for what
    ``transaction_open`` and ``begin`` ask between them. An episode that has reached its
    hundredth call ends here, committed, before the next call's transaction opens.
    """
    if type(conn) is StoreConnection and conn.episode:
        if conn.top is not None:
            return False
        if conn.commits >= EPISODE_COMMITS:
            settle(conn)
        elif conn.in_transaction:
            conn.top_changes = conn.total_changes()
            run_statement(conn, _OPEN_TOP)
            conn.top = _TOP
            return True
        else:
            # Lost outside any call (a statement of the caller's own between calls): only
            # a store nothing was ever written to goes on in a new episode.
            _after_loss(conn, conn.total_changes())
            if conn.episode:
                return begin_unless_open(conn)
    if conn.in_transaction:
        return False
    run_statement(conn, "BEGIN")
    return True


def commit(conn: apsw.Connection) -> None:
    """``COMMIT``; over an episode, the end of the savepoint standing for ``BEGIN``.

    A deferred foreign key still broken fails it as it fails ``COMMIT``: the
    transaction stays open, for the caller to roll back.
    """
    if type(conn) is StoreConnection and conn.top is not None:
        if conn.status(_DEFERRED_FKS)[0]:
            error = apsw.ConstraintError("FOREIGN KEY constraint failed")
            error.result = apsw.SQLITE_CONSTRAINT  # type: ignore[attr-defined]
            error.extendedresult = apsw.SQLITE_CONSTRAINT_FOREIGNKEY  # type: ignore[attr-defined]
            raise error
        run_statement(conn, _RELEASE_TOP)
        conn.top = None
        conn.commits += 1
        return
    run_statement(conn, "COMMIT")


def roll_back(conn: apsw.Connection) -> None:
    """Undo the open transaction: ``ROLLBACK``, or over an episode, its top savepoint.

    Raises what SQLite raises; a caller that must not fail ignores it.
    """
    if type(conn) is StoreConnection and conn.episode:
        if conn.top is None:
            return
        conn.top = None
        if conn.in_transaction:
            run_cleanup(conn, f"ROLLBACK TO {_TOP}; RELEASE {_TOP}")
            _end_deferral(conn)
        else:
            _after_loss(conn, conn.top_changes)
        return
    if conn.in_transaction:
        run_cleanup(conn, "ROLLBACK")


def _end_deferral(conn: apsw.Connection) -> None:
    """Turn off ``PRAGMA defer_foreign_keys``, as ``ROLLBACK`` does; a savepoint's end does not.

    Asked first: setting any flag pragma makes SQLite prepare every cached statement anew.
    A call that fails is where the framework's own undo may have set it; a call that
    succeeds keeps it on only if world code set it, which world code does not do (it sets
    no pragma), so ``commit`` does not ask.
    """
    for (deferred,) in conn.execute("PRAGMA defer_foreign_keys"):
        if deferred:
            run_script(conn, "PRAGMA defer_foreign_keys=OFF")


def _after_loss(conn: StoreConnection, changes: int) -> None:
    """SQLite rolled the episode back: go on with a new one if nothing was written before
    ``changes`` (``total_changes()`` when the statement or call that lost it began)."""
    conn.episode = False
    conn.top = None
    if changes == conn.start_changes:
        start_episode(conn)
    else:
        conn.lost = LOST


def start_episode(conn: apsw.Connection) -> None:
    """Open ``conn``'s episode: everything until ``end_episode`` is rolled back then."""
    assert type(conn) is StoreConnection
    conn.execute("BEGIN")
    conn.episode = True
    conn.top = None
    conn.lost = None
    conn.commits = 0
    conn.start_changes = conn.total_changes()


def rest(conn: apsw.Connection) -> None:
    """Let an episode that has kept nothing hold nothing: no lock, no page pinned.

    A statement that wrote nothing (a startup hook's ``UPDATE`` matching no row) still
    leaves the episode's transaction holding the database's first page, and with it
    the page cache SQLite would otherwise give back; begun again, it holds nothing
    until the next statement.
    """
    if (
        type(conn) is StoreConnection
        and conn.episode
        and conn.top is None
        and conn.txn_state() != apsw.SQLITE_TXN_NONE
        and conn.total_changes() == conn.start_changes
    ):
        run_cleanup(conn, "ROLLBACK")
        conn.execute("BEGIN")


def end_episode(conn: apsw.Connection) -> bool:
    """Roll ``conn``'s episode back; whether it now holds its image again, nothing open."""
    if type(conn) is not StoreConnection or not conn.episode or conn.top is not None:
        return False
    conn.episode = False
    if not conn.in_transaction:
        return False
    run_cleanup(conn, "ROLLBACK")
    return not conn.in_transaction


def settle(conn: apsw.Connection) -> bool:
    """End ``conn``'s episode by committing it; the store goes on as any other.

    Returns ``False`` when a transaction is open over the episode (a call's),
    which the caller refuses; ``True`` otherwise, episode or none.
    """
    if type(conn) is not StoreConnection or not conn.episode:
        return True
    if conn.top is not None:
        return False
    if conn.in_transaction:
        # Marked ended only once committed: a COMMIT that fails leaves the episode as it was.
        conn.execute("COMMIT")
    conn.episode = False
    return True
