// SPDX-License-Identifier: MIT
/*
 * Generation-checked handles. A handle names a slot and the generation the
 * slot had when the object was published; killing the object bumps the
 * generation, so a destroyed handle gives -ENOENT forever, even once the
 * slot holds a new object.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <stdlib.h>

#include "accel_int.h"

struct slot {
	uint32_t gen;
	struct accel_obj *obj;
	uint32_t next_free;	/* index + 1 of the next free slot, 0 = none */
};

/* Protects the slot table and every accel_obj's refs and killed. */
static pthread_mutex_t handle_lock = PTHREAD_MUTEX_INITIALIZER;
static struct slot *slots;
static uint32_t nslots, free_head;

void accel_handles_lock(void)
{
	pthread_mutex_lock(&handle_lock);
}

void accel_handles_unlock(void)
{
	pthread_mutex_unlock(&handle_lock);
}

int accel_obj_publish(struct accel_obj *obj, enum accel_obj_type type,
		      void (*release)(struct accel_obj *), uint64_t *handle)
{
	uint32_t idx;

	pthread_mutex_lock(&handle_lock);
	if (free_head) {
		idx = free_head - 1;
		free_head = slots[idx].next_free;
	} else {
		uint32_t cap = nslots ? nslots * 2 : 256;
		struct slot *s;

		if (nslots >= (1U << 30)) {
			pthread_mutex_unlock(&handle_lock);
			return -ENOSPC;
		}
		s = realloc(slots, cap * sizeof(*s));
		if (!s) {
			pthread_mutex_unlock(&handle_lock);
			return -ENOMEM;
		}
		for (uint32_t i = nslots; i < cap; i++) {
			s[i].gen = 1;
			s[i].obj = NULL;
			s[i].next_free = i + 2 <= cap ? i + 2 : 0;
		}
		s[cap - 1].next_free = 0;
		slots = s;
		idx = nslots;
		free_head = nslots + 1 < cap ? nslots + 2 : 0;
		nslots = cap;
	}
	slots[idx].obj = obj;
	slots[idx].next_free = 0;
	obj->type = type;
	obj->slot = idx;
	obj->refs = 1;
	obj->killed = false;
	obj->release = release;
	*handle = ((uint64_t)slots[idx].gen << 32) | (idx + 1);
	pthread_mutex_unlock(&handle_lock);
	return 0;
}

int accel_obj_get(uint64_t handle, enum accel_obj_type type,
		  struct accel_obj **out)
{
	uint32_t idx = (uint32_t)handle, gen = (uint32_t)(handle >> 32);
	struct accel_obj *obj;
	int ret = 0;

	if (!handle)
		return -EINVAL;
	pthread_mutex_lock(&handle_lock);
	if (!idx || idx > nslots || slots[idx - 1].gen != gen ||
	    !slots[idx - 1].obj) {
		ret = -ENOENT;
		goto out;
	}
	obj = slots[idx - 1].obj;
	if (obj->type != type) {
		ret = -EINVAL;
		goto out;
	}
	obj->refs++;
	*out = obj;
out:
	pthread_mutex_unlock(&handle_lock);
	return ret;
}

static const char *const obj_names[] = {
	[ACCEL_OBJ_CONTEXT] = "context",
	[ACCEL_OBJ_STREAM] = "stream",
	[ACCEL_OBJ_EVENT] = "event",
};

/* What accel_obj_get() of @handle failed with (@err), for the user. */
static void obj_lookup_error(uint64_t handle, enum accel_obj_type type,
			     int err)
{
	uint32_t idx = (uint32_t)handle;
	enum accel_obj_type is = 0;

	if (err == -ENOENT) {
		accel_set_error("%s handle %#llx is stale or unknown: destroyed (by its own destroy or its context's), or never created",
				obj_names[type], (unsigned long long)handle);
		return;
	}
	if (!handle) {
		accel_set_error("the %s handle is 0", obj_names[type]);
		return;
	}
	pthread_mutex_lock(&handle_lock);
	if (idx && idx <= nslots && slots[idx - 1].obj)
		is = slots[idx - 1].obj->type;
	pthread_mutex_unlock(&handle_lock);
	if (is)
		accel_set_error("handle %#llx is %s %s handle, not %s %s handle",
				(unsigned long long)handle,
				is == ACCEL_OBJ_EVENT ? "an" : "a", obj_names[is],
				type == ACCEL_OBJ_EVENT ? "an" : "a",
				obj_names[type]);
}

int accel_obj_get_user(uint64_t handle, enum accel_obj_type type,
		       struct accel_obj **out)
{
	int ret = accel_obj_get(handle, type, out);

	if (ret)
		obj_lookup_error(handle, type, ret);
	return ret;
}

void accel_obj_ref(struct accel_obj *obj)
{
	pthread_mutex_lock(&handle_lock);
	obj->refs++;
	pthread_mutex_unlock(&handle_lock);
}

void accel_obj_put(struct accel_obj *obj)
{
	bool last;

	pthread_mutex_lock(&handle_lock);
	last = --obj->refs == 0;
	pthread_mutex_unlock(&handle_lock);
	if (last)
		obj->release(obj);
}

int accel_obj_kill(struct accel_obj *obj)
{
	uint32_t idx = obj->slot;

	pthread_mutex_lock(&handle_lock);
	if (obj->killed) {
		pthread_mutex_unlock(&handle_lock);
		return -ENOENT;
	}
	obj->killed = true;
	slots[idx].obj = NULL;
	slots[idx].gen++;
	if (!slots[idx].gen)
		slots[idx].gen = 1;
	slots[idx].next_free = free_head;
	free_head = idx + 1;
	pthread_mutex_unlock(&handle_lock);
	accel_obj_put(obj);
	return 0;
}
