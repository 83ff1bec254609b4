"""The TRL adapter: schemas through the function TRL uses, and rollouts driven as TRL drives them.

``transformers.utils.get_json_schema`` is what TRL turns each environment method
into a tool schema with; it imports without torch, and it is a test dependency,
so under ``CI=true`` its absence fails these tests. ``test_trl_takes_the_class``
runs TRL's own trainer: the test command installs trl and a CPU build of torch
into the 3.11 environment for it (``scripts/_trainer.sh``), so under ``CI=true``
it fails rather than skips where they are missing; it runs once a run. The other rollouts follow
``GRPOTrainer``'s environment path: the factory called with no arguments, tools
listed with ``inspect.getmembers(type(env), inspect.isfunction)`` and called
by ``__name__`` with the model's arguments as keywords, results turned to
text with ``str``, ``reset(**row)`` with every column, ``get_reward()`` last.
"""

from __future__ import annotations

import enum
import gc
import inspect
import json
import logging
import os
import subprocess
import sys
from collections.abc import Callable
from typing import Annotated, Any, Literal

import pydantic
import pytest

import seahaven
from seahaven import grading
from seahaven.episodes.trl import (
    ScenarioEnv,
    close,
    dataset_rows,
    environment,
    system_prompt,
)
from seahaven.registry.discovery import find_world
from seahaven.scenarios import Scenario, ScenarioSet, Start, ToolCall

CI = os.environ.get("CI", "").lower() == "true"
SHIPPED_WORLDS = ("payments", "chat", "company")


def _get_json_schema() -> Callable[[Any], dict[str, Any]]:
    try:
        from transformers.utils import get_json_schema
    except ImportError as error:
        if CI:
            pytest.fail(f"transformers is a test dependency (seahaven[test]): {error}")
        pytest.skip(f"transformers is not installed ({error}): pip install -e '.[test]'")
    schema: Callable[[Any], dict[str, Any]] = get_json_schema
    return schema


def _shipped_world(name: str) -> seahaven.World:
    try:
        return find_world(name).world
    except seahaven.WorldBug as error:
        if CI:
            pytest.fail(f"the {name} world is not installed: {error}")
        pytest.skip(f"the {name} world is not installed: pip install -e worlds/{name}")


# --- a small pack on the payments world -----------------------------------------------------

RETURNED_CHARGE = "ch_7TzmlFZM5WDG10G70tdaNX"  # order #4185 in the small_shop fixture
OTHER_CHARGE = "ch_7LgAHhHr1aUt8sRndiJcYR"  # order #4116

REFUND = Scenario(
    id="refund-4185",
    world="payments",
    start=Start(fixture="small_shop"),
    instructions=(
        f"Order #4185 came back. Refund its charge, {RETURNED_CHARGE}, in full, then submit "
        "a one-line note."
    ),
    grader=grading.all_of(
        grading.changed("charges", {"id": RETURNED_CHARGE}, to={"status": "refunded"}),
        grading.count("refunds", {"charge_id": RETURNED_CHARGE}, equals=1),
        grading.nothing_else_changed(allow=["charges", "refunds", "balance_transactions"]),
    ),
    solution=(
        ToolCall(tool="create_refund", arguments={"charge_id": RETURNED_CHARGE}),
        ToolCall(tool="submit", arguments={"answer": "refunded order #4185"}),
    ),
    budget=4,
)
EMAIL = Scenario(
    id="umar-email",
    world="payments",
    start=Start(fixture="small_shop"),
    instructions="What is the email address of the customer Umar Farouk? Submit the address.",
    grader=grading.all_of(
        grading.answer(equals="umar.farouk@example.com"),
        grading.nothing_else_changed(),
    ),
    solution=(ToolCall(tool="submit", arguments={"answer": "umar.farouk@example.com"}),),
    budget=5,
)
PACK = ScenarioSet(
    "trl-shop",
    "1.0.0",
    [REFUND, EMAIL],
    splits={"train": [REFUND.id], "test": [EMAIL.id]},
)


def tool_dict(env: ScenarioEnv) -> dict[str, Callable[..., Any]]:
    """The tools of one rollout, exactly as GRPOTrainer builds them."""
    methods = [
        getattr(env, name)
        for name, _ in inspect.getmembers(type(env), predicate=inspect.isfunction)
        if name not in ("reset", "get_reward") and not name.startswith("_")
    ]
    return {method.__name__: method for method in methods}


