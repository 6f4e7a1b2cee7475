// SPDX-License-Identifier: MIT
/*
 * accel_last_error_string() for the failures of looking things up and of
 * the queue (libaccel(7) ERRORS and LIMITS): a stale handle, a handle of
 * another type, a pointer no context knows, a range already registered or
 * not mapped, a host event signalled with an error, another process's
 * objects; and the queue depth the pages, the message and the driver agree
 * on (65536 descriptors, a wait included), with the errno order ERRORS
 * gives (a full queue before the kind of the event recorded).
 */
#include <stdbool.h>
#include <sys/wait.h>

#include "helpers.h"

/* The last message holds @word; else says what it was. */
static bool said(const char *word)
{
	const char *m = accel_last_error_string();

	if (strstr(m, word))
		return true;
	printf("# \"%s\" not in \"%s\"\n", word, m);
	return false;
}

static int queue_depth_and_errno_order(void)
{
	accel_event_t gate, host;
	accel_stream_t s;
	char *h;
	void *d;
	int n = 0;

	CHECK(t_ctx());
	CHECK_OK(accel_stream_create(NULL, 0, 0, &s));
	CHECK_OK(accel_host_alloc(NULL, (void **)&h, 64, 0));
	CHECK_OK(accel_malloc(NULL, &d, 64));
	CHECK_OK(accel_event_create(NULL, ACCEL_EVENT_HOST, &host));
	CHECK_OK(t_gate(s, &gate));
	while (!accel_memcpy_async(s, d, h, 4, ACCEL_MEMCPY_H2D))
		n++;
	/* The wait and the copies: 65536 descriptors, as LIMITS says. */
	CHECK_RET(n + 1, 65536);
	CHECK(said("at most 65536 descriptors"));
	/* Full: the queue's room is checked before the event's kind. */
	CHECK_RET(accel_event_record(host, s), -EAGAIN);
	CHECK_OK(t_gate_open(gate));
	CHECK_OK(accel_stream_synchronize(s, ACCEL_TIMEOUT_INFINITE));
	CHECK_RET(accel_event_record(host, s), -EINVAL);
	CHECK_OK(accel_stream_destroy(s));
	return T_PASS;
}

static int stale_and_wrong_type_handles(void)
{
	accel_stream_t s;
	accel_event_t e;

	CHECK(t_ctx());
	CHECK_OK(accel_stream_create(NULL, 0, 0, &s));
	CHECK_OK(accel_event_create(NULL, 0, &e));
	CHECK_RET(accel_context_set_current((accel_context *)s), -EINVAL);
	CHECK(said("is a stream handle, not a context handle"));
	CHECK_RET(accel_stream_query((accel_stream_t)e), -EINVAL);
	CHECK(said("is an event handle, not a stream handle"));
	CHECK_OK(accel_stream_destroy(s));
	CHECK_RET(accel_stream_synchronize(s, 0), -ENOENT);
	CHECK(said("stream handle") && said("stale or unknown"));
	CHECK_OK(accel_event_destroy(e));
	CHECK_RET(accel_event_query(e), -ENOENT);
	CHECK(said("event handle") && said("stale or unknown"));
	return T_PASS;
}

static int unknown_and_refused_memory(void)
{
	size_t page = (size_t)sysconf(_SC_PAGESIZE);
	char *m, *gone;

	CHECK(t_ctx());
	m = aligned_alloc(page, 2 * page);
	CHECK(m);
	/*
	 * Kept mapped without access to the end: an address unmapped here
	 * could be mapped again by the calls below (a sanitizer's runtime,
	 * the stand-in libcudart) before it is registered.
	 */
	gone = mmap(NULL, page, PROT_NONE, MAP_PRIVATE | MAP_ANONYMOUS, -1,
		    0);
	CHECK(gone != MAP_FAILED);
	CHECK_OK(accel_host_register(NULL, m, page, 0));
	CHECK_RET(accel_host_register(NULL, m, page, 0), -EEXIST);
	CHECK(said("overlaps"));
	CHECK_RET(accel_host_register(NULL, gone, page, 0), -EFAULT);
	CHECK(said("not all mapped"));
	CHECK_RET(accel_host_unregister(m + page, 0), -ENOENT);
	CHECK(said("not a range registered"));
	CHECK_RET(accel_free(gone), -ENOENT);
	CHECK(said("not an accel_malloc() block"));
	CHECK_OK(accel_host_unregister(m, 0));
	free(m);
	munmap(gone, page);
	return T_PASS;
}

static int host_event_signalled_with_error(void)
{
	accel_event_t host, after;
	accel_stream_t s;
	uint32_t first = 99;

	CHECK(t_ctx());
	CHECK_OK(accel_stream_create(NULL, 0, 0, &s));
	CHECK_OK(accel_event_create(NULL, ACCEL_EVENT_HOST, &host));
	CHECK_OK(accel_event_create(NULL, 0, &after));
	CHECK_OK(accel_stream_wait_value(s, host, 1, 0));
	CHECK_OK(accel_event_record(after, s));
	CHECK_OK(accel_event_signal(host, 1, ACCEL_EVENT_SIGNAL_ERROR));
	CHECK_RET(accel_event_query(host), -EIO);
	CHECK(said("signalled with ACCEL_EVENT_SIGNAL_ERROR"));
	CHECK_RET(accel_event_synchronize(host, ACCEL_TIMEOUT_INFINITE), -EIO);
	CHECK(said("signalled with ACCEL_EVENT_SIGNAL_ERROR"));
	CHECK_RET(accel_event_wait(&host, 1, ACCEL_WAIT_ALL,
				   ACCEL_TIMEOUT_INFINITE, &first), -EIO);
	CHECK(said("signalled with ACCEL_EVENT_SIGNAL_ERROR"));
	CHECK_RET(accel_stream_synchronize(s, ACCEL_TIMEOUT_INFINITE), -EIO);
	CHECK(said("host event it waited for"));
	CHECK_RET(accel_event_synchronize(after, ACCEL_TIMEOUT_INFINITE), -EIO);
	CHECK(said("its stream failed"));
	return T_PASS;
}

/* The parent's objects a child is handed. */
struct inherited {
	accel_context *ctx;
	accel_event_t e;
	char *m;
};

/* In the child: 0, or the step whose errno or message was wrong. */
static int inherited_child(void *arg)
{
	struct inherited *in = arg;

	alarm(20);
	if (accel_event_query(in->e) != -EACCES || !said("parent process"))
		return 10;
	if (accel_host_unregister(in->m, 0) != -EACCES ||
	    !said("parent process"))
		return 11;
	if (accel_context_destroy(in->ctx) != -EACCES ||
	    !said("parent process"))
		return 12;
	return 0;
}

static int another_process_objects(void)
{
	size_t page = (size_t)sysconf(_SC_PAGESIZE);
	struct inherited in;
	char *m;

	in.ctx = t_ctx();
	CHECK(in.ctx);
	if (!t_backend_forks(in.ctx))
		return T_SKIP;
	CHECK_OK(accel_event_create(in.ctx, 0, &in.e));
	m = aligned_alloc(page, page);
	CHECK(m);
	CHECK_OK(accel_host_register(in.ctx, m, page, 0));
	in.m = m;
	CHECK(t_in_child(inherited_child, &in) == 0);
	CHECK_OK(accel_host_unregister(m, 0));
	free(m);
	return T_PASS;
}

T_MAIN(T(queue_depth_and_errno_order), T(stale_and_wrong_type_handles),
       T(unknown_and_refused_memory), T(host_event_signalled_with_error),
       T(another_process_objects))
