#!/bin/sh
# The tools on a model larger than the machine's memory: make_big_model.py writes a sparse
# ~30 GB F32 llama-shaped model (Llama-3-8B's shapes, 34 layers, a 258-token vocabulary), and
# each tool runs on it under a memory limit of BIG_LIMIT (default 3G): gguf-inspect (report,
# --hash, --check), gguf-quantize to Q8_0 (--pure) and to the Q4_K_M mix, gguf-inspect --check and
# gguf-edit on the Q8_0 result, gguf-split (the model cut into 4 GB parts; the Q8_0 file's parts
# merged back) and gguf-eval (perplexity of one 64-token chunk, under BIG_LIMIT and under 1G).
# Each row prints the wall time, the peak RSS of the process (/usr/bin/time) and the peak usage
# of its memory cgroup (page cache included, which the kernel reclaims under the limit) with the
# peak of its anonymous memory (which it cannot reclaim).
#
# The limit is a cgroup v1 memory group (/sys/fs/cgroup/memory, root needed) or, failing that,
# a cgroup v2 scope from systemd-run (the system's, else the user's; not tried yet: the machine of
# docs/benchmarks.md's run has no D-Bus for it); with neither the tools run unlimited and only
# the peak RSS is measured (`ulimit -v` cannot stand in: mapping the model needs 30 GB of address
# space, and the tools fail with "cannot map").
#
# Skipped unless BENCH_BIG=1: it needs ~40 GB of free disk in BIG_DIR (default: a temporary
# folder under /var/tmp; the model takes 1.8 GB of disk, the 4 GB parts of the split 30 GB) and
# about 5 minutes on two cores. Environment: BUILD, BIG_DIR, BIG_LIMIT, BIG_LAYERS (model layers,
# default 34), BIG_TYPE (f32, or f16 for a 15 GB model), BIG_KEEP=1 to keep the model for another
# run (a kept model is reused whatever its type).
set -eu
: "${BUILD:=build}"
if [ "${BENCH_BIG:-0}" != 1 ]; then
    echo "skipped: set BENCH_BIG=1 to run (needs ~40 GB of disk and about 5 minutes)"
    exit 0
fi
: "${BIG_LIMIT:=3G}"
: "${BIG_LAYERS:=34}"
: "${BIG_TYPE:=f32}"
if [ ! -x /usr/bin/time ]; then
    echo "bench_big: /usr/bin/time is missing (apt-get install time)" >&2
    exit 1
fi
work="${BIG_DIR:-$(mktemp -d /var/tmp/ggtk-big.XXXXXX)}"
mkdir -p "$work"
cleanup() {
    rm -f "$work"/out-* "$work"/part-* "$work"/text.txt "$work"/time.txt "$work"/std*.txt
    [ "${BIG_KEEP:-0}" = 1 ] || rm -f "$work/big.gguf"
    [ -n "${BIG_DIR:-}" ] || rmdir "$work" 2>/dev/null || true
}
trap cleanup EXIT

# How the limit is enforced: "cgroup-v1", "systemd-run" or "none".
cg_root=/sys/fs/cgroup/memory
if [ -w "$cg_root" ] && mkdir "$cg_root/ggtk-big-probe-$$" 2>/dev/null; then
    rmdir "$cg_root/ggtk-big-probe-$$"
    limiter=cgroup-v1
elif command -v systemd-run >/dev/null 2>&1 &&
     systemd-run --quiet --scope -p MemoryMax=1G true 2>/dev/null; then
    limiter=systemd-run
    scope_of=""
elif command -v systemd-run >/dev/null 2>&1 &&
     systemd-run --quiet --scope --user -p MemoryMax=1G true 2>/dev/null; then
    limiter=systemd-run
    scope_of=--user
else
    limiter=none
fi

# The model's pages leave the page cache before each run, so that every tool reads it cold.
evict() { dd if="$1" iflag=nocache count=0 status=none 2>/dev/null || true; }

