# Trace and validate launch files on the device machine (run from the repo root there):
#   bash tools/trace/device_trace.sh LAUNCH.toml ...
# Writes under $OUT: log.txt, traces.tar.gz (NAME.wvtrace + NAME.json per launch) and, on
# the first call, pycuda-built-cp312.tar.gz (see tools/gpu/device_setup.sh).
set -u
OUT=${OUT:-/tmp/wv-out}; mkdir -p "$OUT"
exec > >(tee -a "$OUT/log.txt") 2>&1
source tools/gpu/device_setup.sh
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader
W=/tmp/wv-traces; mkdir -p "$W"
for f in "$@"; do
  n=$(basename "$f" .launch.toml)
  t0=$(date +%s)
  timeout 120 python3 -m viz.cli trace "$f" --validate --json --out "$W/$n.wvtrace" > "$W/$n.json" 2> "$W/$n.err"
  rc=$?
  python3 - "$W/$n.json" "$n" "$rc" "$(( $(date +%s) - t0 ))" <<'PY'
import json, sys
path, name, rc, secs = sys.argv[1:]
try:
    d = json.load(open(path))
except Exception:
    print(f"{name}: rc={rc} ({secs} s) no JSON:", open(path.replace('.json', '.err')).read()[-600:]); sys.exit()
v = d.get("validation", {})
bad = [r for r in v.get("rows", []) if not r["match"]]
print(f"{name}: rc={rc} ({secs} s) records={d['trace']['records']} complete={d['trace']['complete']} "
      f"match={v.get('match')} other={d.get('other_metrics')}")
g = v.get("sass_guard") or {}
if g.get("problems"): print("    SASS guard:", g["problems"])
if g.get("note"): print("    note:", g["note"][:90])
for r in bad:
    print(f"    {r['metric']}: trace {r['model']} ncu {r['hardware']}")
for r in v.get("other", []):
    print(f"    other {r['metric']}: trace {r['model']} ncu {r['hardware']} {'ok' if r['match'] else 'DIFFERS'}")
m = v.get("sass_map") or (d.get("trace") or {}).get("sass_map")
if m:
    print(f"    SASS ({m.get('tool')}): fused {len(m.get('fused', []))} group(s), removed {len(m.get('removed', []))}, "
          f"not certain {m.get('uncertain')}")
    for a in d.get("accesses", []):
        s = a.get("sass") or {}
        if s.get("state") not in (None, "same", "member") or not s.get("certain", True):
            print(f"      instruction {a['index'] + 1}: {s.get('state')}: {s.get('note', '')[:160]}")
    for n in m.get("notes") or []:
        print(f"      {n[:200]}")
PY
done
tar czf "$OUT/traces.tar.gz" -C "$W" .
ls -la "$OUT"
