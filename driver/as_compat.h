/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Differences between the kernels accelstream builds against, decided by
 * feature probes in driver/Kbuild (never by version numbers).
 */
#ifndef _AS_COMPAT_H
#define _AS_COMPAT_H

#include <linux/mm.h>

#ifdef AS_HAVE_VM_FLAGS_SET
static inline void as_vm_flags_set(struct vm_area_struct *vma, vm_flags_t f)
{
	vm_flags_set(vma, f);
}
#else
static inline void as_vm_flags_set(struct vm_area_struct *vma, vm_flags_t f)
{
	vma->vm_flags |= f;
}
#endif

#endif /* _AS_COMPAT_H */
