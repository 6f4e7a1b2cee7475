// SPDX-License-Identifier: MIT
/*
 * Whether the process could pin a host range the way the driver does
 * (get_user_pages, FOLL_WRITE unless read-only): every page mapped,
 * readable, and writable when the device may write it. The inproc
 * transport's registration and the copy path's pageable destinations
 * check with it, so that a bad range is -EFAULT at the call rather than a
 * SIGSEGV on an engine or host-function thread later.
 *
 * MADV_POPULATE_READ/WRITE (Linux 5.14) fault the range in exactly as the
 * kernel's pin would and fail where an access would fault; the pages are
 * about to be pinned or written anyway; they refuse VM_IO and VM_PFNMAP
 * mappings (device memory mapped into the process: -EFAULT here, whatever
 * their protections say). Where it is not available, the
 * protections of the mappings decide (accel_range_mapped()), which is
 * also all a caller needs whose range is about to be faulted in and
 * pinned by someone else (cudaHostRegister does both).
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <linux/fs.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <sys/uio.h>

#include "transport.h"

#ifndef MADV_POPULATE_READ
#define MADV_POPULATE_READ	22
#define MADV_POPULATE_WRITE	23
#endif

#ifndef PROCMAP_QUERY
/* Linux 6.11's <linux/fs.h>: one mapping of /proc/PID/maps by address. */
struct procmap_query {
	__u64 size;
	__u64 query_flags;
	__u64 query_addr;
	__u64 vma_start;
	__u64 vma_end;
	__u64 vma_flags;
	__u64 vma_page_size;
	__u64 vma_offset;
	__u64 inode;
	__u32 dev_major;
	__u32 dev_minor;
	__u32 vma_name_size;
	__u32 build_id_size;
	__u64 vma_name_addr;
	__u64 build_id_addr;
};
#define PROCMAP_QUERY_VMA_READABLE	0x01
#define PROCMAP_QUERY_VMA_WRITABLE	0x02
#define PROCMAP_QUERY	_IOWR(0x66, 17, struct procmap_query)
#endif

/*
 * The mappings over [start, end) by PROCMAP_QUERY, one ioctl per mapping
 * rather than the text of every mapping of the process (a CUDA process
 * has thousands): 0 or -EFAULT; -ENOTTY where the kernel has no such
 * ioctl (before 6.11) or refuses it, and the text decides.
 */
static int maps_query(int fd, uintptr_t start, uintptr_t end, bool write)
{
	__u64 want = PROCMAP_QUERY_VMA_READABLE |
		     (write ? PROCMAP_QUERY_VMA_WRITABLE : 0);
	struct procmap_query q;
	uintptr_t at = start;

	while (at < end) {
		memset(&q, 0, sizeof(q));
		q.size = sizeof(q);
		q.query_addr = at;
		if (ioctl(fd, PROCMAP_QUERY, &q))	/* ENOENT: a hole */
			return errno == ENOENT ? -EFAULT : -ENOTTY;
		if ((q.vma_flags & want) != want || q.vma_end <= at)
			return -EFAULT;
		at = q.vma_end;
	}
	return 0;
}

