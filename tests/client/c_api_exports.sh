#!/usr/bin/env bash
# libecsnet_client.so must export the C API (ecsnet_*) and nothing else (client-sdk/src/ecsnet_client.map).
set -euo pipefail
library=$1
exported=$(nm -D --defined-only "$library" | awk '{print $3}')
others=$(grep -v '^ecsnet_' <<<"$exported" || true)
if [[ -n $others ]]; then
    echo "exported beyond ecsnet_*:"
    echo "$others"
    exit 1
fi
echo "$(wc -l <<<"$exported") functions exported, all ecsnet_*"
