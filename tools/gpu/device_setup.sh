# Source this FIRST in every command on the device machine (from the repo root):
#   source tools/gpu/device_setup.sh
# It installs the carried wheels (.gpu-wheels/, made here by tools/gpu/fetch_wheels.sh)
# into /tmp/wv-site, and PyCUDA: from a tarball built on an earlier call
# (.gpu-wheels/pycuda-built-*.tar.gz) when there is one, else built from the sdist
# (about 2 minutes) and packed into $OUT/pycuda-built-cp312.tar.gz to carry next time.
# Then the repo is importable (PYTHONPATH) and `wv` runs the warpviz CLI.
export WV_SITE=/tmp/wv-site
export PYTHONUNBUFFERED=1
export WARPVIZ_CACHE=/tmp/wv-cache
export CUDA_ROOT=${CUDA_ROOT:-/usr/local/cuda}
export PATH="$CUDA_ROOT/bin:$PATH"
mkdir -p "$WV_SITE" "$WARPVIZ_CACHE"
python3 -m pip install -q --no-index --no-deps --no-compile --no-cache-dir --upgrade --target "$WV_SITE" \
  .gpu-wheels/*.whl 2>&1 | grep -v "^$" | tail -3
if ls .gpu-wheels/pycuda-built-*.tar.gz >/dev/null 2>&1; then
  tar xzf .gpu-wheels/pycuda-built-*.tar.gz -C "$WV_SITE"
  echo "device_setup: PyCUDA from the carried build"
else
  echo "device_setup: building PyCUDA from the sdist ..."
  t0=$(date +%s)
  python3 -m pip install -q --no-build-isolation --no-index --no-deps --no-cache-dir --target /tmp/wv-pycuda \
    .gpu-wheels/pycuda-*.tar.gz > /tmp/wv-pycuda-build.log 2>&1 || { tail -40 /tmp/wv-pycuda-build.log; }
  (cd /tmp/wv-pycuda && tar czf "${OUT:-/tmp}/pycuda-built-cp312.tar.gz" pycuda pycuda-*.dist-info 2>/dev/null)
  cp -r /tmp/wv-pycuda/* "$WV_SITE"/
  echo "device_setup: PyCUDA built in $(( $(date +%s) - t0 )) s"
fi
export PYTHONPATH="$PWD:$WV_SITE${PYTHONPATH:+:$PYTHONPATH}"
wv() { python3 -m viz.cli "$@"; }
python3 -c "import pycuda.driver as c; c.init(); print('device_setup: PyCUDA', c.get_version(), 'driver', c.get_driver_version(), c.Device(0).name())" || echo "device_setup: PyCUDA does not work"
which ncu cuobjdump nvcc | tr '\n' ' '; echo
