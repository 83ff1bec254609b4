"""ProjectTracker served over OpenEnv: ``uvicorn projecttracker.openenv_app:app``.

A module of its own, so that using the world in process never imports the serving plugin.
It needs ``pip install "seahaven-world-projecttracker[serve]"``.
"""

import seahaven.openenv
from projecttracker import world

app = seahaven.openenv.app(world)