def model_call(tools: dict[str, Callable[..., Any]], name: str, **arguments: Any) -> Any:
    """One tool call as the trainer makes it, and the text the model reads back, parsed."""
    text = str(tools[name](**arguments))
    return json.loads(text)


# --- schemas ----------------------------------------------------------------------------------


def _paragraphs_but_args(description: str) -> str:
    """A tool's description as TRL should show it: every paragraph but the Args: block."""
    paragraphs = [p.strip("\n") for p in description.strip().split("\n\n")]
    kept = [p for p in paragraphs if not p.startswith("Args:")]
    return "\n\n".join(kept)


def _projected(prop: dict[str, Any]) -> dict[str, Any]:
    """What get_json_schema can say of one world parameter: type, enum, items, nullable."""
    nullable = False
    options = prop.get("anyOf")
    if options:
        kept = [option for option in options if option.get("type") != "null"]
        nullable = len(kept) < len(options)
        assert len(kept) == 1, f"the shipped worlds' unions are X | None: {prop}"
        prop = kept[0]
    out: dict[str, Any] = {"type": prop["type"]}
    if "enum" in prop:
        out["enum"] = prop["enum"]
    if prop["type"] == "array" and "items" in prop:
        out["items"] = _projected(prop["items"])
    if prop["type"] == "object" and isinstance(prop.get("additionalProperties"), dict):
        out["additionalProperties"] = _projected(prop["additionalProperties"])
    if nullable:
        out["nullable"] = True
    return out


@pytest.mark.parametrize("world_name", SHIPPED_WORLDS)
def test_every_method_of_every_shipped_world_has_a_schema(world_name: str) -> None:
    get_json_schema = _get_json_schema()
    world = _shipped_world(world_name)
    env = environment(world)()
    with world.instance() as inst:
        listed = {tool["name"]: tool for tool in inst.tools()}
    tools = tool_dict(env)
    assert set(tools) == {*listed, "submit"}
    assert {name for name, _ in inspect.getmembers(type(env), inspect.isfunction)} >= {
        "reset",
        "get_reward",
    }
    for name, method in tools.items():
        schema = get_json_schema(method)
        function = schema["function"]
        assert function["name"] == name
        if name == "submit":
            continue
        source = listed[name]
        description = function["description"]
        assert "Args:" not in description
        assert description == _paragraphs_but_args(source["description"])
        parameters = function["parameters"]
        wanted = source["input_schema"]
        assert list(parameters["properties"]) == list(wanted["properties"])
        assert parameters.get("required", []) == wanted.get("required", [])
        for param, prop in wanted["properties"].items():
            got = parameters["properties"][param]
            assert got["description"], f"{name}.{param} has no description"
            assert {key: got[key] for key in got if key != "description"} == _projected(prop), (
                f"{name}.{param}"
            )


class Colour(enum.Enum):
    """An enum parameter: pydantic writes it as a $ref into $defs."""

    RED = "red"
    BLUE = "blue"


class Address(pydantic.BaseModel):
    """A nested object parameter."""

    model_config = pydantic.ConfigDict(strict=True)

    city: str
    postcode: str | None = None


def shapes_world() -> seahaven.World:
    """A world whose tools use every parameter shape, and names Python cannot spell."""
    world = seahaven.World(
        name="shapes",
        version="1.0.0",
        schema="CREATE TABLE seen (v TEXT PRIMARY KEY) STRICT;",
        state_format="seahaven.state/1",
    )

    @world.tool
    def paint(
        ctx: seahaven.Ctx,
        colour: Colour,
        sizes: list[int],
        weights: dict[str, float],
        address: Address,
        level: Literal[1, 2, 3] = 1,
        label: str | int | None = None,
        when: Annotated[str, pydantic.Field(alias="from", description="Where it starts.")] = "",
    ) -> dict[str, Any]:
        """Paint something. Returns: what was painted (the word must not end the summary)."""
        return {
            "colour": colour.value,
            "sizes": sizes,
            "weights": weights,
            "city": address.city,
            "level": level,
            "label": label,
            "from": when,
        }

    @world.tool(name="class")
    def class_tool(ctx: seahaven.Ctx) -> str:
        """A tool named with a Python keyword."""
        return "class"

    @world.tool(name="get-reward")
    def get_reward_tool(ctx: seahaven.Ctx) -> str:
        """A tool whose name becomes the reward method's."""
        return "get-reward"

    @world.tool(name="trial")
    def trial_tool(ctx: seahaven.Ctx) -> str:
        """A tool named like a property of the environment."""
        return "trial"

    @world.tool(name="3d-print")
    def print_tool(ctx: seahaven.Ctx) -> str:
        """A tool whose name starts with a digit."""
        return "3d-print"

    @world.tool
    def crash(ctx: seahaven.Ctx) -> str:
        """A tool with a bug in it."""
        raise RuntimeError("secret internals")

    return world


