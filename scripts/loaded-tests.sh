#!/usr/bin/env bash
# The README's test command (the suite on every core, as .ci/run runs it once the install and the checks are done)
# with one busy process per core beside it for the whole run, as a training node or a shared CI runner is busy:
# the suite must not depend on an idle machine (issue 43). Prints the exit status and the wall time at the end.
# Arguments go to pytest (e.g. -m "not slow" for the fast lane). PYTHON picks the interpreter (default .venv's).
set -uo pipefail
cd "$(dirname "$0")/.."
python=${PYTHON:-.venv/bin/python}
cores=$("$python" -c "import os; print(len(os.sched_getaffinity(0)))")
hogs=()
for _ in $(seq "$cores"); do
  "$python" -c "while True: pass" &
  hogs+=($!)
done
trap 'kill "${hogs[@]}" 2>/dev/null; wait "${hogs[@]}" 2>/dev/null' EXIT
start=$(date +%s)
"$python" -m pytest -n auto "$@"
status=$?
echo "loaded-tests: pytest exit $status in $(( $(date +%s) - start )) s wall, beside $cores busy processes (one per core)"
exit $status
