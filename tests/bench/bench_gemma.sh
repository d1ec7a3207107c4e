#!/bin/sh
# bench_gemma.sh - gguf-eval against llama.cpp's llama-perplexity on Gemma 3 270M (Q4_K_M, the
# model `make models` fetches): tokens/s of the whole process (load, tokenize, evaluate), peak
# memory (max RSS) and the PPL each prints, on every license text of /usr/share/common-licenses
# (sorted, symbolic links skipped: about 51k Gemma tokens). llama-perplexity runs with its
# defaults (flash attention on) and, for the PPL only, with -fa off, which is the attention our
# engine computes. Runs alternate (ours, theirs) and the faster of each pair is kept.
# Environment: BUILD, REF_BIN (see run.sh), GEMMA_MODEL (default models/gemma-3-270m-q4_k_m.gguf),
# BENCH_CHUNKS (default 8), THREADS (default: all cores), BENCH_REPEAT (default 2).
set -eu
: "${BUILD:=build}"
: "${GEMMA_MODEL:=models/gemma-3-270m-q4_k_m.gguf}"
: "${REF_BIN:=}"
: "${BENCH_CHUNKS:=8}"
: "${BENCH_REPEAT:=2}"
THREADS="${THREADS:-$(nproc)}"
if [ ! -e "$GEMMA_MODEL" ]; then
    echo "bench_gemma: $GEMMA_MODEL is missing (make models): skipped"
    exit 0
fi
WORK="$BUILD/bench-gemma"
mkdir -p "$WORK"
TEXT="$WORK/licenses-all.txt"
trap 'rm -f "$TEXT"' EXIT
find /usr/share/common-licenses -type f | LC_ALL=C sort | xargs cat > "$TEXT"

# shellcheck source-path=SCRIPTDIR source=timing.sh
. "$(dirname "$0")/timing.sh"
ppl() { sed -n 's/.*Final estimate: PPL = \([0-9.]*\).*/\1/p' "$1"; }

common="-m $GEMMA_MODEL -f $TEXT -c 512 -b 512 -t $THREADS --chunks $BENCH_CHUNKS"
echo "Gemma 3 270M Q4_K_M, $BENCH_CHUNKS chunks of 512 tokens (/usr/share/common-licenses), batch 512, $THREADS threads"
probe_ref_flags "$WORK/probe.log" $common --chunks 1
best_ours=""; best_ref=""; rss_ours=0; rss_ref=0
i=0
while [ $i -lt "$BENCH_REPEAT" ]; do
    set -- $(measure "$WORK/ours.log" "$BUILD/bin/gguf-eval" $common)
    [ "$3" = 0 ] || { echo "gguf-eval failed:"; cat "$WORK/ours.log"; exit 1; }
    best_ours=$(min_seconds "$best_ours" "$1"); rss_ours=$2
    if [ -n "$REF_BIN" ]; then
        set -- $(measure "$WORK/ref.log" "$REF_BIN/llama-perplexity" $ref_flags $common)
        [ "$3" = 0 ] || { echo "llama-perplexity failed:"; tail -5 "$WORK/ref.log"; exit 1; }
        best_ref=$(min_seconds "$best_ref" "$1"); rss_ref=$2
    fi
    i=$((i + 1))
done
ref_ppl_nofa=""
if [ -n "$REF_BIN" ]; then
    measure "$WORK/ref-nofa.log" "$REF_BIN/llama-perplexity" $ref_flags $common -fa off >/dev/null
    ref_ppl_nofa=$(ppl "$WORK/ref-nofa.log")
fi
python3 - "$((BENCH_CHUNKS * 512))" "$best_ours" "$rss_ours" "${best_ref:-0}" "$rss_ref" \
    "$(ppl "$WORK/ours.log")" "$(ppl "$WORK/ref.log" 2>/dev/null || true)" "$ref_ppl_nofa" <<'PY'
import sys
tokens, t_ours, rss_ours, t_ref, rss_ref = int(sys.argv[1]), float(sys.argv[2]), int(sys.argv[3]), float(sys.argv[4]), int(sys.argv[5])
p_ours, p_ref, p_nofa = (float(x) if x else None for x in sys.argv[6:9])
print(f"{'':8s} {'t/s':>9s} {'MiB':>8s} {'PPL':>10s}")
print(f"{'ours':8s} {tokens / t_ours:9.1f} {rss_ours / 1024:8.1f} {p_ours:10.4f}")
if t_ref:
    print(f"{'llama':8s} {tokens / t_ref:9.1f} {rss_ref / 1024:8.1f} {p_ref:10.4f}   (-fa off: PPL {p_nofa:.4f})")
    print(f"ratio {t_ref / t_ours:.2f}x tokens/s, memory {rss_ours / rss_ref:.2f}x; PPL "
          f"{100 * (p_ours / p_ref - 1):+.3f}% vs llama.cpp's default, {100 * (p_ours / p_nofa - 1):+.3f}% vs -fa off")
print("(goal: ours >= 1.5x llama.cpp's tokens/s with no more memory, issue #10)")
PY