SHAPES = shapes_world()
SHAPES_PACK = ScenarioSet(
    "shapes-pack",
    "1.0.0",
    [
        Scenario(
            id="anything",
            world=SHAPES,
            instructions="Paint something.",
            grader=grading.submitted(),
            budget=10,
        )
    ],
)


def test_parameter_shapes_map_to_the_types_get_json_schema_reads() -> None:
    get_json_schema = _get_json_schema()
    env = environment(SHAPES_PACK)()
    schema = get_json_schema(env.paint)["function"]
    # The summary keeps the world's text, with the section word defused.
    assert schema["description"].startswith("Paint something. Returns - what was painted")
    props = schema["parameters"]["properties"]
    assert schema["parameters"]["required"] == ["colour", "sizes", "weights", "address"]
    assert props["colour"]["type"] == "string"
    assert props["colour"]["enum"] == ["red", "blue"]
    assert props["sizes"] == {
        "type": "array",
        "items": {"type": "integer"},
        "description": "Sizes.",
    }
    assert props["weights"]["additionalProperties"] == {"type": "number"}
    # A nested object is a plain object to get_json_schema: its keys are told in words.
    assert props["address"]["type"] == "object"
    assert "keys city (required), postcode" in props["address"]["description"]
    assert props["level"]["enum"] == [1, 2, 3]
    assert "Default: 1." in props["level"]["description"]
    assert props["label"] == {
        "type": ["integer", "string"],
        "nullable": True,
        "description": "Label.",
    }
    # A keyword argument name is spelled with a trailing underscore and mapped back.
    assert props["from_"]["description"] == 'Where it starts. Default: "".'
    reset_on(env, "shapes-pack/anything")
    result = json.loads(
        env.paint(
            colour="blue",
            sizes=[1, 2],
            weights={"a": 0.5},
            address={"city": "Lyon"},
            from_="north",
        )
    )
    assert result == {
        "colour": "blue",
        "sizes": [1, 2],
        "weights": {"a": 0.5},
        "city": "Lyon",
        "level": 1,
        "label": None,
        "from": "north",
    }


def reset_on(env: ScenarioEnv, scenario: str, **columns: Any) -> str | None:
    return env.reset(scenario=scenario, **columns)


def test_tool_names_python_cannot_spell_get_method_names_of_their_own() -> None:
    get_json_schema = _get_json_schema()
    env_class = environment(SHAPES_PACK)
    assert dict(env_class.tool_names) == {
        "paint": "paint",
        "class_": "class",
        "get_reward_": "get-reward",
        "trial_": "trial",
        "tool_3d_print": "3d-print",
        "crash": "crash",
        "submit": "submit",
    }
    env = env_class()
    tools = tool_dict(env)
    assert set(tools) == set(env_class.tool_names)
    for name, method in tools.items():
        assert get_json_schema(method)["function"]["name"] == name
    reset_on(env, "anything")
    for method, tool in env_class.tool_names.items():
        if tool not in ("paint", "crash", "submit"):
            assert json.loads(tools[method]()) == tool
    # The property and the reward method are still the class's own.
    assert env.trial is not None
    assert env.get_reward() == 0.0


