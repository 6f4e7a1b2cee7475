/* SPDX-License-Identifier: MIT */
/*
 * What the files of the stand-in libcudart share (fake_cudart.c: the
 * devices, streams, events and copies; fake_control.c: the call counters,
 * the copy gate and the modelled device; fake_mem.c: device memory and
 * host registrations). Only the CUDA calls and the fake_cuda_* hooks are
 * exported: everything declared here is hidden.
 */
#ifndef LIBACCEL_TEST_FAKE_CUDART_H
#define LIBACCEL_TEST_FAKE_CUDART_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include <cuda.h>
#include <cuda_runtime_api.h>

#pragma GCC visibility push(hidden)

/* The "device memory" there is (fake_mem.c). */
#define FAKE_TOTAL_MEM	((size_t)80 << 30)

/* The calls counted, by fake_call(); fake_control.c has their names. */
enum { C_COPY, C_BATCH, C_BATCH_ITEMS, C_REC, C_QUERY, C_SYNC, C_WAIT,
       C_GETDEV, C_SETDEV, C_EVCREATE, C_WRITE, C_MEMSET, C_MEMSET16,
       C_MEMSET32, C_COPY2D, C_N };

/* The calls made (of all threads), and the copies in batches. */
extern unsigned long fake_counts[C_N];

/* Count the call @what, and busy-wait FAKE_CUDA_CALL_NS in it. */
void fake_call(int what);

/*
 * On entry to a copy call into @dsts[@n]: wait while fake_cuda_hold()
 * holds copies; true if the call is to fail (fake_cuda_fail_dst(),
 * fake_cuda_fail_nth()).
 */
bool fake_copy_gate(void *const *dsts, size_t n);

/* On entry to cudaSetDevice: wait while fake_cuda_hold_threads() holds us. */
void fake_thread_gate(void);

/* A stream or an event: when its work ends on the modelled device. */
struct fake_obj {
	uint64_t end;
	uint64_t pad;
};

uint64_t fake_mono_ns(void);
/* When the work of @o (a struct fake_obj) ends, in fake_mono_ns() time. */
uint64_t fake_obj_end(const void *o);
/* Read FAKE_CUDA_RATE_PS, FAKE_CUDA_LINK and FAKE_CUDA_NO_DATA, once. */
void fake_model_env_once(void);
/* The bytes of a copy, unless FAKE_CUDA_NO_DATA=1 (timing only). */
void fake_data_copy(void *dst, const void *src, size_t n);
/* A copy of @n bytes on @s, on the modelled device. */
void fake_model_copy(cudaStream_t s, size_t n);
/*
 * @value into the host word @addr once the modelled work before it on @s
 * is done (at once if it is); 0, or -1 (no memory: nothing written).
 */
int fake_model_write32(cudaStream_t s, uint32_t *addr, uint32_t value);
/* Make the host word writes due by @now (fake_mono_ns() time). */
void fake_writes_flush(uint64_t now);
/* Wait until every host word write is made (as a device synchronize). */
void fake_writes_drain(void);

/* FAKE_CUDA_DEVICES, and the calling thread's current device. */
int fake_ndevices(void);
extern __thread int fake_cur_dev;

/* Count a copy from @src of @n bytes if fake_cuda_watch() watches it. */
void fake_watch_copy(const void *src, size_t n, bool batch);

#pragma GCC visibility pop

#endif /* LIBACCEL_TEST_FAKE_CUDART_H */
