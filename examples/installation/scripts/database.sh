#!/bin/sh
# A stand-in for a real database provisioning step, following Landscaper's
# container-deployer contract: OPERATION says what to do, STATE_PATH survives
# between runs, EXPORTS_PATH receives the export.
set -eu
case "$OPERATION" in
  RECONCILE)
    count=$(cat "$STATE_PATH/runs" 2>/dev/null || echo 0)
    echo $((count + 1)) > "$STATE_PATH/runs"
    echo "provisioning the $ENVIRONMENT database (run $((count + 1)))"
    printf '{"host": "db.%s.internal", "port": 5432}' "$ENVIRONMENT" > "$EXPORTS_PATH"
    ;;
  DELETE)
    echo "dropping the $ENVIRONMENT database"
    ;;
esac
