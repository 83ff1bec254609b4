# Sourced by scripts/test: TRL and a CPU build of torch in .venv, for the one test that runs
# TRL's own GRPOTrainer over the adapter (tests/test_trl.py::test_trl_takes_the_class). Only
# the test command installs them: the demo, and a user of the adapter, need neither (the
# adapter imports no TRL). docs/testing.md says why this torch and how to pick another.
#
# trainer_stack_start: start the install in the background unless .venv already imports
#   both (pip mostly unpacks files, so it runs beside lint and mypy); trainer_stack_wait:
#   wait for it and stop the script if it failed. The install's output goes to a log that
#   is shown only when it fails.
SEAHAVEN_TORCH="${SEAHAVEN_TORCH:-torch==2.13.0}"
SEAHAVEN_TRL="${SEAHAVEN_TRL:-trl>=1.16}"
trainer_stack_pid=""
trainer_stack_log=""
trainer_stack_start() {
  if .venv/bin/python -c 'import torch, trl' >/dev/null 2>&1; then
    echo "setup: .venv has trl and torch for the TRL trainer's test" >&2
    return 0
  fi
  trainer_stack_log=$(mktemp)
  echo "setup: installing $SEAHAVEN_TRL and $SEAHAVEN_TORCH into .venv, in the background," \
    "for the TRL trainer's test" >&2
  .venv/bin/python -m pip install --quiet --disable-pip-version-check \
    "$SEAHAVEN_TORCH" "$SEAHAVEN_TRL" >"$trainer_stack_log" 2>&1 &
  trainer_stack_pid=$!
}
trainer_stack_wait() {
  [ -n "$trainer_stack_pid" ] || return 0
  if wait "$trainer_stack_pid"; then
    echo "setup: trl and torch are in .venv" >&2
    rm -f "$trainer_stack_log"
    trainer_stack_pid=""
    return 0
  fi
  echo "setup: pip could not install $SEAHAVEN_TRL and $SEAHAVEN_TORCH into .venv:" >&2
  cat "$trainer_stack_log" >&2
  rm -f "$trainer_stack_log"
  return 1
}
