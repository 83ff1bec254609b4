"""Scenarios as TRL environments: a class whose methods are a world's tools, and dataset rows.

TRL's ``GRPOTrainer(environment_factory=...)`` calls the factory with no
arguments once per rollout it runs at a time, keeps the objects and calls
``reset(**row)`` on one before each rollout; the model's tools are the class's
public methods (each described by ``transformers.utils.get_json_schema``, from
its type hints and its docstring's ``Args:`` block), and ``get_reward()``
scores the rollout. ``environment(pack)`` builds such a class for the world the
pack's scenarios run on::

    from seahaven.episodes.trl import dataset_rows, environment

    Env = environment("company")          # a pack: its name, or a ScenarioSet
    rows = dataset_rows("company", "train")
    # GRPOTrainer(model=..., train_dataset=Dataset.from_list(rows), environment_factory=Env)

Each row names its scenario (``"pack/id"``, optionally with a ``seed``);
``reset`` makes a fresh ``Trial`` for it, destroying the previous one. A tool
method calls the trial and returns the result as compact JSON text, or a
refusal as ``{"error": {"code", "message", "details"}}``, so the model reads
what the world said; ``get_reward()`` is the grade's score. The core imports
neither trl nor transformers: the class is plain Python.
"""

from __future__ import annotations

import inspect
import json
import keyword
import logging
import operator
import re
import secrets
import weakref
from collections.abc import Callable, Mapping, Sequence
from typing import Any, ClassVar

from pydantic_core import to_jsonable_python

from seahaven.declaration.world import World
from seahaven.episodes.trl_schema import method_docstring, method_params, python_name
from seahaven.errors import ToolError, WorldBug
from seahaven.scenarios.model import SUBMIT_TOOL, Scenario
from seahaven.scenarios.pack import ScenarioSet
from seahaven.scenarios.registry import find_scenario, load_pack, split_reference
from seahaven.scenarios.trial import Trial, submit_listing

__all__ = [
    "SCENARIO_COLUMN",
    "SEED_COLUMN",
    "ScenarioEnv",
    "close",
    "dataset_rows",
    "environment",
    "system_prompt",
    "tool_result",
]

# The dataset columns ``reset`` reads; every other column is ignored.
SCENARIO_COLUMN = "scenario"
SEED_COLUMN = "seed"

_log = logging.getLogger("seahaven.trl")


def tool_result(value: Any) -> str:
    """A tool's result as the text a model reads: compact JSON, as the wire would carry it."""
    return json.dumps(to_jsonable_python(value), ensure_ascii=False, separators=(",", ":"))


def _error_text(error: Mapping[str, Any]) -> str:
    body = {key: value for key, value in error.items() if value is not None}
    return json.dumps(
        {"error": to_jsonable_python(body, fallback=str)},
        ensure_ascii=False,
        separators=(",", ":"),
    )


