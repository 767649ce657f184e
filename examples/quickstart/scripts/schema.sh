#!/bin/sh
set -eu

if [ "$OPERATION" = "DELETE" ]; then
  exit 0
fi
echo "applying schema for $(cat "$IMPORTS_PATH")" >&2
