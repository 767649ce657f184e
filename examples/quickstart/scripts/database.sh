#!/bin/sh
# An exec deploy item: Landscaper's container-deployer contract, locally.
set -eu

if [ "$OPERATION" = "DELETE" ]; then
  echo "dropping database" >&2
  exit 0
fi

# $STATE_PATH is kept between runs of this item.
runs=$(cat "$STATE_PATH/runs" 2>/dev/null || echo 0)
runs=$((runs + 1))
echo "$runs" > "$STATE_PATH/runs"

name=$(sed -n 's/.*"name":"\([^"]*\)".*/\1/p' "$IMPORTS_PATH")
echo "creating database $name (run $runs, job $JOB_ID)" >&2
cat > "$EXPORTS_PATH" <<JSON
{"host": "db.local", "port": 5432, "name": "$name", "runs": $runs}
JSON
