// SPDX-License-Identifier: MIT
/*
 * The stand-in libcudart's memory (see fake_cudart.c for the whole):
 * "device" memory from the host's heap, host memory that cudaHostRegister
 * pins (faults in) and the tests can watch the copies from, and mapped
 * pinned memory (cudaHostAlloc).
 */
#include <errno.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <sys/mman.h>

#include "fake_cudart.h"

/*
 * "Device memory" of FAKE_TOTAL_MEM bytes: each allocation carries its
 * size in front, so cudaMemGetInfo reports what is really outstanding.
 */
/* cudaMalloc's pointers are aligned to 256 bytes at least: so are ours. */
#define FAKE_HDR	((size_t)256)
static size_t fake_allocated;

cudaError_t cudaMalloc(void **p, size_t n)
{
	size_t *b;

	if (n > ((size_t)1 << 40))
		return cudaErrorMemoryAllocation;
	b = aligned_alloc(FAKE_HDR,
			  FAKE_HDR + ((n + FAKE_HDR - 1) & ~(FAKE_HDR - 1)));
	if (!b)
		return cudaErrorMemoryAllocation;
	memset(b, 0, FAKE_HDR + n);
	b[0] = n;
	b[1] = (size_t)fake_cur_dev;
	__atomic_add_fetch(&fake_allocated, n, __ATOMIC_RELAXED);
	*p = (char *)b + FAKE_HDR;
	return cudaSuccess;
}

cudaError_t cudaFree(void *p)
{
	size_t *b;

	if (!p)
		return cudaSuccess;
	b = (size_t *)((char *)p - FAKE_HDR);
	__atomic_sub_fetch(&fake_allocated, b[0], __ATOMIC_RELAXED);
	free(b);
	return cudaSuccess;
}

cudaError_t cudaMemGetInfo(size_t *free_bytes, size_t *total)
{
	*total = FAKE_TOTAL_MEM;
	*free_bytes = FAKE_TOTAL_MEM -
		      __atomic_load_n(&fake_allocated, __ATOMIC_RELAXED);
	return cudaSuccess;
}

cudaError_t cudaMemset(void *p, int v, size_t n) { memset(p, v, n); return cudaSuccess; }

/*
 * Registrations are counted, for tests that check what libaccel
 * cudaHostRegisters (dlsym fake_cuda_host_registrations), and the ranges
 * kept with their flags: fake_cuda_registered(p) gives the flags of the
 * live registration holding @p (-1: none), and fake_cuda_watch(p, n)
 * makes the copy calls count the copies whose source lies in [p, p + n),
 * read back by fake_cuda_watched(): how many cudaMemcpyAsync, how many
 * batch items, and how many of them had a source no live registration
 * holds (what CUDA stages through its own buffer).
 */
static atomic_long host_registers, host_registered;

#define FAKE_MAX_REGS	1024
static pthread_mutex_t reg_lock = PTHREAD_MUTEX_INITIALIZER;
static struct fake_reg {
	uintptr_t base;
	size_t len;
	unsigned int flags;
} regs[FAKE_MAX_REGS];
static unsigned int nregs;
static uintptr_t watch_base;
static size_t watch_len;
static long watch_single, watch_batch, watch_unpinned;

long fake_cuda_host_registrations(long *live);
long fake_cuda_host_registrations(long *live)
{
	if (live)
		*live = atomic_load(&host_registered);
	return atomic_load(&host_registers);
}

static int reg_flags_locked(uintptr_t p, size_t n)
{
	unsigned int i;

	for (i = 0; i < nregs; i++)
		if (p >= regs[i].base && n <= regs[i].len &&
		    p - regs[i].base <= regs[i].len - n)
			return (int)regs[i].flags;
	return -1;
}

int fake_cuda_registered(const void *p);
int fake_cuda_registered(const void *p)
{
	int f;

	pthread_mutex_lock(&reg_lock);
	f = reg_flags_locked((uintptr_t)p, 1);
	pthread_mutex_unlock(&reg_lock);
	return f;
}

