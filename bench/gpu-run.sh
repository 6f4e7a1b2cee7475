#!/bin/sh
# SPDX-License-Identifier: MIT
# The GPU run, in one go: build libaccel, its tests, the examples and the
# benchmarks with the CUDA toolkit found here, then run the libaccel suite
# and the examples with ACCEL_BACKEND=cuda over the inproc transport, make
# run with a 1 GiB file in the page cache, then both benchmarks.
# Everything goes to $OUT/gpu-run.txt (OUT defaults to
# ./gpu-out), the benchmark rows also to $OUT/latency.csv and
# $OUT/bandwidth.csv, and the bandwidth plot to $OUT/bandwidth.png when
# gnuplot is there. Needs only gcc, make, the CUDA driver and the toolkit.
#
#   sh bench/gpu-run.sh            from the repository root
#   BENCH_MAX=268435456 sh ...     smaller bandwidth sizes (bytes)
#
# Exit status: 0 when the build, the suite and the examples passed.

cd "$(dirname "$0")/.." || exit 1
OUT=${OUT:-./gpu-out}
mkdir -p "$OUT"
LOG=$OUT/gpu-run.txt
: > "$LOG"
status=0

log() { echo "$@" | tee -a "$LOG"; }
# run TITLE TIMEOUT CMD...: run, log its output and exit status.
run() {
	title=$1 limit=$2
	shift 2
	log ""
	log "=== $title ($(date -u +%H:%M:%S))"
	log "\$ $*"
	timeout "$limit" "$@" >> "$LOG" 2>&1
	rc=$?
	log "=== $title: exit $rc"
	return $rc
}

# The toolkit: CUDA_HOME, else nvcc on PATH, else /usr/local/cuda.
if [ -z "$CUDA_HOME" ]; then
	if command -v nvcc > /dev/null 2>&1; then
		CUDA_HOME=$(dirname "$(dirname "$(command -v nvcc)")")
	else
		CUDA_HOME=/usr/local/cuda
	fi
fi
export CUDA_HOME
CUDA_LIB=$CUDA_HOME/lib64
[ -d "$CUDA_LIB" ] || CUDA_LIB=$CUDA_HOME/lib
export LD_LIBRARY_PATH=$CUDA_LIB${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}
JOBS=$(nproc 2>/dev/null || echo 4)

log "accelstream GPU run, $(date -u)"
log "repository: $(git rev-parse --short HEAD 2>/dev/null || echo unknown)"
log "CUDA_HOME=$CUDA_HOME"
log "kernel: $(uname -r), gcc: $(gcc -dumpfullversion 2>/dev/null || gcc -dumpversion)"
[ -f "$CUDA_HOME/include/cuda_runtime_api.h" ] ||
	log "WARNING: no $CUDA_HOME/include/cuda_runtime_api.h: libaccel builds without CUDA"
run "nvidia-smi" 60 nvidia-smi
run "nvcc --version" 30 "$CUDA_HOME/bin/nvcc" --version

# Build: a clean tree, so that the CUDA detection sees this machine.
make -C libaccel clean > /dev/null 2>&1
run "build libaccel" 300 make -C libaccel all build-tests -j"$JOBS" \
	CUDA_HOME="$CUDA_HOME" || status=1
run "build examples" 120 make -C examples clean all CUDA_HOME="$CUDA_HOME" ||
	status=1
run "build bench" 120 make -C bench clean all CUDA_HOME="$CUDA_HOME" ||
	status=1

export ACCEL_TRANSPORT=inproc ACCEL_BACKEND=cuda

# The whole libaccel suite on the GPU, verbose TAP in the log.
TESTS=$(cd libaccel/test && ls *.c | sed 's/\.c$//')
run "libaccel suite, ACCEL_BACKEND=cuda ACCEL_TRANSPORT=inproc" 600 \
	env VERBOSE=1 TEST_TIMEOUT=120 ./libaccel/test/runtests.sh \
	libaccel/build/test $TESTS || status=1
# The cuda program once more without cudaMemcpyBatchAsync.
run "libaccel cuda test, ACCEL_CUDA_NO_BATCH=1" 120 \
	env ACCEL_CUDA_NO_BATCH=1 VERBOSE=1 ./libaccel/test/runtests.sh \
	libaccel/build/test cuda memcpy || status=1
