#!/bin/sh
# run.sh FUZZDIR SECONDS - run every libFuzzer harness built in FUZZDIR for SECONDS each, starting
# from seeds made at run time (tests/fuzz/make_seeds.py writes FUZZDIR/seeds/<fuzzer>) and from
# the corpus earlier runs kept in FUZZDIR/corpus/<fuzzer>. Prints each fuzzer's run count and
# speed; exits non-zero when a fuzzer found a crash, leak or timeout (its input is saved under
# FUZZDIR/artifacts/).
set -eu
dir=$1
seconds=$2
root=$(cd "$(dirname "$0")/../.." && pwd)
model=$root/models/SmolLM2-135M-Instruct.Q4_1.gguf

seeds=$dir/seeds
rm -rf "$seeds"
python3 "$root/tests/fuzz/make_seeds.py" "$seeds" "$model"
mkdir -p "$dir/artifacts"

failed=0
for fuzzer in "$dir"/fuzz_*; do
    [ -x "$fuzzer" ] || continue
    name=$(basename "$fuzzer")
    corpus=$dir/corpus/$name
    log=$dir/$name.log
    mkdir -p "$corpus"
    echo "== $name for ${seconds}s (log: $log)"
    if UBSAN_OPTIONS=halt_on_error=1:print_stacktrace=1 \
        "$fuzzer" -max_total_time="$seconds" -timeout=10 -rss_limit_mb=2048 -max_len=16384 \
        -print_final_stats=1 -artifact_prefix="$dir/artifacts/$name-" \
        "$corpus" "$seeds/$name" >"$log" 2>&1; then
        result=ok
    else
        result=FAILED
        failed=1
        grep -E "ERROR|SUMMARY|Test unit written" "$log" || tail -20 "$log"
    fi
    runs=$(sed -n 's/^stat::number_of_executed_units: *//p' "$log")
    speed=$(sed -n 's/^stat::average_exec_per_sec: *//p' "$log")
    units=$(ls "$corpus" | wc -l)
    echo "$name: $result, ${runs:-?} runs, ${speed:-?} exec/s, corpus $units inputs"
done
exit $failed
