#!/usr/bin/env bash
# Every test: formatting and lints, Rust tests, Go tests against the real
# bridge, the conformance suite, and short fuzzing runs.
set -euo pipefail
root="$(cd "$(dirname "$0")/.." && pwd)"
cd "$root"

step() { printf '\n==> %s\n' "$*"; }

step "cargo fmt --check"
cargo fmt --all -- --check

step "cargo clippy"
cargo clippy --workspace --all-targets --quiet -- -D warnings

step "cargo test"
cargo test --workspace --quiet

step "build the bridge and the conformance runner"
cargo build --quiet -p a3s-code-bridge -p a3s-code-conformance
bridge="$root/target/debug/a3s-code-bridge"

step "go vet and go test -race (against the real bridge)"
(cd sdk-go && go vet ./... && A3S_CODE_BRIDGE="$bridge" go test -race -count=1 ./...)

step "go fuzz: the SDK's message reader (short, bounded)"
(cd sdk-go && go test -run '^$' -fuzz FuzzMessageReader -fuzztime "${FUZZ_SECONDS:-20}s" .)

if [ -x .ci/fuzz.sh ]; then
  step "fuzzing (short, bounded)"
  # A fixed default seed keeps CI reproducible; set FUZZ_SEED to explore.
  FUZZ_SECONDS="${FUZZ_SECONDS:-20}" FUZZ_SEED="${FUZZ_SEED:-20261129}" .ci/fuzz.sh
fi

step "conformance suite"
"$root/target/debug/a3s-code-conformance" "$bridge"
