#!/usr/bin/env bash
# validate_cli.sh — solbench validate end to end on a small model: the
# comparison printed and written as JSON (every phase with a prediction and
# a measurement), the serving run's trace read back by trace show, the run
# stored and its llm.decode result in the history; llm.prefill and
# llm.decode as benchmarks; and bad input, each exiting 2 with one line
# that names it (a training job, several chips, a model too large for
# memory, an unknown dtype, too few requests, a head count that does not
# divide, shared experts, a top-k above the experts).
# Usage: validate_cli.sh SOLBENCH
set -u
SB=${1:?usage: $0 SOLBENCH}
. "$(dirname "$0")/expect.sh"

# a small model: 2 layers, d 256, MoE in layer 1
cat >"$T/tiny.json" <<'J'
{"name": "tiny", "model": {"layers": 2, "d_model": 256, "q_heads": 4, "kv_heads": 2,
  "head_dim": 64, "ffn": 512, "gated_mlp": true, "vocab": 4096,
  "moe": {"experts": 4, "top_k": 2, "expert_ffn": 256, "first_layer": 1, "every": 1}},
 "dtypes": {"weights": "fp32", "activations": "fp32", "kv_cache": "fp32"},
 "job": {"type": "inference", "prompt_len": 32, "output_len": 8, "concurrency": 2, "kv_page": 16},
 "parallelism": {"data": 1, "tensor": 1}, "topology": {"chips": 1}}
J

expect 0 'TPOT' -- "$SB" validate "$T/tiny.json" --quick --db "$T/db" \
    --json "$T/v.json" --trace "$T/tr.json" --threads 2
grep -q 'stored as run' "$T/out" && ok "run stored" || bad "no stored run"
grep -qE 'router +[0-9.]+ .s' "$T/out" && ok "the router phase compared" ||
    bad "no router row"
python3 - "$T/v.json" <<'P' && ok "validate JSON" || bad "validate JSON"
import json, sys
d = json.load(open(sys.argv[1]))
assert d["schema"] == "solbench.validate/1" and d["batch"] == 2
for st in ("prefill", "decode"):
    s = d[st]
    assert s["measured_s"] > 0 and s["sol_s"] > 0 and s["calibrated_s"] >= s["sol_s"] * 0.999, s
    assert abs(s["ratio"] - s["measured_s"] / s["calibrated_s"]) < 1e-9
    names = {p["phase"] for p in s["phases"]}
    assert {"qkv projection", "attention core", "mlp", "router", "experts", "lm head"} <= names, names
    for p in s["phases"]:
        assert p["measured_s"] > 0 and p["calibrated_s"] > 0, p
assert [l["load"] for l in d["serve"]] == ["light"]  # --quick: the light load
sv, pv = d["serve"][0]["measured"], d["serve"][0]["predicted"]
assert sv["tokens_per_s"] > 0 and sv["tpot_p50_s"] <= sv["tpot_p99_s"]
for k in ("tokens_per_s", "ttft_p50_s", "ttft_p90_s", "tpot_p50_s", "tpot_p99_s", "latency_p50_s"):
    assert pv[k] > 0 and sv[k] > 0, k
assert d["reference"]["decode_stream_of_read"] > 0
P
# the loads served twice among the points' rounds: each time after a
# round of them, in order, the figures the medians
expect 0 'each load served 2 times, after rounds' -- "$SB" validate "$T/tiny.json" \
    --quick --serves 2 --no-store --json "$T/v2.json" --threads 2
python3 - "$T/v2.json" <<'P' && ok "validate: loads among the rounds" || bad "validate: loads among the rounds"
import json, sys
d = json.load(open(sys.argv[1]))
r = d["serve_rounds"]
assert len(r["after"]) == 2 and 1 <= r["after"][0] < r["after"][1] <= r["of"], r
l = d["serve"][0]
s = l["servings"]
assert s["n"] == 2 and isinstance(s["stable"], bool), s
# the figures are the servings' medians: within their range
assert s["tokens_per_s"][0] <= l["measured"]["tokens_per_s"] <= s["tokens_per_s"][1], (s, l)
assert s["tpot_p50_s"][0] <= l["measured"]["tpot_p50_s"] <= s["tpot_p50_s"][1], (s, l)
P
grep -qE 'its 2 servings: [0-9.]+-[0-9.]+ output tokens/s' "$T/out" &&
    ok "validate: the servings' range said" || bad "validate: no servings' range"
