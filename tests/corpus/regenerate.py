"""Write the corpus again: ``python tests/corpus/regenerate.py [episode ...]``.

Run it from the project root with the project's interpreter, on a tree whose
change log and state documents are known to be right (the corpus was first
written on ``main`` before the call path was rebuilt). It writes one
``tests/corpus/<episode>.json`` per episode; ``git diff tests/corpus`` then
shows exactly what changed.
"""

from __future__ import annotations

import json
import sys
import tempfile
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))

from episodes import episodes, record  # noqa: E402


def main(names: list[str]) -> int:
    """Record every episode (or those named) into its JSON file."""
    chosen = [episode for episode in episodes() if not names or episode.name in names]
    for episode in chosen:
        with tempfile.TemporaryDirectory(prefix="seahaven-corpus-") as work_dir:
            recorded = record(episode, Path(work_dir))
        target = HERE / f"{episode.name}.json"
        target.write_text(
            json.dumps(recorded, indent=1, ensure_ascii=False, sort_keys=False) + "\n",
            encoding="utf-8",
        )
        print(f"{target.relative_to(HERE.parent.parent)}: {len(recorded['change_log'])} records")
    return 0


if __name__ == "__main__":
    raise SystemExit(main(sys.argv[1:]))
