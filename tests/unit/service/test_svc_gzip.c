// SPDX-License-Identifier: Apache-2.0
/*
 * Unit tests of svc_gzip (service/rpc/svc_gzip.c): each library and level
 * round-trips through zlib's inflate (svc_gunzip), and a thread's ISA-L
 * stream gives the same bytes whatever memory it was allocated in: ISA-L
 * 2.30 (Debian 12's) leaves the stream's window size unset in
 * isal_deflate_stateless_init, so a stream in reused memory once compressed
 * with whatever window the old bytes said.
 */
#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <event2/buffer.h>
#include <isa-l/igzip_lib.h>

#include "service/rpc/svc_connect.h"
#include "service/rpc/svc_gzip.h"
#include "test.h"

/* A response-like input: names that repeat at long and short distances. */
static uint8_t *sample(size_t *n)
{
	size_t cap = 96 * 1024, len = 0;
	uint8_t *s = malloc(cap);
	if (!s)
		return NULL;
	for (unsigned i = 0; len + 64 < cap; i++) {
		int k = snprintf((char *)s + len, 64, "\n%c__libc_function_%u../sysdeps/x86_64/f%u.c",
				 (char)(i % 23), (i * 7919) % 1500, i % 97);
		len += (size_t)k;
	}
	*n = len;
	return s;
}

/* gzip of in by lib at level, as bytes (*out_n); NULL when it failed. */
static uint8_t *gzip_bytes(svc_gzip_library lib, int level, const uint8_t *in, size_t n,
			   size_t *out_n)
{
	struct evbuffer *z = evbuffer_new();
	if (!z || !svc_gzip_with(lib, level, in, n, z)) {
		if (z)
			evbuffer_free(z);
		return NULL;
	}
	*out_n = evbuffer_get_length(z);
	uint8_t *out = malloc(*out_n);
	if (out)
		evbuffer_remove(z, out, *out_n);
	evbuffer_free(z);
	return out;
}

TEST(gzip_round_trips_at_every_level)
{
	size_t n;
	uint8_t *in = sample(&n);
	REQUIRE(in);
	static const struct {
		svc_gzip_library lib;
		int level;
	} cases[] = {
		{SVC_GZIP_ISAL, SVC_GZIP_LEVEL_DEFAULT}, {SVC_GZIP_ISAL, 0}, {SVC_GZIP_ISAL, 1},
		{SVC_GZIP_ISAL, 2}, {SVC_GZIP_ISAL, 3}, {SVC_GZIP_LIBDEFLATE, 1},
		{SVC_GZIP_LIBDEFLATE, 12},
	};
	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		size_t zn = 0, back_n = 0;
		uint8_t *z = gzip_bytes(cases[i].lib, cases[i].level, in, n, &zn);
		REQUIRE(z);
		CHECK(zn < n / 2);
		void *back = NULL;
		CHECK(svc_gunzip(z, zn, n, &back, &back_n) == SVC_OK);
		CHECK(back && back_n == n && memcmp(back, in, n) == 0);
		free(back);
		free(z);
	}
	free(in);
}

struct job {
	const uint8_t *in;
	size_t n;
	uint8_t *out;
	size_t out_n;
};

/*
 * On a new thread: first leaves a freed block of an ISA-L stream's size
 * filled with 9s (a window of 2^9 bytes, as a uint16_t), where the thread's
 * first allocations then come from; then gzips job's input with ISA-L at
 * its default level.
 */
static void *gzip_on_dirty_thread(void *arg)
{
	struct job *j = arg;
	size_t words = sizeof(struct isal_zstream) / sizeof(uint16_t) + 64;
	uint16_t *dirt = malloc(words * sizeof(uint16_t));
	if (dirt) {
		for (size_t i = 0; i < words; i++)
			dirt[i] = 9;
		free(dirt);
	}
	j->out = gzip_bytes(SVC_GZIP_ISAL, SVC_GZIP_LEVEL_DEFAULT, j->in, j->n, &j->out_n);
	return NULL;
}

TEST(isal_gzip_is_the_same_from_every_thread)
{
	size_t n;
	uint8_t *in = sample(&n);
	REQUIRE(in);
	struct job here = {.in = in, .n = n};
	here.out = gzip_bytes(SVC_GZIP_ISAL, SVC_GZIP_LEVEL_DEFAULT, in, n, &here.out_n);
	REQUIRE(here.out);
	for (int t = 0; t < 4; t++) {
		struct job j = {.in = in, .n = n};
		pthread_t th;
		REQUIRE(pthread_create(&th, NULL, gzip_on_dirty_thread, &j) == 0);
		pthread_join(th, NULL);
		REQUIRE(j.out);
		CHECK_EQ_U(j.out_n, here.out_n);
		CHECK(j.out_n == here.out_n && memcmp(j.out, here.out, here.out_n) == 0);
		free(j.out);
	}
	free(here.out);
	free(in);
}

TEST_MAIN()
