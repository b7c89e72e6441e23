#!/usr/bin/env bash
# The main job: build the bridge, then run the Go quickstart, which starts an
# agent session through the bridge. Offline on the scripted model by default;
# pass a config to use a real provider: .ci/demo.sh -config my-agent.acl
set -euo pipefail
root="$(cd "$(dirname "$0")/.." && pwd)"
cd "$root"
cargo build --quiet -p a3s-code-bridge
export A3S_CODE_BRIDGE="$root/target/debug/a3s-code-bridge"
cd sdk-go
exec go run ./examples/quickstart -dir "$root" "$@"
