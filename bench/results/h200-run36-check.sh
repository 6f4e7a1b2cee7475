#!/bin/sh
# One quick pass over the rows the last changes aim at (not a recorded run).
cd "$(dirname "$0")/.." || exit 1
export CUDA_HOME=/usr/local/cuda LD_LIBRARY_PATH=/usr/local/cuda/lib64
make -C libaccel clean >/dev/null 2>&1
make -C libaccel all -j16 CUDA_HOME=$CUDA_HOME >$OUT/build.txt 2>&1 || { tail -20 $OUT/build.txt; exit 1; }
make -C bench clean all CUDA_HOME=$CUDA_HOME >>$OUT/build.txt 2>&1 || { tail -20 $OUT/build.txt; exit 1; }
gcc -O2 -Ilibaccel/include -I$CUDA_HOME/include -o bench/exp-d2d bench/exp-d2d.c -Llibaccel -laccel -Wl,-rpath,$PWD/libaccel -L$CUDA_HOME/lib64 -lcudart || exit 1
export ACCEL_TRANSPORT=inproc ACCEL_BACKEND=cuda
echo "=== latency"; ./bench/latency --csv $OUT/latency.csv 2>&1
echo "=== latency --trace"; ./bench/latency --trace 2>&1
for sz in 16777216:32 1048576:32 268435456:2; do
	echo "=== d2d $sz"; ./bench/exp-d2d ${sz%:*} ${sz#*:} 2>&1
	ACCEL_TRACE=1 ./bench/exp-d2d ${sz%:*} ${sz#*:} 2>&1 | grep -E 'calls per|passes'
done
echo "=== bandwidth pinned"; BENCH_PINNED_ONLY=1 ./bench/bandwidth --csv $OUT/bw.csv 2>&1
echo "=== latency"; ./bench/latency 2>&1
