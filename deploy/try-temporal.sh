#!/usr/bin/env bash
# gonogo on Temporal on one machine, from a clone's root:
#
#   bash deploy/try-temporal.sh
#
# It installs gonogo, builds the Temporal server (SQLite, no Docker), sets
# the cluster up, starts one worker and runs a chain of the built-in
# example's skills with a stand-in agent (deploy/stand-in-agent.sh),
# approving each step, then lists the run and stops what it started. Everything it writes is under
# try-temporal/ (GONOGO_TRY_DIR): the server's log (server.log), the
# worker's (worker.log), the artifacts and the data directory.
#
# Building the server is the slow part, once: about 8 CPU-minutes and 3 GB
# of memory (4 to 5 minutes on an idle 2-core machine, up to 17 on a busy
# one). TEMPORAL_SERVER names a server binary built before.
set -euo pipefail
cd "$(dirname "$0")/.."
repo=$PWD
work=${GONOGO_TRY_DIR:-$repo/try-temporal}
version=v1.32.1
mkdir -p "$work"

go install ./cmd/gonogo
gonogo=$(go env GOPATH)/bin/gonogo
server=${TEMPORAL_SERVER:-$(go env GOPATH)/bin/server}
if [ ! -x "$server" ]; then
  echo "building the Temporal server $version (once; about 8 CPU-minutes)"
  go install "go.temporal.io/server/cmd/server@$version"
fi

# The server's development configuration for SQLite, from its module.
(cd "$work" && go mod download -json "go.temporal.io/server@$version" >/dev/null 2>&1 || true)
mod=$(go env GOMODCACHE)/go.temporal.io/server@$version
rm -rf "$work/temporal" && mkdir -p "$work/temporal/config"
cp "$mod/config/development-sqlite-file.yaml" "$work/temporal/config/"
cp -r "$mod/config/dynamicconfig" "$work/temporal/config/"
chmod -R u+w "$work/temporal"
(cd "$work/temporal" && exec "$server" --config-file config/development-sqlite-file.yaml --allow-no-auth start) \
  >"$work/server.log" 2>&1 &
server_pid=$!
worker_pid=
trap 'kill $worker_pid $server_pid 2>/dev/null || true; wait 2>/dev/null || true' EXIT

export GONOGO_TEMPORAL_ADDR=localhost:7233
export GONOGO_ARTIFACTS="dir:$work/artifacts" GONOGO_DATA_DIR="$work/data"
export GONOGO_SKILLS_DIR="$repo/cmd/gonogo/example/skills"
export GONOGO_RUNNER=command GONOGO_RUNNER_CMD="$repo/deploy/stand-in-agent.sh"

# The server takes some seconds to listen; setup returns once the cluster
# takes runs.
for try in $(seq 60); do
  if "$gonogo" temporal setup 2>"$work/setup.err"; then break; fi
  if [ "$try" = 60 ]; then cat "$work/setup.err" >&2; echo "the server did not come up: see $work/server.log" >&2; exit 1; fi
  sleep 1
done

"$gonogo" worker >"$work/worker.log" 2>&1 &
worker_pid=$!
# Each step stops for a go / no-go: here the two approvals come on
# standard input, as from a script (at a terminal you type them).
printf 'approve\napprove\n' |
  "$gonogo" run --chain 'define-problem-statement -> deliver-prd -- saved searches for Tidepool'
"$gonogo" runs
