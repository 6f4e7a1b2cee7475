#!/bin/sh
cd "$(dirname "$0")/.." || exit 1
export CUDA_HOME=/usr/local/cuda LD_LIBRARY_PATH=/usr/local/cuda/lib64
make -C libaccel clean >/dev/null 2>&1
make -C libaccel all -j16 CUDA_HOME=$CUDA_HOME >$OUT/build.txt 2>&1 || { tail -20 $OUT/build.txt; exit 1; }
gcc -O2 -Ilibaccel/include -I$CUDA_HOME/include -o bench/exp-d2d bench/exp-d2d.c -Llibaccel -laccel -Wl,-rpath,$PWD/libaccel -L$CUDA_HOME/lib64 -lcudart || exit 1
export ACCEL_TRANSPORT=inproc ACCEL_BACKEND=cuda
for pass in 1 2; do
for v in "" ACCEL_CUDA_BATCH_MAX=1073741824 "ACCEL_CUDA_BATCH_MAX=1073741824 ACCEL_CUDA_ISSUER=0" ACCEL_CUDA_NO_BATCH=1; do
	for sz in 16777216:32 67108864:8 1048576:32 268435456:2; do
		echo "=== pass $pass [$v] size $sz"
		env $v ./bench/exp-d2d ${sz%:*} ${sz#*:} 2>&1
	done
done
done
env ACCEL_CUDA_BATCH_MAX=1073741824 ACCEL_TRACE=1 ./bench/exp-d2d 16777216 32 2>&1