run "libaccel cuda test, ACCEL_CUDA_NO_MERGE=1" 120 \
	env ACCEL_CUDA_NO_MERGE=1 VERBOSE=1 ./libaccel/test/runtests.sh \
	libaccel/build/test cuda memcpy || status=1
# Completion by events (the default is a host word written with
# cuStreamWriteValue32), and the pipeline off.
run "libaccel tests, ACCEL_CUDA_COMPLETION=event" 300 \
	env ACCEL_CUDA_COMPLETION=event VERBOSE=1 ./libaccel/test/runtests.sh \
	libaccel/build/test cuda memcpy stream event staging staging_ring \
	staging_d2h staging_pinned pageable threads || status=1
run "libaccel tests, ACCEL_CUDA_ISSUER=0 ACCEL_CUDA_HYBRID=0" 300 \
	env ACCEL_CUDA_ISSUER=0 ACCEL_CUDA_HYBRID=0 VERBOSE=1 \
	./libaccel/test/runtests.sh libaccel/build/test cuda memcpy stream || status=1

for p in stream_tutorial acl_one_thread_one_stream acl_one_thread_two_streams \
	 acl_two_threads acl_event_order; do
	run "example $p (cuda)" 60 ./examples/$p || status=1
done

# make run over the inproc transport with a 1 GiB file in the page cache:
# its "stream_file: file -> device" line is the loader's leg (threads
# pread() into pinned slots, H2D on a stream each), next to read()
# baselines of the same file; then the same file with the other ways to
# load it, for comparison (the mapping as pageable sources, threads, chunk).
big=${TMPDIR:-/tmp}/accelstream-run-1g
if head -c 1G /dev/urandom > "$big" && cat "$big" > /dev/null; then
	run "make run, inproc, 1 GiB file in the page cache" 300 \
		make run FILE="$big" || status=1
	for opts in "-m mmap" "-t 4" "-t 16" "-c 16777216"; do
		run "stream_file $opts, the same file" 120 \
			sh -c "./examples/stream_file $opts '$big' > /dev/null" ||
			status=1
	done
else
	log "no room for a 1 GiB file in ${TMPDIR:-/tmp}: make run not run"
	status=1
fi
rm -f "$big"

# Benchmarks: sizes up to 1 GiB, few repetitions (about 3 minutes).
rm -f "$OUT/latency.csv" "$OUT/bandwidth.csv"
run "latency, cuda" 120 env BENCH_ITERS=${BENCH_ITERS:-2000} ./bench/latency \
	--csv "$OUT/latency.csv"
# The same with libaccel's breakdown (--trace, ACCEL_TRACE=1): per row,
# the median of each phase (submit -> fetched -> CUDA call -> returned ->
# seen done -> retired -> waiter returned), the CUDA calls per range and
# the thread hand-offs; then with the issuer off and with events.
run "latency, cuda, ACCEL_TRACE=1 breakdown" 120 \
	env BENCH_ITERS=${BENCH_ITERS:-2000} ./bench/latency --trace
run "latency, cuda, ACCEL_TRACE=1 breakdown, ACCEL_CUDA_ISSUER=0" 120 \
	env ACCEL_CUDA_ISSUER=0 BENCH_ITERS=${BENCH_ITERS:-2000} \
	./bench/latency --trace
run "latency, cuda, ACCEL_TRACE=1 breakdown, ACCEL_CUDA_COMPLETION=event" 120 \
	env ACCEL_CUDA_COMPLETION=event BENCH_ITERS=${BENCH_ITERS:-2000} \
	./bench/latency --trace
# Without coalescing contiguous copies: the batch row is then one
# cudaMemcpyBatchAsync of 64, like the raw baseline next to it.
run "latency, cuda, ACCEL_CUDA_NO_MERGE=1" 120 env ACCEL_CUDA_NO_MERGE=1 \
	BENCH_ITERS=${BENCH_ITERS:-2000} ./bench/latency
# The executor pipeline (libaccel/backend/cuda/cuda.h), each part against
# itself switched off, raw CUDA in every run: completion seen through
# events against the default host word (raw: both, in every latency run);
# the issuer off (every copy issued by the thread that submits:
# the "64 calls per sync" row); the hybrid wait off (on by default).
run "latency, cuda, ACCEL_CUDA_COMPLETION=event" 120 \
	env ACCEL_CUDA_COMPLETION=event BENCH_ITERS=${BENCH_ITERS:-2000} \
	./bench/latency --csv "$OUT/latency-event.csv"
