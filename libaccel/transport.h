/* SPDX-License-Identifier: MIT */
/*
 * The transports libaccel speaks the accelstream ioctl ABI over: the
 * kernel driver, or an in-process model of it built from the driver's own
 * scheduling core. Both take the uapi structures unchanged.
 */
#ifndef LIBACCEL_TRANSPORT_H
#define LIBACCEL_TRANSPORT_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

struct accel_transport;

struct accel_transport_ops {
	const char *name;
	/* Open one context; 0 or -errno. */
	int (*open)(struct accel_transport **tp);
	/* Close it: cancels queued work, waits for running copies. */
	void (*close)(struct accel_transport *tp);
	/* One ACCEL_IOC_* command; 0 or -errno, never errno. */
	int (*ioctl)(struct accel_transport *tp, unsigned long cmd, void *arg);
	/*
	 * Map an ACCEL_MEM_HOST allocation at its mmap offset, as a mapping
	 * that no child of fork() inherits (libaccel(7) FORK): the module
	 * makes its mappings VM_DONTCOPY, inproc advises MADV_DONTFORK.
	 */
	int (*mmap)(struct accel_transport *tp, uint64_t offset, size_t len,
		    void **addr);
	/*
	 * The context's completion descriptor (the device file, or an
	 * eventfd in process): read(2) and poll(2) as the uapi's "DOC:
	 * completions" says; owned by the transport. The fd or -errno.
	 */
	int (*get_fd)(struct accel_transport *tp);
	/*
	 * Make @owner's ACCEL_MEM_HOST allocation @owner_handle, mapped by
	 * the user at [@addr, @addr + @len), a region of @tp too, holding
	 * the same pages for @tp's queued work whatever @owner does with
	 * them afterwards (portable pinned memory): the kernel pins them
	 * with a registration of the range, inproc maps the allocation's
	 * memory file itself. @owner is another context of the same
	 * transport. Stores the new region's handle; 0 or -errno.
	 */
	int (*import_host)(struct accel_transport *tp,
			   struct accel_transport *owner, uint32_t owner_handle,
			   uint64_t addr, uint64_t len, uint32_t *handle);
};

/*
 * -EFAULT unless every page of [addr, addr + len) could be pinned as the
 * driver pins it: mapped and readable, and writable if @write (vmcheck.c).
 */
int accel_range_check(uint64_t addr, uint64_t len, bool write);
/*
 * The same answer from the mappings' protections alone, faulting nothing
 * in: for a range that is about to be faulted in and pinned by someone
 * else (cudaHostRegister). A page the process maps but cannot fault (a
 * file mapping past the file's end) passes here (vmcheck.c).
 */
int accel_range_mapped(uint64_t addr, uint64_t len, bool write);
/*
 * A mapping libaccel hands out as an allocation (a host allocation's view,
 * a device pointer's reserved range): mmap(2) of @len bytes followed by an
 * inaccessible guard page of its own, so that a pointer one past its end
 * reaches no other memory (the program's, or the library's own: another
 * view, a staging chunk, the completion words) and a copy there is
 * -EFAULT. MAP_FAILED (errno set) on failure. accel_unmap_guarded() undoes
 * it, guard included (vmcheck.c).
 */
void *accel_map_guarded(size_t len, int prot, int flags, int fd, off_t off);
void accel_unmap_guarded(void *base, size_t len);
/* CAP_IPC_LOCK in the effective set: RLIMIT_MEMLOCK does not apply (device.c). */
bool accel_has_ipc_lock(void);
/*
 * memmove() that returns -EFAULT instead of faulting when either range is
 * not (or no longer) mapped with the access it needs (vmcheck.c).
 */
int accel_copy_checked(void *dst, const void *src, size_t len);

extern const struct accel_transport_ops accel_transport_kernel;
extern const struct accel_transport_ops accel_transport_inproc;

#endif /* LIBACCEL_TRANSPORT_H */