void fake_cuda_watch(const void *p, size_t n);
void fake_cuda_watch(const void *p, size_t n)
{
	pthread_mutex_lock(&reg_lock);
	watch_base = (uintptr_t)p;
	watch_len = n;
	watch_single = watch_batch = watch_unpinned = 0;
	pthread_mutex_unlock(&reg_lock);
}

long fake_cuda_watched(long *batched, long *unpinned);
long fake_cuda_watched(long *batched, long *unpinned)
{
	long n;

	pthread_mutex_lock(&reg_lock);
	n = watch_single;
	*batched = watch_batch;
	*unpinned = watch_unpinned;
	pthread_mutex_unlock(&reg_lock);
	return n;
}

void fake_watch_copy(const void *src, size_t n, bool batch)
{
	uintptr_t p = (uintptr_t)src;

	pthread_mutex_lock(&reg_lock);
	if (watch_len && p >= watch_base && p - watch_base < watch_len) {
		if (batch)
			watch_batch++;
		else
			watch_single++;
		if (reg_flags_locked(p, n) < 0)
			watch_unpinned++;
	}
	pthread_mutex_unlock(&reg_lock);
}

/*
 * cudaHostRegister pins the range as the driver's pin_user_pages() does:
 * every page faulted in, for writing unless cudaHostRegisterReadOnly, and
 * a range it cannot fault in fails with cudaErrorInvalidValue,
 * registering nothing. fake_cuda_host_register_fail(e) makes the later
 * calls fail with @e instead (cudaSuccess: as before), as CUDA does for a
 * range that shares a page with a registered one.
 */
#ifndef MADV_POPULATE_READ
#define MADV_POPULATE_READ	22
#define MADV_POPULATE_WRITE	23
#endif

static _Atomic int host_register_fail;

void fake_cuda_host_register_fail(int e);
void fake_cuda_host_register_fail(int e)
{
	atomic_store(&host_register_fail, e);
}

static bool host_fault_in(void *p, size_t n, bool write)
{
	uintptr_t ps = (uintptr_t)sysconf(_SC_PAGESIZE);
	uintptr_t start = (uintptr_t)p & ~(ps - 1);
	uintptr_t end = ((uintptr_t)p + n + ps - 1) & ~(ps - 1);

	while (madvise((void *)start, end - start,
		       write ? MADV_POPULATE_WRITE : MADV_POPULATE_READ))
		if (errno != EINTR && errno != EAGAIN)
			return errno == EINVAL;	/* before Linux 5.14 */
	return true;
}

cudaError_t cudaHostRegister(void *p, size_t n, unsigned int f)
{
	int fail = atomic_load(&host_register_fail);

	if (fail)
		return (cudaError_t)fail;
	if (!host_fault_in(p, n, !(f & cudaHostRegisterReadOnly)))
		return cudaErrorInvalidValue;
	atomic_fetch_add(&host_registers, 1);
	atomic_fetch_add(&host_registered, 1);
	pthread_mutex_lock(&reg_lock);
	if (nregs < FAKE_MAX_REGS)
		regs[nregs++] = (struct fake_reg){ (uintptr_t)p, n, f };
	pthread_mutex_unlock(&reg_lock);
	return cudaSuccess;
}

cudaError_t cudaHostUnregister(void *p)
{
	unsigned int i;

	atomic_fetch_sub(&host_registered, 1);
	pthread_mutex_lock(&reg_lock);
	for (i = 0; i < nregs; i++)
		if (regs[i].base == (uintptr_t)p) {
			regs[i] = regs[--nregs];
			break;
		}
	pthread_mutex_unlock(&reg_lock);
	return cudaSuccess;
}

/* Mapped pinned memory: plain memory, its device address its own. */
cudaError_t cudaHostAlloc(void **p, size_t n, unsigned int f)
{
	(void)f;
	*p = calloc(1, n ? n : 1);
	return *p ? cudaSuccess : cudaErrorMemoryAllocation;
}

/* As CUDA's, it synchronizes: no host word write is left to land in @p. */
cudaError_t cudaFreeHost(void *p)
{
	fake_writes_drain();
	free(p);
	return cudaSuccess;
}

cudaError_t cudaHostGetDevicePointer(void **d, void *h, unsigned int f)
{
	(void)f;
	*d = h;
	return cudaSuccess;
}