/* 0 when [start, end) is covered by mappings with the protections asked. */
static int maps_check(uintptr_t start, uintptr_t end, bool write)
{
	char buf[4096], *line, *nl;
	size_t have = 0;
	uintptr_t at = start;
	ssize_t n;
	int fd, ret;

	fd = open("/proc/self/maps", O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return 0;	/* nothing to go by: let the access decide */
	ret = maps_query(fd, start, end, write);
	if (ret != -ENOTTY)
		goto out;
	ret = -EFAULT;
	for (;;) {
		n = read(fd, buf + have, sizeof(buf) - 1 - have);
		if (n < 0 && errno == EINTR)
			continue;
		if (n <= 0)
			break;
		have += (size_t)n;
		buf[have] = '\0';
		line = buf;
		while ((nl = strchr(line, '\n'))) {
			unsigned long lo, hi;
			char *p = line, *q;

			*nl = '\0';
			lo = strtoul(p, &q, 16);
			if (*q == '-') {
				hi = strtoul(q + 1, &q, 16);
				if (hi > at) {
					/* A hole, or a mapping without access. */
					if (lo > at || q[0] != ' ' || q[1] != 'r' ||
					    (write && q[2] != 'w'))
						goto out;
					at = hi;
					if (at >= end) {
						ret = 0;
						goto out;
					}
				}
			}
			line = nl + 1;
		}
		/* Keep a partial line; one longer than the buffer is skipped. */
		have = strlen(line);
		if (have == sizeof(buf) - 1)
			have = 0;
		memmove(buf, line, have);
	}
out:
	close(fd);
	return ret;
}

/* The pages [*start, *end) of [addr, addr + len); false if it wraps. */
static bool page_span(uint64_t addr, uint64_t len, uintptr_t *start,
		      uintptr_t *end)
{
	uintptr_t ps = (uintptr_t)sysconf(_SC_PAGESIZE);

	if (addr + len < addr || addr + len > UINTPTR_MAX - ps)
		return false;
	*start = (uintptr_t)addr & ~(ps - 1);
	*end = ((uintptr_t)(addr + len) + ps - 1) & ~(ps - 1);
	return true;
}

int accel_range_mapped(uint64_t addr, uint64_t len, bool write)
{
	uintptr_t start, end;

	if (!len)
		return 0;
	if (!page_span(addr, len, &start, &end))
		return -EFAULT;
	return maps_check(start, end, write);
}

/*
 * The populate goes in steps of this many bytes: the kernel holds the
 * process's mmap lock through one call, and a mapping change waiting for
 * it (another thread's malloc() growing the heap, say) holds up every
 * fault and populate behind it, so a range of gigabytes in one call would
 * stall the other threads' copies for seconds.
 */
#define POPULATE_STEP	(64UL << 20)

/*
 * Does this kernel know MADV_POPULATE_READ/WRITE (Linux 5.14)? Asked once,
 * on a page of our own: then an EINVAL from it means VM_IO or VM_PFNMAP
 * pages (a device's memory mapped into the process, such as a GPU
 * runtime's), which no CPU copy may take for ordinary memory.
 */
static bool populate_known(void)
{
	static _Atomic int known;	/* 0: not asked, 1: yes, 2: no */
	static char page[65536] __attribute__((aligned(65536)));
	int k = known;

	if (!k) {
		k = madvise(page, 1, MADV_POPULATE_READ) ? 2 : 1;
		known = k;
	}
	return k == 1;
}

int accel_range_check(uint64_t addr, uint64_t len, bool write)
{
	uintptr_t start, end, at;
	int tries;

	if (!len)
		return 0;
	if (!page_span(addr, len, &start, &end))
		return -EFAULT;

	for (at = start; at < end;) {
		size_t step = end - at < POPULATE_STEP ? end - at :
							 POPULATE_STEP;

		for (tries = 0; tries < 4; tries++) {
			if (!madvise((void *)at, step, write ?
				     MADV_POPULATE_WRITE : MADV_POPULATE_READ))
				break;
			if (errno == EFAULT || errno == EHWPOISON)
				return -EFAULT;
			if (errno == EINVAL && populate_known())
				return -EFAULT;
			/*
			 * EINVAL: a kernel before 5.14, or VM_IO / VM_PFNMAP
			 * pages; ENOMEM: a hole, or out of memory. The maps
			 * decide.
			 */
			if (errno != EINTR && errno != EAGAIN)
				return maps_check(start, end, write);
		}
		if (tries == 4)
			return maps_check(start, end, write);
		at += step;
	}
	return 0;
}

void *accel_map_guarded(size_t len, int prot, int flags, int fd, off_t off)
{
	size_t guard = (size_t)getpagesize();
	char *p = mmap(NULL, len + guard, PROT_NONE,
		       MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
	int saved;

	if (p == MAP_FAILED)
		return MAP_FAILED;
	if (prot == PROT_NONE)
		return p;
	if (mmap(p, len, prot, flags | MAP_FIXED, fd, off) == MAP_FAILED) {
		saved = errno;
		munmap(p, len + guard);
		errno = saved;
		return MAP_FAILED;
	}
	return p;
}

void accel_unmap_guarded(void *base, size_t len)
{
	munmap(base, len + (size_t)getpagesize());
}

int accel_copy_checked(void *dst, const void *src, size_t len)
{
	struct iovec local = { .iov_base = dst, .iov_len = len };
	struct iovec remote = { .iov_base = (void *)src, .iov_len = len };
	uintptr_t d = (uintptr_t)dst, s = (uintptr_t)src;
	ssize_t n;

	if (!len)
		return 0;
	/*
	 * The kernel copies within this process and fails a fault with
	 * EFAULT on either side: nothing between a check and the access
	 * can make it crash. Overlapping ranges need memmove's ordering.
	 */
	if (d + len <= s || s + len <= d) {
		n = process_vm_readv(getpid(), &local, 1, &remote, 1, 0);
		if (n == (ssize_t)len)
			return 0;
		if (n >= 0 || errno == EFAULT)
			return -EFAULT;
		/* ENOSYS, EPERM (a seccomp filter): check, then copy. */
	}
	if (accel_range_check(s, len, false) || accel_range_check(d, len, true))
		return -EFAULT;
	memmove(dst, src, len);
	return 0;
}
