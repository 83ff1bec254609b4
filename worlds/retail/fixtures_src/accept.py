"""Which mutants of ``seahaven scenarios check`` tau2-bench's own reward passes too.

The pack's graders are the benchmark's reward basis, so a wrong episode the
benchmark rewards is one they pass too, on purpose: the check's panel finds
it, and the scenario must ``accept`` it, saying why. Which ones those are
depends on what the panel plays, so this script finds them: it builds the pack
as ``pack.py`` does, without accepts, runs the panel on every scenario, and
writes, for each, the kinds of mutant that survived, to ``accepted.yaml``
beside it, which ``pack.py`` reads. Run from ``worlds/retail``, then rewrite
the pack::

    python -m fixtures_src.accept && python -m fixtures_src.pack

Every kind it writes must be one ``pack.ACCEPTED`` gives a reason for. A
survivor of any other kind, or a right episode a grader fails, is a problem of
the grader: it is printed, and nothing is written.
"""

from __future__ import annotations

import sys
from pathlib import Path

import yaml

import seahaven
from fixtures_src import pack as generator
from fixtures_src.source import tau2_data
from seahaven.evaluation import surviving_kinds

__all__ = ["ACCEPTED_FILE", "main"]

ACCEPTED_FILE = Path(__file__).with_name("accepted.yaml")
"""The kinds of mutant each scenario accepts, by scenario id."""


def main(argv: list[str]) -> int:
    """Find the accepted kinds from the benchmark's data (or the folder given) and write them."""
    source = Path(argv[0]) if argv else tau2_data(generator.DOMAIN)
    if source is None:
        raise seahaven.WorldBug(
            "tau2-bench's data is not here: set SEAHAVEN_TAU2_DATA (the project keeps it in "
            "shared/data/tau2)"
        )
    found, problems = surviving_kinds(generator.build_pack(source, accepted={}), generator.ACCEPTED)
    if problems:
        print("the panel found what tau2-bench's reward does not pass:", file=sys.stderr)
        for problem in problems:
            print(f"  {problem}", file=sys.stderr)
        return 1
    text = yaml.safe_dump(found, sort_keys=False, width=100)
    ACCEPTED_FILE.write_text(generator.ACCEPTED_HEADER + text, encoding="utf-8")
    print(f"wrote {ACCEPTED_FILE}: {sum(map(len, found.values()))} kinds in {len(found)} scenarios")
    return 0


if __name__ == "__main__":
    raise SystemExit(main(sys.argv[1:]))