class ScenarioEnv:
    """A TRL environment over one world's tools; make one with ``environment(...)``.

    Public *functions* on this class are what TRL offers the model as tools, so
    the class has only ``reset``, ``get_reward`` and one method per tool of the
    world (``submit`` among them); everything else is a property or a class
    attribute. ``with Env() as env:`` or ``seahaven.trl.close(env)`` destroys
    the trial's instances at once; otherwise the next ``reset``, or garbage
    collection of the object, does.
    """

    world: ClassVar[World | None] = None
    """The world whose tools the methods are."""
    pack: ClassVar[ScenarioSet | None] = None
    """The pack a row's bare scenario id, or ``"pack/id"`` with this pack's name, is read from."""
    tool_names: ClassVar[Mapping[str, str]] = {}
    """Each tool method's name and the tool it calls (they differ where a name had to change)."""

    def __init__(self) -> None:
        if type(self).world is None:
            raise WorldBug(
                "ScenarioEnv is the base class; make the class TRL instantiates with "
                "seahaven.trl.environment(pack_or_world)"
            )
        self._trial: Trial | None = None
        self._finalizer: weakref.finalize[Any, Any] | None = None

    # --- what TRL calls -------------------------------------------------------------------

    def reset(self, **row: Any) -> str | None:
        """Start the row's scenario on a fresh trial; return the text to append to the prompt.

        The row names its scenario in the ``scenario`` column (``"pack/id"``,
        or a bare id of the bound pack) and may give a ``seed``; every other
        column is ignored. The previous trial's instances are destroyed. The
        text returned is the scenario's instructions, or ``None`` when the row's
        ``prompt`` already holds them (as ``dataset_rows`` writes it), so they
        are not shown twice.
        """
        scenario = self._scenario_of(row)
        seed = _seed_of(row)
        self._drop_trial()
        trial = Trial(scenario, seed=seed, world=type(self).world)
        self._trial = trial
        self._finalizer = weakref.finalize(self, trial.close)
        return _appended_text(row.get("prompt"), trial.instructions)

    def get_reward(self) -> float:
        """The grade's score in [0, 1], ending the episode where it stands if it has not ended."""
        return self._current("get_reward").finish().score

    # --- what a script may read -----------------------------------------------------------

    @property
    def trial(self) -> Trial | None:
        """The trial the last ``reset`` started (its grade, calls and instance), if any."""
        return self._trial

    def __enter__(self) -> ScenarioEnv:
        return self

    def __exit__(self, *exc: object) -> None:
        self._drop_trial()

    def __repr__(self) -> str:
        trial = self._trial
        where = "no scenario yet" if trial is None else f"scenario {trial.scenario.id!r}"
        return f"<{type(self).__name__}: {where}>"

    # --- behind the methods ---------------------------------------------------------------

    def _call_tool(self, tool: str, arguments: dict[str, Any]) -> str:
        trial = self._current(tool)
        try:
            return tool_result(trial.call(tool, **arguments))
        except ToolError as error:
            return _error_text(error.to_dict())
        except Exception as error:
            # A WorldBug or a crash in world code is the author's to read, never the model's.
            correlation = secrets.token_hex(4)
            _log.error(
                "%s (%s) in tool %s of scenario %s: %s: %s",
                "world bug" if isinstance(error, WorldBug) else "internal error",
                correlation,
                tool,
                trial.scenario.id,
                type(error).__name__,
                error,
                exc_info=error,
            )
            return _error_text(
                {"code": "internal", "message": "internal error", "details": {"id": correlation}}
            )

    def _current(self, what: str) -> Trial:
        if self._trial is None:
            raise WorldBug(
                f"{type(self).__name__}.{what} was called before reset(); TRL resets each "
                "environment with a dataset row first, and a script must too"
            )
        return self._trial

    def _drop_trial(self) -> None:
        finalizer, self._finalizer, self._trial = self._finalizer, None, None
        if finalizer is not None:
            finalizer()

    def _scenario_of(self, row: Mapping[str, Any]) -> Scenario:
        reference = row.get(SCENARIO_COLUMN)
        if reference is None:
            raise WorldBug(
                f"reset() was given a row without a {SCENARIO_COLUMN!r} column (it has "
                f"{', '.join(map(repr, row)) or 'no columns'}); build the dataset with "
                "seahaven.trl.dataset_rows, or add a column naming each row's scenario as pack/id"
            )
        if not isinstance(reference, str):
            raise WorldBug(f"the {SCENARIO_COLUMN!r} column is pack/id text, not {reference!r}")
        cls = type(self)
        world, pack = cls.world, cls.pack
        assert world is not None
        if "/" not in reference:
            if pack is None:
                raise WorldBug(
                    f"scenario {reference!r}: name it as pack/id; {cls.__name__} is bound to "
                    f"the world {world.name!r}, not to a pack"
                )
            scenario = pack.get(reference)
        else:
            pack_name, scenario_id = split_reference(reference)
            if pack is not None and pack_name == pack.name:
                scenario = pack.get(scenario_id)
            else:
                scenario = find_scenario(reference)[1]
        if scenario.world_name != world.name:
            raise WorldBug(
                f"scenario {reference!r} runs on the world {scenario.world_name!r}, but "
                f"{cls.__name__}'s tools are {world.name!r}'s; make a class for that world "
                "(TRL takes a dict of factories, routed by an `environment` column)"
            )
        return scenario


