#!/bin/sh
# The latency-throughput knee of a serving deployment: `llmsim serve` at
# a list of Poisson arrival rates, one CSV row per rate.
#   plots/serve-knee.sh OUT.csv RATES -- SERVE-ARGS...
# e.g. plots/serve-knee.sh knee.csv "1 2 4 8" -- --model llama-2-70b \
#        --cluster dgx-h100 --tp 4 --prompt-len 1000 --output-len 200
# Columns: rate_per_s (offered), requests_per_s and output_tokens_per_s
# (achieved), ttft_p50_s, ttft_p99_s, tpot_p50_s, tpot_p99_s,
# goodput_requests_per_s.  A failed point stops the sweep (exit 1) and
# leaves no CSV behind.
L=${LLMSIM:-./llmsim}
out=$1 rates=$2
[ -n "$out" ] && [ -n "$rates" ] && [ "$3" = "--" ] || {
    echo "usage: plots/serve-knee.sh OUT.csv \"RATE ...\" -- SERVE-ARGS..." >&2
    exit 1
}
shift 3
tmp=$(mktemp "$out.tmp.XXXXXX") || exit 1
trap 'rm -f "$tmp"' EXIT
# a value from llmsim's indented JSON: top-level key, or key.sub
get() {
    awk -v k="\"$1\":" -v s="\"$2\":" '
        $1 == k && s == "\"\":" { sub(/,$/, "", $2); print $2; exit }
        $1 == k { f = 1; next }
        f && $1 == s { sub(/,$/, "", $2); print $2; exit }' "$3"
}
echo "rate_per_s,requests_per_s,output_tokens_per_s,ttft_p50_s,ttft_p99_s,tpot_p50_s,tpot_p99_s,goodput_requests_per_s" >"$tmp"
j=$(mktemp) || exit 1
for r in $rates; do
    if ! $L serve "$@" --rate "$r" --json >"$j"; then
        rm -f "$j"
        echo "serve-knee: llmsim serve failed at rate $r" >&2
        exit 1
    fi
    echo "$r,$(get throughput_requests_per_s '' "$j"),$(get throughput_tokens_per_s '' "$j"),$(get ttft_s p50 "$j"),$(get ttft_s p99 "$j"),$(get tpot_s p50 "$j"),$(get tpot_s p99 "$j"),$(get goodput_requests_per_s '' "$j")" >>"$tmp"
done
rm -f "$j"
chmod 644 "$tmp"
mv "$tmp" "$out"
trap - EXIT
