"""The chat world served over OpenEnv: `uvicorn chat_world.openenv_app:app`.

A module of its own, so that using the world in process never imports the
serving plugin. It needs `pip install "seahaven-world-chat[serve]"`.
"""

import seahaven.openenv

from chat_world import world

app = seahaven.openenv.app(world)
