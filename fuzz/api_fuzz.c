// SPDX-License-Identifier: GPL-2.0 OR MIT
/*
 * api_fuzz: libFuzzer over libaccel's public API, on the in-process
 * transport. The input is a call sequence read by api_seq.c, the same
 * interpreter api_replay runs over either transport, so a crash input
 * libFuzzer writes replays there unchanged:
 *	ACCEL_TRANSPORT=inproc api_replay crash-...
 */
#include <stdint.h>
#include <stdlib.h>

#include "api_seq.h"

static struct api_opts opts;

int LLVMFuzzerInitialize(int *argc, char ***argv)
{
	(void)argc;
	(void)argv;
	setenv("ACCEL_TRANSPORT", "inproc", 0);
	api_opts_init(&opts);
	return 0;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	return api_seq_run(data, size, &opts);
}