def close(env: ScenarioEnv) -> None:
    """Destroy ``env``'s trial and its instances now. Idempotent; ``reset`` starts another.

    It is a function rather than a method because every public method of the
    class is offered to the model as a tool.
    """
    env._drop_trial()


def _seed_of(row: Mapping[str, Any]) -> int | None:
    value = row.get(SEED_COLUMN)
    if value is None:
        return None
    if isinstance(value, bool):
        raise WorldBug(f"the {SEED_COLUMN!r} column is a whole number, not {value!r}")
    try:
        return operator.index(value)
    except TypeError:
        raise WorldBug(f"the {SEED_COLUMN!r} column is a whole number, not {value!r}") from None


def _texts(content: Any) -> list[str]:
    if isinstance(content, str):
        return [content]
    if isinstance(content, Sequence):
        return [
            part["text"]
            for part in content
            if isinstance(part, Mapping) and isinstance(part.get("text"), str)
        ]
    return []


def _appended_text(prompt: Any, instructions: str) -> str | None:
    """The instructions to append to ``prompt``, or ``None`` if it already shows them."""
    if isinstance(prompt, str):
        return None if instructions in prompt else instructions
    if not isinstance(prompt, Sequence) or not prompt:
        return instructions
    messages = [message for message in prompt if isinstance(message, Mapping)]
    if any(instructions in text for m in messages for text in _texts(m.get("content"))):
        return None
    # TRL joins the text to the last message's content with nothing between.
    last = messages[-1].get("content") if messages else None
    if isinstance(last, str) and last and not last[-1].isspace():
        return "\n\n" + instructions
    return instructions


# --- the class factory ----------------------------------------------------------------------


def environment(source: ScenarioSet | World | str, *, name: str | None = None) -> type[ScenarioEnv]:
    """A ``ScenarioEnv`` class with one typed method per tool of the world, for TRL.

    ``source`` is a pack (a ``ScenarioSet``, or the name of an installed pack,
    or ``module:attr``), whose scenarios must all run on one world; or a
    ``World``, in which case rows name installed packs' scenarios as ``pack/id``.
    ``name`` is the class's name, which TRL logs the reward under (default:
    the pack's or world's name in CamelCase, then ``Env``).
    """
    pack: ScenarioSet | None
    if isinstance(source, World):
        pack, world = None, source
    else:
        pack = load_pack(source) if isinstance(source, str) else source
        if not isinstance(pack, ScenarioSet):
            raise WorldBug(
                f"environment() takes a ScenarioSet, a pack's name or a World, not {source!r}"
            )
        world = _world_of(pack)
    class_name = name if name is not None else _class_name(pack.name if pack else world.name)
    if not class_name.isidentifier() or keyword.iskeyword(class_name):
        raise WorldBug(f"environment(name={class_name!r}): a class name is a Python identifier")
    methods = _tool_methods(world, class_name)
    namespace: dict[str, Any] = {
        "__module__": __name__,
        "__qualname__": class_name,
        "__doc__": (
            f"TRL environment over the tools of the world {world.name!r}"
            + (f", playing the scenarios of the pack {pack.name!r}." if pack else ".")
        ),
        "world": world,
        "pack": pack,
        "tool_names": {method: tool for method, (tool, _) in methods.items()},
    }
    namespace.update({method: fn for method, (_, fn) in methods.items()})
    return type(class_name, (ScenarioEnv,), namespace)


def _world_of(pack: ScenarioSet) -> World:
    if not len(pack):
        raise WorldBug(f"pack {pack.name!r} holds no scenarios, so it names no world")
    names = sorted({scenario.world_name for scenario in pack})
    if len(names) > 1:
        raise WorldBug(
            f"pack {pack.name!r} spans the worlds {', '.join(map(repr, names))}; an environment "
            "class holds one world's tools: make one per world with environment(world) and "
            "hand TRL a dict of them, routed by an `environment` column"
        )
    return pack.scenarios[0].resolve_world()


def _class_name(source: str) -> str:
    words = [word for word in re.split(r"[^0-9A-Za-z]+", source) if word]
    stem = "".join(word[:1].upper() + word[1:] for word in words) or "Scenario"
    return ("Seahaven" + stem if stem[0].isdigit() else stem) + "Env"


