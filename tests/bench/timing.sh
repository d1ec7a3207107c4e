# timing.sh - the timing helpers of the benchmarks (its name does not start with bench_, so run.sh
# does not run it on its own): mean_seconds, the timing loop of bench_edit.sh and bench_inspect.sh,
# which needs RUNS (timed runs), WARMUP (untimed runs before them) and TMP (a scratch folder) set;
# measure, min_seconds and probe_ref_flags, the whole-process timing of bench_eval.sh,
# bench_gemma.sh and bench_kld.sh against llama.cpp.
# Sets timer to mean_seconds' method's name, for the scripts' first line.

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

# Run a command; print "SECONDS MAX_RSS_KIB EXIT CPU_SECONDS" (of the child: wall time, peak
# RSS, exit status, user + system time) on stdout, its output to $1.
measure() {
    out="$1"
    shift
    python3 -c 'import resource, subprocess, sys, time
t = time.time()
with open(sys.argv[1], "w") as out:
    rc = subprocess.run(sys.argv[2:], stdout=out, stderr=subprocess.STDOUT).returncode
use = resource.getrusage(resource.RUSAGE_CHILDREN)
print(f"{time.time() - t:.3f} {use.ru_maxrss} {rc} {use.ru_utime + use.ru_stime:.3f}")' \
        "$out" "$@"
}

# The smaller of two times, either of which may be empty (the first of a series).
min_seconds() { python3 -c 'import sys; v = [float(x) for x in sys.argv[1:] if x]; print(min(v))' "$@"; }

# ref_flags for llama-perplexity: "-nr" when a probe run ($1: its log, then its arguments) fails,
# since llama.cpp's repacked (AMX) kernels die with SIGILL where the OS does not grant AMX (then
# its plain CPU kernels run); empty when it succeeds or REF_BIN is unset. The llama-perplexity
# probed is $PROBE_BIN's, default REF_BIN's (bench_eval.sh also probes REF_BIN_AVX2's).
probe_ref_flags() {
    ref_flags=""
    if [ -z "${PROBE_BIN:-$REF_BIN}" ]; then
        echo "REF_BIN is unset: llama-perplexity comparison skipped"
        return
    fi
    log="$1"
    shift
    set -- $(measure "$log" "${PROBE_BIN:-$REF_BIN}/llama-perplexity" "$@")
    if [ "$3" != 0 ]; then
        ref_flags="-nr"
        echo "llama-perplexity failed with its default repacked kernels (exit $3): using -nr"
    fi
}
