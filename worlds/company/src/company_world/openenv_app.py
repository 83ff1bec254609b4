"""The company world served over OpenEnv: `uvicorn company_world.openenv_app:app`.

The world's scenario pack, `company`, is served beside it: a reset may bind the session to
one of its scenarios, and OpenEnv's Task API lists them. A module of its own, so that using the
world in process never imports the serving plugin. It needs
`pip install "seahaven-world-company[serve]"`.
"""

import seahaven.openenv
from company_world import world

app = seahaven.openenv.app(world, scenarios="company")