run "latency, cuda, ACCEL_CUDA_ISSUER=0 (decoupled issue off)" 120 \
	env ACCEL_CUDA_ISSUER=0 BENCH_ITERS=${BENCH_ITERS:-2000} \
	./bench/latency --csv "$OUT/latency-noissuer.csv"
run "latency, cuda, ACCEL_CUDA_HYBRID=0 (hybrid wait off)" 120 \
	env ACCEL_CUDA_HYBRID=0 BENCH_ITERS=${BENCH_ITERS:-2000} \
	./bench/latency --csv "$OUT/latency-hybrid-off.csv"
# Pinned H2D/D2H/D2D on 1, 2, 4 streams, duplex, pageable both ways at
# every size, and registration (1 GiB, 4 GiB) next to cudaHostRegister.
run "bandwidth, cuda" 480 env BENCH_REPS=${BENCH_REPS:-3} \
	BENCH_BYTES=${BENCH_BYTES:-536870912} \
	BENCH_MAX=${BENCH_MAX:-1073741824} ./bench/bandwidth \
	--csv "$OUT/bandwidth.csv"
# The pinned and duplex rows again (where the wait's wake-up showed: D2D
# 1 MiB - 1 GiB, H2D 1 MiB, duplex) with the hybrid wait off, with
# completion by events, and with no issuer thread (every copy issued by
# the thread that submits it). These comparison passes take each side
# once (BENCH_ORDER=lib), to keep the run short; the pass above takes
# turns as A B B A.
run "bandwidth, cuda, pinned rows, ACCEL_CUDA_HYBRID=0" 300 \
	env ACCEL_CUDA_HYBRID=0 BENCH_ORDER=lib BENCH_PINNED_ONLY=1 \
	BENCH_REPS=${BENCH_REPS:-3} \
	BENCH_BYTES=${BENCH_BYTES:-536870912} \
	BENCH_MAX=${BENCH_MAX:-1073741824} ./bench/bandwidth \
	--csv "$OUT/bandwidth-hybrid-off.csv"
# One pass of the pinned or pageable rows ($1: PINNED or PAGEABLE) with
# the setting $2, into bandwidth-<setting>.csv.
bandwidth_pass() {
	tag=$(echo "$2" | tr 'A-Z_=' 'a-z--' |
	      sed 's/^accel-cuda-//; s/^accel-//')
	run "bandwidth, cuda, $(echo "$1" | tr 'A-Z' 'a-z') rows, $2" 300 \
		env "$2" "BENCH_$1_ONLY=1" BENCH_ORDER=lib \
		BENCH_REPS=${BENCH_REPS:-3} \
		BENCH_BYTES=${BENCH_BYTES:-536870912} \
		BENCH_MAX=${BENCH_MAX:-1073741824} ./bench/bandwidth \
		--csv "$OUT/bandwidth-$tag.csv"
}
for cfg in "ACCEL_CUDA_COMPLETION=event" "ACCEL_CUDA_ISSUER=0"; do
	bandwidth_pass PINNED "$cfg"
done
# The staging pool of pageable copies (libaccel/staging/), each setting
# against the defaults of the pass above, raw CUDA in every pass: the ring
# of small copies off (every H2D through the chunks), half the copying
# threads (the default is half the CPUs, at most 8), 8 MiB chunks (the
# prototype's slots), and the pool's trace (which path each copy took).
for cfg in "ACCEL_STAGING_SMALL_KB=0" "ACCEL_STAGING_THREADS=4" \
	   "ACCEL_STAGING_CHUNK_KB=8192" "ACCEL_TRACE=1"; do
	bandwidth_pass PAGEABLE "$cfg"
done
# The plot needs gnuplot; without it, one line says so (not a failure).
run "plot" 60 make -C bench plot CSV="$(cd "$OUT" && pwd)/bandwidth.csv"
run "latency, cpu (inproc engine)" 60 env ACCEL_BACKEND=cpu BENCH_ITERS=1000 \
	./bench/latency

log ""
log "=== summary: $( [ $status -eq 0 ] && echo PASS || echo FAIL ) (build + suite + examples)"
grep -E '^(PASS|FAIL|SKIP) |^programs:|^failed:' "$LOG" | tee "$OUT/summary.txt"
exit $status
