#!/usr/bin/env bash
# Bounded fuzzing of the bridge: runs every target of a3s-code-bridge-fuzz
# (bridge/fuzz/README.md) for FUZZ_SECONDS each (default 20) and exits
# non-zero on a failure, after printing the failing input (base64 and hex)
# and saving it under bridge/fuzz/crashes/.
#
#   FUZZ_SECONDS=600 .ci/fuzz.sh         longer runs
#   FUZZ_SEED=1234 .ci/fuzz.sh           replay a run (the seed is printed)
#   FUZZ_TARGETS="frames dispatch"       a subset
#   FUZZ_RELEASE=1                       optimized build: more cases per second
set -euo pipefail
root="$(cd "$(dirname "$0")/.." && pwd)"
cd "$root"

seconds="${FUZZ_SECONDS:-20}"
seed="${FUZZ_SEED:-$(od -An -N6 -tu8 /dev/urandom | tr -d ' ')}"
targets="${FUZZ_TARGETS:-frames classify dispatch}"
crashes="$root/bridge/fuzz/crashes"
profile=()
dir=debug
if [ "${FUZZ_RELEASE:-0}" = 1 ]; then
  profile=(--release)
  dir=release
fi

cargo build --quiet -p a3s-code-bridge-fuzz "${profile[@]}"
bin="$root/target/$dir/a3s-code-bridge-fuzz"

echo "fuzzing ${targets} for ${seconds}s each, seed ${seed} (FUZZ_SEED=${seed} replays)"
for target in $targets; do
  code=0
  "$bin" "$target" --seconds "$seconds" --seed "$seed" --crash-dir "$crashes" || code=$?
  [ "$code" -eq 0 ] && continue
  if [ "$code" -gt 128 ]; then
    # Killed by a signal (stack overflow, abort): nothing was printed. Run
    # the same seed again writing each case to a file first, to keep it.
    echo "FAILURE in ${target}: the fuzzer died (exit ${code}); replaying seed ${seed} with --trace"
    again=0
    "$bin" "$target" --seconds "$((seconds * 3))" --seed "$seed" --crash-dir "$crashes" --trace || again=$?
    inflight="$crashes/inflight-${target}.bin"
    if [ "$again" -gt 128 ] && [ -s "$inflight" ]; then
      saved="$crashes/${target}-${seed}-signal.bin"
      cp "$inflight" "$saved"
      echo "last input before the crash, saved as ${saved}"
      echo "input as base64: $(base64 -w0 "$saved")"
      echo "input as hex: $(od -An -tx1 -v "$saved" | tr -d ' \n' | head -c 4096)"
    fi
  fi
  echo "fuzzing failed: target ${target}, seed ${seed}; inputs under ${crashes}/"
  exit 1
done
echo "fuzzing passed"
