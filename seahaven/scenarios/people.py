"""The people of one episode: the scenario's user and events, as a trial runs them.

A ``Cast`` is what an episode's ``Play`` (``seahaven.scenarios.play``: a
``Trial``, a replay of the scenario's solution, an episode of the mutant panel)
holds beside its instance when the scenario has a user or events. It hides the user's
tools from the agent and adds ``message_user``, fires the events that have come
due before each of the agent's calls, and plays the user's turns: each agent
message is answered by the user's player after the user has made its own calls,
each as the ``user`` actor. The conversation it keeps (each message with its
speaker, and ``at_call``, how many calls the instance had dispatched then) is
part of the trial's record.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import TYPE_CHECKING, Any

from pydantic_core import to_jsonable_python

from seahaven.errors import ToolError, UnknownTool, WorldBug
from seahaven.scenarios.events import EventRunner
from seahaven.scenarios.users import (
    MESSAGE_USER_TOOL,
    UserContext,
    UserPlayer,
    as_reply,
    message_text,
    message_user_listing,
    player_for,
)
from seahaven.stores.names import USER

if TYPE_CHECKING:
    from seahaven.instance.instance import Instance
    from seahaven.scenarios.model import Scenario

__all__ = ["Cast", "has_people"]


def has_people(scenario: Scenario) -> bool:
    """Whether a scenario has a user or events, so that its episodes need a ``Cast``."""
    return scenario.user is not None or bool(scenario.events)


class Cast:
    """A scenario's user and events, bound to one episode's instance."""

    def __init__(
        self,
        scenario: Scenario,
        instance: Instance,
        *,
        seed: int | None,
        player: UserPlayer | None = None,
    ) -> None:
        self.scenario = scenario
        self.instance = instance
        self.seed = seed
        user = scenario.user
        surface = {entry.name: entry for entry in instance.world.composition().surface}
        if user is not None:
            if MESSAGE_USER_TOOL in surface:
                raise WorldBug(
                    f"scenario {scenario.id!r}: world {instance.world.name!r} has a tool named "
                    f"{MESSAGE_USER_TOOL!r}, which a scenario with a user adds for the agent; "
                    "rename the world's tool"
                )
            unknown = [name for name in user.tools if name not in surface]
            if unknown:
                raise WorldBug(
                    f"scenario {scenario.id!r}: user.tools names {', '.join(map(repr, unknown))}, "
                    f"which world {instance.world.name!r} does not serve"
                )
        self.user_tools: frozenset[str] = frozenset(user.tools if user is not None else ())
        # The user's tools in the order the instance lists them; each turn is handed their
        # listings, made from these entries rather than from the whole tool list each time.
        self._user_entries = [entry for entry in surface.values() if entry.name in self.user_tools]
        self.events = EventRunner(scenario.id, scenario.events, instance)
        self.player: UserPlayer | None = (
            player if player is not None or user is None else player_for(user, scenario.id)
        )
        #: The conversation so far, each message as the trial's record holds it.
        self.conversation: list[dict[str, Any]] = []
        #: The user's model tokens (a model-played user's), summed; ``None`` for a scripted one.
        self.user_tokens: dict[str, int] | None = None
        #: Told of each of the user's own calls as it ends, whoever plays the user (a runner
        #: records them in the trial's transcript): called with ``tool``, ``arguments`` and one
        #: of ``result``, ``refusal`` (the ``ToolError``'s dict) or ``failure`` (its text).
        self.on_user_call: Callable[..., None] | None = None

    @property
    def has_user(self) -> bool:
        """Whether the scenario has a user the agent can message."""
        return self.scenario.user is not None

    def agent_tools(self, listing: list[dict[str, Any]]) -> list[dict[str, Any]]:
        """The world's tool list as the agent sees it: the user's tools out, ``message_user`` in."""
        shown = [tool for tool in listing if tool["name"] not in self.user_tools]
        if self.has_user:
            shown.append(message_user_listing())
        return shown

    def refuse_user_tool(self, tool: str) -> None:
        """Refuse the agent a tool that is the user's own, as a tool it does not have."""
        if tool in self.user_tools:
            raise UnknownTool(tool)

    def takes(self, tool: str) -> bool:
        """Whether an agent's call to ``tool`` is the cast's to answer, not the world's.

        ``message_user`` is (with a user); one of the user's own tools is refused here
        as a tool the agent does not have.
        """
        self.refuse_user_tool(tool)
        return tool == MESSAGE_USER_TOOL and self.has_user

    def agent_message(self, arguments: Mapping[str, Any]) -> dict[str, Any]:
        """A ``message_user`` call: the user's reply, and whether they ended the conversation."""
        reply = self.message(message_text(arguments))
        return {"reply": reply["text"], "ended": bool(reply["stop"])}

    def before_agent_call(self, agent_calls: int) -> None:
        """Fire the events due now that the agent has made ``agent_calls`` calls."""
        self.events.fire_due(agent_calls)

    # --- the conversation --------------------------------------------------------------------

    def message(self, text: str) -> dict[str, Any]:
        """The agent says ``text``; the user acts and answers. Returns the reply message."""
        instance = self.instance
        assert self.scenario.user is not None and self.player is not None
        self.conversation.append({"speaker": "agent", "text": text, "at_call": instance.call_count})
        turn = UserContext(
            instructions=self.scenario.user.instructions,
            conversation=[dict(message) for message in self.conversation],
            seed=self.seed,
            tools=[entry.listing() for entry in self._user_entries],
            call=lambda tool, /, **arguments: self._user_call(turn, tool, arguments),
        )
        try:
            reply = as_reply(self.player.respond(turn), self.scenario.id)
        except WorldBug as error:
            text_of = str(error)
            if text_of.startswith(f"scenario {self.scenario.id!r}"):
                raise
            raise WorldBug(f"scenario {self.scenario.id!r}: the user failed: {error}") from None
        except Exception as error:
            raise WorldBug(
                f"scenario {self.scenario.id!r}: the user's player raised "
                f"{type(error).__name__}: {error}"
            ) from error
        message: dict[str, Any] = {
            "speaker": "user",
            "text": reply.text,
            "at_call": instance.call_count,
            "calls": list(turn.calls),
            "stop": reply.stop,
            "tokens": None if reply.tokens is None else dict(reply.tokens),
        }
        if reply.tokens is not None:
            self._count_tokens(reply.tokens)
        self.conversation.append(message)
        return message

    def _user_call(self, turn: UserContext, tool: str, arguments: Mapping[str, Any]) -> Any:
        """One of the user's own calls, as the ``user`` actor; only the user's tools."""
        if not isinstance(tool, str) or tool not in self.user_tools:
            raise UnknownTool(str(tool))
        instance = self.instance
        turn.calls.append(instance.call_count)
        observe = self.on_user_call
        with instance.acting_as(USER):
            try:
                result = to_jsonable_python(instance.call(tool, **arguments))
            except ToolError as refused:
                if observe is not None:
                    observe(tool, dict(arguments), refusal=refused.to_dict())
                raise
            except Exception as bug:
                if observe is not None:
                    observe(tool, dict(arguments), failure=f"{type(bug).__name__}: {bug}")
                raise
        if observe is not None:
            observe(tool, dict(arguments), result=result)
        return result

    def _count_tokens(self, tokens: Mapping[str, int]) -> None:
        counted = self.user_tokens if self.user_tokens is not None else {}
        for name, value in tokens.items():
            if isinstance(value, int) and not isinstance(value, bool):
                counted[name] = counted.get(name, 0) + value
        self.user_tokens = counted

    @staticmethod
    def report_of_none() -> dict[str, Any]:
        """What a trial's report says of the people when the scenario has none."""
        return {"conversation": [], "user_tokens": None, "events": []}

    def report(self) -> dict[str, Any]:
        """What a trial's report adds: the conversation, the user's tokens, the events fired."""
        return {
            "conversation": [dict(message) for message in self.conversation],
            "user_tokens": None if self.user_tokens is None else dict(self.user_tokens),
            "events": [dict(event) for event in self.events.fired],
        }
