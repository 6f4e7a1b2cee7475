#!/bin/sh
# Run 40 (2026-12-02): a waiter asking the stream (cudaStreamQuery,
# ACCEL_CUDA_QUERY_US, default 20) against recording a marker (=0), three
# rounds taking turns, raw CUDA in every round; the traces of the default
# and of ACCEL_CUDA_NO_MERGE=1 (the batch row with coalescing off); the
# issuer kept hot longer between bursts; the cuda tests on the GPU.
cd "$(dirname "$0")/../.." || exit 1
CUDA_HOME=${CUDA_HOME:-/usr/local/cuda}
export LD_LIBRARY_PATH=$CUDA_HOME/lib64${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}
make -C libaccel clean > /dev/null 2>&1
make -C libaccel all build-tests -j"$(nproc)" CUDA_HOME="$CUDA_HOME" > build.log 2>&1 ||
	{ tail -20 build.log; exit 1; }
make -C bench clean all CUDA_HOME="$CUDA_HOME" >> build.log 2>&1 ||
	{ tail -20 build.log; exit 1; }
export ACCEL_TRANSPORT=inproc ACCEL_BACKEND=cuda
nvidia-smi -L
echo "=== cuda tests on the GPU"
VERBOSE=0 TEST_TIMEOUT=120 ./libaccel/test/runtests.sh libaccel/build/test \
	cuda cuda_pipeline memcpy stream event threads 2>&1 | tail -8
for i in 1 2 3; do
	echo "=== round $i: default (ACCEL_CUDA_QUERY_US=20)"
	BENCH_ITERS=2000 ./bench/latency
	echo "=== round $i: ACCEL_CUDA_QUERY_US=0 (a marker)"
	ACCEL_CUDA_QUERY_US=0 BENCH_ITERS=2000 ./bench/latency
	echo "=== round $i: ACCEL_CUDA_ISSUE_SPIN_US=50"
	ACCEL_CUDA_ISSUE_SPIN_US=50 BENCH_ITERS=2000 ./bench/latency
done
echo "=== trace, default"
BENCH_ITERS=2000 ./bench/latency --trace
echo "=== trace, ACCEL_CUDA_NO_MERGE=1"
ACCEL_CUDA_NO_MERGE=1 BENCH_ITERS=2000 ./bench/latency --trace
echo "=== trace, ACCEL_CUDA_QUERY_US=0"
ACCEL_CUDA_QUERY_US=0 BENCH_ITERS=2000 ./bench/latency --trace