def test_names_that_collide_are_refused() -> None:
    world = seahaven.World(
        name="twins", version="1.0.0", schema="", state_format="seahaven.state/1"
    )

    @world.tool(name="look-up")
    def one(ctx: seahaven.Ctx) -> str:
        """One spelling."""
        return "one"

    @world.tool(name="look_up")
    def two(ctx: seahaven.Ctx) -> str:
        """Another spelling."""
        return "two"

    with pytest.raises(seahaven.WorldBug, match="'look-up' and 'look_up' both become"):
        environment(world)

    clashing = seahaven.World(
        name="clash", version="1.0.0", schema="", state_format="seahaven.state/1"
    )

    @clashing.tool(name="submit")
    def submit(ctx: seahaven.Ctx) -> str:
        """A world tool that takes the scenario's name."""
        return "mine"

    with pytest.raises(seahaven.WorldBug, match="has a tool named 'submit'"):
        environment(clashing)


# --- rollouts ---------------------------------------------------------------------------------


def test_a_solving_rollout_earns_reward_one() -> None:
    factory = environment(PACK)
    env = factory()  # TRL calls the factory with no arguments
    row = {**dataset_rows(PACK, "train")[0], "difficulty": "easy", "source": ["hand", "written"]}
    # The row's prompt already shows the instructions, so nothing is appended twice.
    assert env.reset(**row) is None
    tools = tool_dict(env)
    refund = model_call(tools, "create_refund", charge_id=RETURNED_CHARGE)
    assert refund["charge_id"] == RETURNED_CHARGE and refund["amount"] == 899
    assert model_call(tools, "submit", answer="refunded order #4185") == {
        "submitted": True,
        "answer": "refunded order #4185",
    }
    assert env.get_reward() == 1.0
    assert env.trial is not None and env.trial.grade is not None and env.trial.grade.passed
    close(env)


def test_a_wrong_rollout_earns_less() -> None:
    env = environment(PACK)()
    env.reset(**dataset_rows(PACK, "train")[0])
    tools = tool_dict(env)
    model_call(tools, "create_refund", charge_id=OTHER_CHARGE)  # the wrong order
    model_call(tools, "submit", answer="done")
    assert env.get_reward() < 1.0
    assert env.trial is not None and env.trial.grade is not None
    assert not env.trial.grade.passed

    # The question, answered wrong, then right on the same object after another reset.
    env.reset(**dataset_rows(PACK, "test")[0])
    model_call(tool_dict(env), "submit", answer="umar@example.com")
    assert env.get_reward() == 0.0
    env.reset(**dataset_rows(PACK, "test")[0])
    model_call(tool_dict(env), "submit", answer="umar.farouk@example.com")
    assert env.get_reward() == 1.0
    close(env)


def test_refusals_reach_the_model_as_text() -> None:
    env = environment(PACK)()
    env.reset(scenario="trl-shop/refund-4185")
    tools = tool_dict(env)
    missing = model_call(tools, "get_charge", charge_id="ch_doesnotexist0")
    assert missing["error"]["code"] in ("NOT_FOUND", "not_found")
    assert missing["error"]["message"]
    wrong = model_call(tools, "create_refund", charge=RETURNED_CHARGE)  # a wrong argument name
    # The world's own argument refusal, naming the missing and the stray argument.
    assert wrong["error"]["code"] == "INVALID_INPUT"
    assert "charge_id: Field required" in wrong["error"]["message"]
    model_call(tools, "list_charges", limit=1)
    model_call(tools, "get_balance")  # the fourth call spends the budget of 4
    over = model_call(tools, "get_balance")
    assert over["error"]["code"] == "episode_over"
    assert env.trial is not None and env.trial.ended_by == "budget"
    assert env.get_reward() < 1.0
    close(env)


def test_a_world_bug_is_logged_not_shown(caplog: pytest.LogCaptureFixture) -> None:
    env = environment(SHAPES_PACK)()
    env.reset(scenario="anything")
    with caplog.at_level(logging.ERROR, logger="seahaven.trl"):
        text = env.crash()
    error = json.loads(text)["error"]
    assert error["code"] == "internal" and "secret" not in text
    assert error["details"]["id"] in caplog.text
    assert "secret internals" in caplog.text
    close(env)


def test_get_reward_ends_an_unfinished_episode() -> None:
    env = environment(PACK)()
    env.reset(scenario="refund-4185")
    env.create_refund(charge_id=RETURNED_CHARGE)
    # No submit: the grade is taken where the episode stands, and the state is right.
    assert env.get_reward() == 1.0
    assert env.trial is not None and env.trial.ended_by == "finish"
    close(env)