def _tool_methods(world: World, class_name: str) -> dict[str, tuple[str, Callable[..., str]]]:
    listings = [entry.listing() for entry in world.composition().surface]
    if any(listing["name"] == SUBMIT_TOOL for listing in listings):
        raise WorldBug(
            f"world {world.name!r} has a tool named {SUBMIT_TOOL!r}, which a scenario adds to "
            "end the episode; rename the world's tool to bind it to scenarios"
        )
    reserved = {attr for attr in dir(ScenarioEnv) if not attr.startswith("_")}
    methods: dict[str, tuple[str, Callable[..., str]]] = {}
    for listing in [*listings, submit_listing()]:
        tool = listing["name"]
        method = python_name(tool, reserved, prefix="tool_", public=True)
        if method in methods:
            raise WorldBug(
                f"world {world.name!r}: the tools {methods[method][0]!r} and {tool!r} both "
                f"become the method {method!r} of a TRL environment; rename one of them"
            )
        methods[method] = (tool, _make_method(class_name, method, tool, listing))
    return methods


def _make_method(
    class_name: str, method: str, tool: str, listing: Mapping[str, Any]
) -> Callable[..., str]:
    schema = listing.get("input_schema") or {}
    params = method_params(schema)
    to_wire = {param.python: param.wire for param in params}

    def call_tool(env: ScenarioEnv, /, **arguments: Any) -> str:
        # The model's names go to the world as they came (a wrong one is the world's to
        # refuse, in words the model reads); only renamed parameters are mapped back.
        return env._call_tool(
            tool, {to_wire.get(key, key): value for key, value in arguments.items()}
        )

    call_tool.__name__ = method
    call_tool.__qualname__ = f"{class_name}.{method}"
    call_tool.__module__ = __name__
    call_tool.__doc__ = method_docstring(tool, listing.get("description"), params)
    # What inspect.signature and typing.get_type_hints report: keyword-only parameters with
    # real types, so get_json_schema reads the tool's arguments off the method.
    call_tool.__signature__ = inspect.Signature(  # type: ignore[attr-defined]
        [inspect.Parameter("self", inspect.Parameter.POSITIONAL_OR_KEYWORD)]
        + [
            inspect.Parameter(
                param.python,
                inspect.Parameter.KEYWORD_ONLY,
                annotation=param.hint,
                **({} if param.required else {"default": param.default}),
            )
            for param in params
        ],
        return_annotation=str,
    )
    call_tool.__annotations__ = {param.python: param.hint for param in params} | {"return": str}
    return call_tool


# --- datasets ---------------------------------------------------------------------------------


def system_prompt(scenario: Scenario) -> str:
    """The system message ``dataset_rows`` gives a scenario: the world, ``submit``, the budget."""
    return (
        f"You work in the {scenario.world_name} system through its tools. Carry out the "
        "user's task with them. When you are done, call submit once: with the answer if you "
        "were asked a question, otherwise with a short note of what you did, or of why you "
        "did nothing. No tool can be called after submit, and you have "
        f"{scenario.budget} tool calls in all."
    )


def dataset_rows(
    pack: ScenarioSet | str,
    split: str | None = None,
    *,
    system: str | Callable[[Scenario], str] | None = system_prompt,
) -> list[dict[str, Any]]:
    """One row per scenario of ``split`` (every scenario for ``None``), for a TRL dataset.

    Each row holds ``prompt``, chat messages (a system message, then the
    instructions as the user's), and ``scenario``, ``"pack/id"``, which
    ``ScenarioEnv.reset`` reads. ``system`` is the system message's text, a
    function of the scenario giving it, or ``None`` for none. The rows are plain
    data: ``datasets.Dataset.from_list(rows)`` makes a dataset of them.
    """
    chosen = load_pack(pack) if isinstance(pack, str) else pack
    rows: list[dict[str, Any]] = []
    for scenario in chosen.split(split):
        messages: list[dict[str, str]] = []
        text = system(scenario) if callable(system) else system
        if text is not None:
            messages.append({"role": "system", "content": text})
        messages.append({"role": "user", "content": scenario.instructions})
        rows.append({"prompt": messages, SCENARIO_COLUMN: f"{chosen.name}/{scenario.id}"})
    return rows
