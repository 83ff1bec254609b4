"""The payments world served over OpenEnv: `uvicorn payments_world.openenv_app:app`.

A module of its own, so that using the world in process never imports the
serving plugin. It needs `pip install "seahaven-world-payments[serve]"`.
"""

import seahaven.openenv
from payments_world import world

app = seahaven.openenv.app(world)