def test_reset_appends_the_instructions_where_the_prompt_lacks_them() -> None:
    env = environment(PACK)()
    assert env.reset(scenario="trl-shop/umar-email") == EMAIL.instructions
    prompt = [{"role": "user", "content": "Here is your task:"}]
    assert env.reset(scenario="umar-email", prompt=prompt) == "\n\n" + EMAIL.instructions
    prompt = [{"role": "user", "content": "Task below.\n"}]
    assert env.reset(scenario="umar-email", prompt=prompt) == EMAIL.instructions
    close(env)


def test_reset_takes_a_seed_column() -> None:
    env = environment(PACK)()
    env.reset(scenario="umar-email", seed=7)
    assert env.trial is not None and env.trial.seed == 7
    env.reset(scenario="umar-email")
    assert env.trial is not None and env.trial.seed == EMAIL.start.seed
    with pytest.raises(seahaven.WorldBug, match="whole number"):
        env.reset(scenario="umar-email", seed=True)
    with pytest.raises(seahaven.WorldBug, match="whole number"):
        env.reset(scenario="umar-email", seed="7")
    close(env)


def test_a_bad_row_is_refused_and_names_the_fix() -> None:
    env = environment(PACK)()
    with pytest.raises(seahaven.WorldBug, match="without a 'scenario' column"):
        env.reset(prompt=[], difficulty="easy")
    with pytest.raises(seahaven.WorldBug, match="has no scenario 'nope'"):
        env.reset(scenario="trl-shop/nope")
    with pytest.raises(seahaven.WorldBug, match="pack/id"):
        env.reset(scenario="a/b/c")
    with pytest.raises(seahaven.WorldBug, match="pack/id text"):
        env.reset(scenario=3)
    with pytest.raises(seahaven.WorldBug, match="runs on the world 'shapes'"):
        env.reset(scenario=f"{__name__}:SHAPES_PACK/anything")
    assert env.trial is None
    with pytest.raises(seahaven.WorldBug, match="before reset"):
        env.get_reward()
    with pytest.raises(seahaven.WorldBug, match="before reset"):
        env.get_balance()


def test_a_class_bound_to_a_world_reads_pack_ids() -> None:
    env = environment(SHAPES)()
    with pytest.raises(seahaven.WorldBug, match="name it as pack/id"):
        env.reset(scenario="anything")
    with pytest.raises(seahaven.WorldBug, match="runs on the world 'payments'"):
        environment(_shipped_world("chat"))().reset(scenario=f"{__name__}:PACK/umar-email")


@pytest.mark.usefixtures("on_disk")
def test_reset_close_and_collection_destroy_the_instances() -> None:
    env = environment(PACK)()
    env.reset(scenario="refund-4185")
    assert env.trial is not None
    first = env.trial.instance.directory
    env.get_reward()  # grading with nothing_else_changed reads the start too
    assert first.exists()
    env.reset(scenario="umar-email")
    assert not first.exists()
    assert env.trial is not None
    second = env.trial.instance.directory
    close(env)
    assert not second.exists() and env.trial is None
    close(env)  # idempotent

    env.reset(scenario="umar-email")
    third = env.trial.instance.directory  # type: ignore[union-attr]
    del env
    gc.collect()
    assert not third.exists()

    with environment(PACK)() as held:
        held.reset(scenario="umar-email")
        fourth = held.trial.instance.directory  # type: ignore[union-attr]
    assert not fourth.exists()


def test_the_class_offers_no_other_public_function() -> None:
    env_class = environment(PACK)
    functions = {name for name, _ in inspect.getmembers(env_class, inspect.isfunction)}
    public = {name for name in functions if not name.startswith("_")}
    assert public == {"reset", "get_reward", *env_class.tool_names}
    assert env_class.__name__ == "TrlShopEnv"
    assert environment(PACK, name="ShopEnv").__name__ == "ShopEnv"
    with pytest.raises(seahaven.WorldBug, match="Python identifier"):
        environment(PACK, name="not a name")
    with pytest.raises(seahaven.WorldBug, match="base class"):
        ScenarioEnv()


def test_a_pack_by_module_path_and_a_pack_over_two_worlds() -> None:
    assert environment(f"{__name__}:PACK").pack is PACK
    mixed = ScenarioSet("mixed", "1.0.0", [REFUND, *SHAPES_PACK])
    with pytest.raises(seahaven.WorldBug, match="spans the worlds 'payments', 'shapes'"):
        environment(mixed)
    with pytest.raises(seahaven.WorldBug, match="takes a ScenarioSet"):
        environment(42)  # type: ignore[arg-type]


