# timing.sh - the timing loop of the tool benchmarks, sourced by bench_edit.sh and bench_inspect.sh
# (its name does not start with bench_, so run.sh does not run it on its own).
# Needs RUNS (timed runs), WARMUP (untimed runs before them) and TMP (a scratch folder) set.
# Sets timer to the method's name, for the scripts' first line.

timer="date loop"
command -v hyperfine >/dev/null 2>&1 && timer="hyperfine -N"

# Mean wall time in seconds of a command (its output discarded): hyperfine when installed, else
# WARMUP runs and then RUNS timed runs between two clock readings.
mean_seconds() {
    if command -v hyperfine >/dev/null 2>&1; then
        hyperfine -N --warmup "$WARMUP" --runs "$RUNS" --export-json "$TMP/h.json" -- "$*" \
            >/dev/null 2>&1
        python3 -c 'import json, sys; doc = json.load(open(sys.argv[1]))
print("%.6f" % doc["results"][0]["mean"])' "$TMP/h.json"
    else
        i=0
        while [ "$i" -lt "$WARMUP" ]; do "$@" >/dev/null 2>&1; i=$((i + 1)); done
        start=$(date +%s.%N)
        i=0
        while [ "$i" -lt "$RUNS" ]; do "$@" >/dev/null 2>&1; i=$((i + 1)); done
        end=$(date +%s.%N)
        echo "$start $end $RUNS" | awk '{ printf "%.6f\n", ($2 - $1) / $3 }'
    fi
}