# one output token a request: no gap between tokens, so no TPOT is
# compared (it was printed as 0 against 0, "0.00x (off)")
expect 0 'TPOT p50 +- +- +- +\(none: one output token a request' -- \
    "$SB" validate "$T/tiny.json" --quick --output 1 --no-store \
    --json "$T/v1.json" --threads 2
python3 - "$T/v1.json" <<'P' && ok "validate: one output token, TPOT null" || bad "validate: one output token"
import json, sys
l = json.load(open(sys.argv[1]))["serve"][0]
for side in ("measured", "predicted"):
    assert l[side]["tpot_p50_s"] is None and l[side]["tpot_p99_s"] is None, l
    assert l[side]["ttft_p50_s"] > 0 and l[side]["tokens_per_s"] > 0, l
P
expect 2 'serves' -- "$SB" validate "$T/tiny.json" --serves 0 --no-store
expect 2 'serves' -- "$SB" validate "$T/tiny.json" --serves 6 --no-store
expect 0 'steps' -- "$SB" trace show "$T/tr.json" --db "$T/db" --run last
grep -q 'aten::mm' "$T/out" && ok "trace: matmuls read back" ||
    bad "trace: no aten::mm rows"
expect 0 'llm.decode' -- "$SB" history --verbose --db "$T/db"

# the benchmarks alone
expect 0 'llm.decode' -- "$SB" run --bench llm.prefill,llm.decode \
    -p layers=2 -p d_model=256 -p q_heads=4 -p kv_heads=2 -p ffn=512 \
    -p vocab=4096 -p experts=4 -p expert_ffn=256 -p moe_first_layer=1 \
    -p batch=2 -p prompt=16 -p context=24 -p ragged=1 \
    --repeat 2 --min-time 0 --no-store
grep -q 'double-precision model' "$T/out" && ok "verified against double" ||
    bad "no verification note"

# bad input
sed 's/"inference", "prompt_len": 32, "output_len": 8, "concurrency": 2, "kv_page": 16/"training", "global_batch": 4, "seq_len": 64/' \
    "$T/tiny.json" >"$T/train.json"
expect 2 'job.type' -- "$SB" validate "$T/train.json" --no-store
sed 's/"tensor": 1}, "topology": {"chips": 1}/"tensor": 2}, "topology": {"chips": 2}/' \
    "$T/tiny.json" >"$T/tp.json"
expect 2 'one chip' -- "$SB" validate "$T/tp.json" --no-store
sed 's/"vocab": 4096/"vocab": 1000000/; s/"d_model": 256/"d_model": 65536/' \
    "$T/tiny.json" >"$T/huge.json"
expect 2 'needs [0-9.]+ ?[GT]i?B of memory, more than 80% of the' -- "$SB" validate "$T/huge.json" --no-store
sed 's/"kv_heads": 2/"kv_heads": 3/' "$T/tiny.json" >"$T/heads.json"
expect 2 'kv_heads' -- "$SB" validate "$T/heads.json" --no-store
expect 2 'dtype fp16' -- "$SB" validate "$T/tiny.json" --dtype fp16 --no-store
expect 2 'requests 1' -- "$SB" validate "$T/tiny.json" --requests 1 --no-store
expect 2 'unknown option' -- "$SB" validate --bogus
expect 2 'kv_heads = 5' -- "$SB" run --bench llm.decode -p kv_heads=5 --no-store
expect 2 'top_k' -- "$SB" run --bench llm.decode -p experts=4 -p top_k=5 --no-store
sed 's/"every": 1}/"every": 1, "shared_experts": 1}/' "$T/tiny.json" >"$T/shared.json"
expect 2 'shared experts' -- "$SB" validate "$T/shared.json" --no-store

exit $fail
