"""Who plays the scenarios' users in an eval: a user source, asked for one player per trial.

A scenario with a user is played by its own script or Python function unless a
run says otherwise. ``evaluate(pack, policy, user=SOURCE)`` says otherwise: the
runner asks ``SOURCE.player(trial, transcript)`` for the ``UserPlayer`` of each
trial whose scenario has a user, and hands it to the ``Trial``. A source may
keep what its trials share (a model client and its connections) and give each
trial a player of its own (a conversation of its own); the player records what
it does in the trial's ``transcript`` when it has one.

Two sources ship: the agents plugin's ``seahaven.agents.ModelUser`` (a model on
a Chat Completions endpoint plays every user, from the user's instructions),
and ``seahaven.evaluation.replay.RecordedUsers`` (each user says again what a
transcripts file recorded). A source names itself with ``describe()``, which
every result of the run records as ``user``; a source that holds connections
may have ``aclose()`` (awaited on the trials' event loop when they are done)
and ``close()`` (called when the eval ends).
"""

from __future__ import annotations

import contextlib
import inspect
from typing import TYPE_CHECKING, Any, Protocol, runtime_checkable

from seahaven.errors import WorldBug
from seahaven.scenarios.users import UserPlayer

if TYPE_CHECKING:
    from seahaven.evaluation.transcripts import Transcript
    from seahaven.evaluation.trial_spec import TrialSpec

__all__ = ["UserSource", "check_user_source", "close_user", "close_user_async", "describe_user"]


@runtime_checkable
class UserSource(Protocol):
    """Makes the player of each trial's user; see the module."""

    def player(
        self, trial: TrialSpec | None = None, transcript: Transcript | None = None
    ) -> UserPlayer:
        """A new player for one trial (``trial`` and ``transcript`` when a runner has them)."""

    def describe(self) -> str:
        """How results name what played the users (a model names itself and its server)."""


def check_user_source(user: object) -> UserSource:
    """``user`` if it is a ``UserSource``; a ``WorldBug`` naming what it lacks otherwise."""
    if inspect.isclass(user) or not callable(getattr(user, "player", None)):
        raise WorldBug(
            f"user={user!r} is not a user source: give an object with player(trial, "
            "transcript) returning each trial's UserPlayer, such as seahaven.agents.ModelUser"
            "(...) or seahaven.evaluation.replay.RecordedUsers(...)"
        )
    return user  # type: ignore[return-value]


def describe_user(user: object) -> str:
    """The name results record for a user source: its ``describe()``, else its class."""
    describe = getattr(user, "describe", None)
    if callable(describe):
        name = describe()
        if not isinstance(name, str) or not name.strip():
            raise WorldBug(
                f"the user source's describe() returned {name!r}; it returns a non-empty string "
                "naming what plays the users (a model names itself)"
            )
        return name.strip()
    kind = type(user)
    return f"{kind.__module__}:{kind.__qualname__}"


async def close_user_async(user: object) -> None:
    """Await the source's ``aclose()``, if it has one, on the running loop; errors ignored.

    The trials are over: what letting go of connections raises changes no result.
    """
    close = getattr(user, "aclose", None)
    if close is None or inspect.isclass(user) or not callable(close):
        return
    try:
        returned: Any = close()
        if inspect.isawaitable(returned):
            await returned
    except Exception:
        pass  # the trials are over; a failure to let go of connections changes no result


def close_user(user: object) -> None:
    """Call the source's ``close()``, if it has one, when an eval ends; errors ignored."""
    close = getattr(user, "close", None)
    if close is None or inspect.isclass(user) or not callable(close):
        return
    # The eval is over; a failure to let go of connections changes no result.
    with contextlib.suppress(Exception):
        close()
