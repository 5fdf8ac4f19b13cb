#!/usr/bin/env bash
# Coverage-guided fuzzing with AFL++ (cargo-afl, stable Rust) of every target in fuzz/, each for
# a bounded time: `bash .ci/fuzz.sh [SECONDS per target]` (CI: 60). Prints each target's
# executions and findings; a crash or hang fails, naming the inputs AFL++ kept (in
# fuzz/out/<target>/default/crashes/: add one to fuzz/corpus/<target>/ once fixed, and
# `cargo test` in fuzz/ replays it from then on).
set -euo pipefail
cd "$(dirname "$0")/../fuzz"
seconds=${1:-60}
if ! cargo afl --version >/dev/null 2>&1; then
  cargo install cargo-afl --version '^0.15' --locked
fi
# The AFL++ runtime for this rustc (built by the install; built again only if missing).
cargo afl config --build >/dev/null 2>&1 || true
cargo afl build --release --features afl --quiet
export AFL_SKIP_CPUFREQ=1 AFL_I_DONT_CARE_ABOUT_MISSING_CRASHES=1 AFL_NO_UI=1
mkdir -p out
found=0
for target in engine_lines positions books journal_lines run_specs pgn configs; do
  out=out/$target
  rm -rf "$out"
  cargo afl fuzz -V "$seconds" -i "corpus/$target" -o "$out" "target/release/$target" \
    > "out-$target.log" 2>&1 || { tail -20 "out-$target.log"; exit 1; }
  stats=$out/default/fuzzer_stats
  execs=$(awk '/^execs_done/ {print $3}' "$stats")
  crashes=$(awk '/^saved_crashes/ {print $3}' "$stats")
  hangs=$(awk '/^saved_hangs/ {print $3}' "$stats")
  paths=$(awk '/^corpus_count/ {print $3}' "$stats")
  echo "fuzz $target: ${seconds}s, $execs executions, $paths inputs kept, $crashes crashes, $hangs hangs"
  if [ "$crashes" != 0 ] || [ "$hangs" != 0 ]; then
    ls "$out"/default/crashes "$out"/default/hangs
    found=1
  fi
  rm -f "out-$target.log"
done
exit $found
