#!/bin/sh
# Everything a machine with a GPU runs to verify the cuda plugin, in one command:
# the ctest label gpu (tests/gpu/CMakeLists.txt: every GPU kernel against
# cpu-blas's, the engine on GPU streams, GPU errors, mxk train --ctx gpu:0, the
# conformance network cases on gpu(0)) and the GPU benchmarks (bench/bench_gpu.sh).
# Logs go to BUILD_DIR/gpu-results/ (ctest.log, the tests' own logs under
# Testing/Temporary, one .log and .json per benchmark); the last lines printed are
# ONE summary: device, tests passed/failed/skipped (with the failed and skipped
# names), each benchmark's figures. Needs only the build tree (no network, no
# package manager). Exits 1 when a test failed, else 0.
# usage: tests/gpu/run-all.sh BUILD_DIR [CTEST_ARGS...]   (e.g. -R gpu.ops, -j2)
set -u
build=$(cd "${1:?usage: run-all.sh BUILD_DIR [CTEST_ARGS...]}" && pwd) || exit 2
shift
here=$(cd "$(dirname "$0")" && pwd)
out=$build/gpu-results
rm -rf "$out" && mkdir -p "$out" || exit 1

ctest --test-dir "$build" -L '^gpu$' --output-on-failure "$@" >"$out/ctest.log" 2>&1
ctest_rc=$?
sh "$here/../../bench/bench_gpu.sh" "$build" "$out" >"$out/bench.log" 2>&1

device=$(nvidia-smi --query-gpu=name,driver_version,memory.total --format=csv,noheader 2>/dev/null |
    head -1)
if [ -z "$device" ]; then
    device=$(sed -n 's/.*"device": "\([^"]*\)".*/\1/p' "$out"/*.json 2>/dev/null | head -1)
fi
total=$(sed -n 's/.* tests failed out of \([0-9]*\).*/\1/p' "$out/ctest.log" | tail -1)
failed=$(sed -n 's/.*, \([0-9]*\) tests failed out of.*/\1/p' "$out/ctest.log" | tail -1)
skipped=$(grep -c '(Skipped)' "$out/ctest.log")
total=${total:-0} failed=${failed:-0}
passed=$((total - failed - skipped))

echo "==================== mxk GPU summary ===================="
echo "device:   ${device:-none visible}"
echo "tests:    $passed passed, $failed failed, $skipped skipped (of $total; ctest -L gpu, exit $ctest_rc)"
grep -E '^[[:space:]]+[0-9]+ - .*\((Failed|Timeout|SEGFAULT|Subprocess aborted|Not Run|Exception)' \
    "$out/ctest.log" | sed 's/^[[:space:]]*/  failed:  /'
grep '(Skipped)' "$out/ctest.log" | sed 's/^[[:space:]]*/  skipped: /'
grep -h '^coverage:' "$build"/Testing/Temporary/LastTest.log 2>/dev/null | head -1 | sed 's/^/  /'
echo "benchmarks:"
for f in lenet resnet20 resnet50 cudnn_limit gpu_overhead gpu_copy; do
    [ -r "$out/$f.json" ] && echo "  $f: $(cat "$out/$f.json")"
done
echo "logs:     $out"
[ "$failed" = 0 ] && [ "$ctest_rc" = 0 ]
