# Shared by the device-call scripts of tools/gpu (heldout.sh, ncu_breakdown.sh,
# full_size_traces.sh): source it, then `steps_begin NAME` makes $W = $OUT/NAME, sends everything
# printed to $W/log.txt as well, and packs $W into $OUT/NAME.tgz however the script ends (the
# machine returns at most 8 files). `step LIMIT CMD ...` runs CMD under `timeout LIMIT`,
# saying when it started (seconds since steps_begin), its exit status and how long it took,
# and returns CMD's status: a step that fails or hangs costs only its own results. Those
# lines go to the log (fd 3) whatever the step's own output is redirected to, so
# `step 60 cmd > result.json` leaves result.json to cmd.
steps_begin() {
  OUT=${OUT:-/tmp/wv-out}; mkdir -p "$OUT"
  STEPS_NAME=$1
  W="$OUT/$1"; mkdir -p "$W"
  exec > >(tee -a "$W/log.txt") 2>&1
  exec 3>&1
  T0=$(date +%s)
  trap steps_pack EXIT
}
elapsed() { echo $(( $(date +%s) - T0 )); }
steps_pack() { tar czf "$OUT/$STEPS_NAME.tgz" -C "$OUT" "$STEPS_NAME" 2>/dev/null; ls -la "$OUT"; }
step() {
  local limit=$1; shift
  echo "=== [$(elapsed) s] $* (limit ${limit}s)" >&3
  local t0; t0=$(date +%s)
  timeout "$limit" "$@"; local rc=$?
  echo "=== rc=$rc in $(( $(date +%s) - t0 )) s" >&3
  return $rc
}