# limited LABEL CMD...: runs CMD under the limit $limit, every model evicted first; prints one
# row: wall time, peak RSS, and with cgroup-v1 the group's peak usage (page cache included) and
# the peak of its anonymous memory ("rss" of memory.stat, sampled every 0.1 s: the memory the
# kernel cannot reclaim). A failing command prints its exit status and the last lines of its
# stderr, and the run goes on.
limited() {
    label=$1
    shift
    for f in "$work"/*.gguf; do evict "$f"; done
    rm -f "$work/time.txt" # an OOM kill of /usr/bin/time leaves none
    cg=""
    start=$(date +%s.%N)
    set +e
    case "$limiter" in
    cgroup-v1)
        cg="$cg_root/ggtk-big-$$"
        mkdir "$cg"
        echo "$limit" >"$cg/memory.limit_in_bytes"
        sh -c 'echo $$ >"$1/cgroup.procs" && shift && exec "$@"' sh "$cg" \
            /usr/bin/time -f %M -o "$work/time.txt" "$@" >"$work/stdout.txt" 2>"$work/stderr.txt" &
        pid=$!
        anon=0
        while kill -0 "$pid" 2>/dev/null; do
            now=$(awk '/^rss / { print $2 }' "$cg/memory.stat")
            [ "${now:-0}" -le "$anon" ] || anon=$now
            sleep 0.1
        done
        wait "$pid"
        status=$?
        ;;
    systemd-run)
        systemd-run --quiet --scope $scope_of -p MemoryMax="$limit" -p MemorySwapMax=0 \
            /usr/bin/time -f %M -o "$work/time.txt" "$@" >"$work/stdout.txt" 2>"$work/stderr.txt"
        status=$?
        ;;
    none)
        /usr/bin/time -f %M -o "$work/time.txt" "$@" >"$work/stdout.txt" 2>"$work/stderr.txt"
        status=$?
        ;;
    esac
    set -e
    end=$(date +%s.%N)
    rss_kib=$(tail -1 "$work/time.txt" 2>/dev/null || echo 0)
    group="-"
    if [ -n "$cg" ]; then
        group=$(awk -v a="$anon" '{ printf "%5.0f MiB, anonymous %4.0f MiB",
                                    $1 / 1048576, a / 1048576 }' "$cg/memory.max_usage_in_bytes")
        ooms=$(awk '/^oom_kill / { print $2 }' "$cg/memory.oom_control")
        [ "${ooms:-0}" = 0 ] || group="$group, $ooms OOM kills"
        rmdir "$cg"
    fi
    printf '%-36s %6.1f s  peak RSS %5.0f MiB  cgroup peak %s' "$label" \
        "$(echo "$start $end" | awk '{ print $2 - $1 }')" \
        "$(echo "$rss_kib" | awk '{ print $1 / 1024 }')" "$group"
    if [ "$status" != 0 ]; then
        printf '  FAILED (exit %s): %s' "$status" "$(tail -2 "$work/stderr.txt" | tr '\n' ' ')"
    fi
    echo
}

if [ ! -e "$work/big.gguf" ]; then
    python3 tests/bench/make_big_model.py "$work/big.gguf" --layers "$BIG_LAYERS" \
        --type "$BIG_TYPE" >/dev/null
fi
model="$work/big.gguf"
size=$(stat -c %s "$model")
echo "model: $(awk -v s="$size" 'BEGIN { printf "%.1f GB", s / 1e9 }') sparse $BIG_TYPE" \
     "($(awk -v b="$(stat -c %b "$model")" 'BEGIN { printf "%.1f GB", b * 512 / 1e9 }') on disk)," \
     "$(awk '/MemTotal/ { printf "%.0f GiB", $2 / 1048576 }' /proc/meminfo) RAM," \
     "limit $BIG_LIMIT ($limiter), $(nproc) threads"
# A prose text of a few thousand bytes (the vocabulary is the bytes): this folder's docs.
cat docs/*.md >"$work/text.txt"

limit=$BIG_LIMIT
q="$BUILD/bin/gguf-quantize"
q8="$work/out-q8_0.gguf"
limited "gguf-inspect MODEL" "$BUILD/bin/gguf-inspect" "$model"
limited "gguf-inspect --hash MODEL" "$BUILD/bin/gguf-inspect" --hash "$model"
limited "gguf-inspect --check MODEL" "$BUILD/bin/gguf-inspect" --check "$model"
limited "gguf-quantize --pure MODEL q8_0" "$q" -q --pure "$model" "$q8" q8_0
limited "gguf-quantize MODEL Q4_K_M" "$q" -q "$model" "$work/out-q4_k_m.gguf" q4_k_m
for f in "$work"/out-*.gguf; do
    [ -e "$f" ] || continue
    echo "  $(basename "$f"): $(stat -c %s "$f" | awk '{ printf "%.2f GB", $1 / 1e9 }')"
done
rm -f "$work/out-q4_k_m.gguf"
limited "gguf-inspect --check Q8_0" "$BUILD/bin/gguf-inspect" --check "$q8"
limited "gguf-edit Q8_0 --name" "$BUILD/bin/gguf-edit" "$q8" "$work/out-edited.gguf" --name edited
rm -f "$work/out-edited.gguf"
# Splitting writes the model's 30 GB in full (the parts are not sparse); the merge runs on the
# Q8_0 file's parts, so that the disk never holds more than about 30 GB of outputs.
limited "gguf-split --split-max-size 4G MODEL" "$BUILD/bin/gguf-split" --split \
    --split-max-size 4G "$model" "$work/part"
echo "  $(ls "$work"/part-*.gguf 2>/dev/null | wc -l) parts"
rm -f "$work"/part-*
if [ -e "$q8" ]; then
    "$BUILD/bin/gguf-split" --split --split-max-size 2G "$q8" "$work/part" >/dev/null
    n_parts=$(ls "$work"/part-*.gguf | wc -l)
    limited "gguf-split --merge (Q8_0, $n_parts parts)" "$BUILD/bin/gguf-split" --merge \
        "$work/part-00001-of-"*.gguf "$work/out-merged.gguf"
    # The merged file keeps split.count = 0 (as llama-gguf-split writes it): compare the data.
    data_hashes() { "$BUILD/bin/gguf-inspect" --hash "$1" | grep -v '^key ' | md5sum; }
    if [ "$(data_hashes "$q8")" = "$(data_hashes "$work/out-merged.gguf")" ]; then
        echo "  merged tensor data == the Q8_0 file's"
    else
        echo "  merged tensor data DIFFERS from the Q8_0 file's"
    fi
fi
rm -f "$work"/part-* "$work"/out-*
for limit in "$BIG_LIMIT" 1G; do
    limited "gguf-eval -c 64 --chunks 1 (limit $limit)" "$BUILD/bin/gguf-eval" -m "$model" \
        -f "$work/text.txt" -c 64 -b 64 --chunks 1
    echo "  $(grep 'Final estimate' "$work/stdout.txt")"
done
