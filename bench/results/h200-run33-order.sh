#!/bin/sh
# Experiment: does the order of the two sides of a pinned cell move its ratio?
cd "$(dirname "$0")/.." || exit 1
export CUDA_HOME=/usr/local/cuda LD_LIBRARY_PATH=/usr/local/cuda/lib64
make -C libaccel clean >/dev/null 2>&1
make -C libaccel all -j16 CUDA_HOME=$CUDA_HOME >$OUT/build.txt 2>&1 || { tail -20 $OUT/build.txt; exit 1; }
make -C bench clean all CUDA_HOME=$CUDA_HOME >>$OUT/build.txt 2>&1 || { tail -20 $OUT/build.txt; exit 1; }
export ACCEL_TRANSPORT=inproc ACCEL_BACKEND=cuda
for pass in 1 2; do
	for o in lib raw abba; do
		echo "=== pass $pass BENCH_ORDER=$o $(date -u +%T)"
		env BENCH_ORDER=$o BENCH_PINNED_ONLY=1 BENCH_REPS=3 BENCH_BYTES=536870912 \
			./bench/bandwidth --csv $OUT/order-$o-$pass.csv > $OUT/order-$o-$pass.txt 2>&1
		echo "exit $?"
	done
done
nvidia-smi -q -d CLOCK,PERFORMANCE > $OUT/clocks.txt 2>&1