# --- datasets ---------------------------------------------------------------------------------


def test_dataset_rows_hold_a_chat_prompt_and_the_scenario() -> None:
    rows = dataset_rows(PACK)
    assert [row["scenario"] for row in rows] == ["trl-shop/refund-4185", "trl-shop/umar-email"]
    first = rows[0]
    assert set(first) == {"prompt", "scenario"}
    assert first["prompt"] == [
        {"role": "system", "content": system_prompt(REFUND)},
        {"role": "user", "content": REFUND.instructions},
    ]
    assert "4 tool calls" in system_prompt(REFUND) and "submit" in system_prompt(REFUND)
    # Plain data, the same shape on every row: what Dataset.from_list takes.
    assert json.loads(json.dumps(rows)) == rows
    assert [row["scenario"] for row in dataset_rows(PACK, "test")] == ["trl-shop/umar-email"]
    bare = dataset_rows(PACK, "train", system=None)
    assert bare[0]["prompt"] == [{"role": "user", "content": REFUND.instructions}]
    custom = dataset_rows(PACK, "train", system=lambda scenario: f"Task {scenario.id}.")
    assert custom[0]["prompt"][0] == {"role": "system", "content": "Task refund-4185."}
    with pytest.raises(seahaven.WorldBug, match="no split 'dev'"):
        dataset_rows(PACK, "dev")


def test_importing_the_adapter_imports_neither_trl_nor_transformers() -> None:
    code = (
        "import sys, seahaven.episodes.trl\n"
        "print(sorted(m for m in ('trl', 'transformers', 'torch') if m in sys.modules))"
    )
    finished = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, check=True
    )
    assert finished.stdout.strip() == "[]"


def _trainer_or_skip() -> Any:
    """TRL's GRPOConfig and GRPOTrainer; a skip where they are missing, a failure under CI."""
    try:
        import torch  # noqa: F401
        from trl import GRPOConfig, GRPOTrainer
    except (ImportError, RuntimeError) as error:
        reason = (
            f"TRL's GRPOTrainer cannot be imported ({error}): the test command installs trl "
            "and torch into .venv (scripts/_trainer.sh)"
        )
        if CI:
            pytest.fail(reason)
        pytest.skip(reason)
    return GRPOConfig, GRPOTrainer


MEMOS = seahaven.World(
    name="memos",
    version="1.0.0",
    schema="CREATE TABLE memos (id TEXT PRIMARY KEY, gist TEXT NOT NULL) STRICT;",
    state_format="seahaven.state/1",
)


@MEMOS.tool
def jot(ctx: seahaven.Ctx, id: str, gist: str) -> dict[str, str]:
    """File one memo under the id the caller chose."""
    ctx.db.execute("INSERT INTO memos (id, gist) VALUES (?, ?)", id, gist)
    return {"id": id, "gist": gist}


MEMO_PACK = ScenarioSet(
    "memo-pack",
    "1.0.0",
    [
        Scenario(
            id=f"file-{memo}",
            world=MEMOS,
            instructions=f"File a memo with the id {memo} and the gist {gist}.",
            grader=grading.exists("memos", {"id": memo, "gist": gist}),
            budget=5,
        )
        for memo, gist in (("m1", "hello"), ("m2", "goodbye"))
    ],
)


