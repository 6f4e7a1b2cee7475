/* SPDX-License-Identifier: GPL-2.0 OR MIT */
/*
 * Every command of the accelstream ABI, once: ASC_IOCTL(command, handler).
 * Included (without a guard) where ASC_IOCTL is defined: by asc_core.h for
 * &enum asc_ioctl, by asc_check.c for asc_ioctl_index(), and by each shell
 * for its handler table (ACCEL_IOC_<command> -> <prefix>_<handler>...()).
 */
ASC_IOCTL(GET_INFO, get_info)
ASC_IOCTL(QUERY, query)
ASC_IOCTL(SET_DEVICE, set_device)
ASC_IOCTL(MEM_REGISTER, mem_register)
ASC_IOCTL(MEM_ALLOC, mem_alloc)
ASC_IOCTL(MEM_RELEASE, mem_release)
ASC_IOCTL(STREAM_CREATE, stream_create)
ASC_IOCTL(STREAM_DESTROY, stream_destroy)
ASC_IOCTL(STREAM_QUERY, stream_query)
ASC_IOCTL(STREAM_SYNC, stream_sync)
ASC_IOCTL(SUBMIT, submit)
ASC_IOCTL(EVENT_CREATE, event_create)
ASC_IOCTL(EVENT_DESTROY, event_destroy)
ASC_IOCTL(EVENT_RECORD, event_record)
ASC_IOCTL(EVENT_QUERY, event_query)
ASC_IOCTL(EVENT_ELAPSED, event_elapsed)
ASC_IOCTL(EVENT_SIGNAL, event_signal)
ASC_IOCTL(WAIT, wait)
ASC_IOCTL(EVENT_EXPORT, event_export)
ASC_IOCTL(EVENT_IMPORT, event_import)
ASC_IOCTL(EXEC_ATTACH, exec_attach)
ASC_IOCTL(EXEC_DETACH, exec_detach)
ASC_IOCTL(EXEC_FETCH, exec_fetch)
ASC_IOCTL(EXEC_COMPLETE, exec_complete)