@pytest.mark.once_per_run
def test_trl_takes_the_class() -> None:
    """One GRPO step of TRL's own trainer over the class.

    trl requires accelerate, which requires torch, and ``GRPOTrainer``, where
    the environment path lives, imports torch at once. The test command puts
    both into the 3.11 environment only (a CPU build of torch is on this
    machine's disk for 3.11; on the other interpreters pip would download a
    CUDA build of several gigabytes), so the test is ``once_per_run``: the
    other interpreters' passes leave it out. A tiny random model (no
    download) with a tokenizer trained here on TRL's Qwen3 chat template plays a
    scripted completion: it files memo m1 and submits, which solves one
    scenario and fails the other, and the trainer's rewards say so.
    """
    grpo_config, grpo_trainer = _trainer_or_skip()
    import torch
    import trl
    from datasets import Dataset
    from tokenizers import Tokenizer, decoders, models, pre_tokenizers, trainers
    from transformers import PreTrainedTokenizerFast, Qwen2Config, Qwen2ForCausalLM

    rows = [
        {**row, "note": f"ignored column {index}"}
        for index, row in enumerate(dataset_rows(MEMO_PACK) * 2)
    ]
    template_path = os.path.join(os.path.dirname(trl.__file__), "chat_templates", "qwen3.jinja")
    with open(template_path, encoding="utf-8") as file:
        template = file.read()
    script = [
        '<tool_call>\n{"name": "jot", "arguments": {"id": "m1", "gist": "hello"}}\n</tool_call>',
        '<tool_call>\n{"name": "submit", "arguments": {"answer": "filed"}}\n</tool_call>',
        "Done.",
    ]
    bpe = Tokenizer(models.BPE())
    bpe.pre_tokenizer = pre_tokenizers.ByteLevel(add_prefix_space=False)
    bpe.decoder = decoders.ByteLevel()
    bpe.train_from_iterator(
        [template, json.dumps(rows), *script],
        trainers.BpeTrainer(
            vocab_size=800,
            special_tokens=["<|endoftext|>", "<|im_start|>", "<|im_end|>"],
            initial_alphabet=pre_tokenizers.ByteLevel.alphabet(),
        ),
    )
    tokenizer = PreTrainedTokenizerFast(
        tokenizer_object=bpe, eos_token="<|im_end|>", pad_token="<|endoftext|>"
    )
    tokenizer.padding_side = "left"
    tokenizer.chat_template = template

    class ScriptedModel(Qwen2ForCausalLM):  # type: ignore[misc]
        """Random weights; generate answers with the script's next turn for each prompt."""

        def generate(self, input_ids: Any = None, **kwargs: Any) -> Any:
            turns = []
            for ids in input_ids:
                done = tokenizer.decode(ids).count("<tool_response>")
                turn = script[min(done, len(script) - 1)] + "<|im_end|>"
                turns.append(tokenizer.encode(turn, add_special_tokens=False))
            width = max(map(len, turns))
            pad = [tokenizer.pad_token_id]
            tail = torch.tensor([turn + pad * (width - len(turn)) for turn in turns])
            return torch.cat([input_ids, tail.to(input_ids.dtype)], dim=1)

    torch.manual_seed(0)
    model = ScriptedModel(
        Qwen2Config(
            vocab_size=len(tokenizer),
            hidden_size=32,
            intermediate_size=64,
            num_hidden_layers=1,
            num_attention_heads=2,
            num_key_value_heads=1,
            max_position_embeddings=8192,
            eos_token_id=tokenizer.eos_token_id,
            pad_token_id=tokenizer.pad_token_id,
        )
    )
    graded: list[tuple[str, str | None, float]] = []
    memo_env = environment(MEMO_PACK)

    class Watched(memo_env):  # type: ignore[misc, valid-type]
        def get_reward(self) -> float:
            reward = super().get_reward()
            assert self.trial is not None
            graded.append((self.trial.scenario.id, self.trial.ended_by, reward))
            return float(reward)

    os.environ.setdefault("TRL_EXPERIMENTAL_SILENCE", "1")
    trainer = grpo_trainer(
        model=model,
        processing_class=tokenizer,
        train_dataset=Dataset.from_list(rows),
        environment_factory=Watched,
        args=grpo_config(
            output_dir=os.path.join(os.environ.get("TMPDIR", "/tmp"), "seahaven-trl-test"),
            per_device_train_batch_size=4,
            num_generations=2,
            max_steps=1,
            max_completion_length=512,
            max_tool_calling_iterations=4,
            shuffle_dataset=False,
            report_to="none",
            use_cpu=True,
            save_strategy="no",
        ),
    )
    assert sorted(tool.__name__ for tool in trainer.tools) == ["jot", "submit"]
    trainer.train()
    assert sorted(graded) == [
        ("file-m1", "submit", 1.0),
        ("file-m1", "submit", 1.0),
        ("file-m2", "submit", 0.0),
        ("file-m2", "submit", 0.0),
    ]
    logged = trainer.state.log_history[0]
    assert logged["tools/failure_frequency"] == 0
    assert logged["reward"] == 0.5
