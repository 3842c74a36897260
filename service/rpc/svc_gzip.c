// SPDX-License-Identifier: Apache-2.0
/*
 * svc_gzip: gzip of responses with ISA-L or libdeflate (svc_gzip.h). A
 * thread's compressors live in one struct behind a pthread key: libdeflate's
 * (~100s of KB to set up, for one level) and ISA-L's stream with its level
 * buffer (none at level 0, ~280 KB at level 1), each made when the thread
 * first uses that library and level.
 */
#include "service/rpc/svc_gzip.h"

#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include <pthread.h>

#include <event2/buffer.h>
#include <event2/util.h>
#include <isa-l/igzip_lib.h>
#include <libdeflate.h>

/* One thread's compressors. */
struct gz_thread {
	struct libdeflate_compressor *ld;
	int ld_level;           /* ld's level */
	struct isal_zstream *zs;
	uint8_t *level_buf;     /* level_buf_size bytes (the largest level used) */
	uint32_t level_buf_size;
};

/* ISA-L's level buffer for each of its levels (the library's defaults). */
static const uint32_t isal_level_buf[] = {
	ISAL_DEF_LVL0_DEFAULT, ISAL_DEF_LVL1_DEFAULT, ISAL_DEF_LVL2_DEFAULT,
	ISAL_DEF_LVL3_DEFAULT,
};
#define ISAL_LEVELS ((int)(sizeof(isal_level_buf) / sizeof(isal_level_buf[0])))

static pthread_key_t gz_key;
static pthread_once_t gz_once = PTHREAD_ONCE_INIT;
static bool gz_key_ok;

static void gz_thread_free(void *arg)
{
	struct gz_thread *t = arg;
	libdeflate_free_compressor(t->ld);
	free(t->zs);
	free(t->level_buf);
	free(t);
}

static void gz_key_init(void)
{
	gz_key_ok = pthread_key_create(&gz_key, gz_thread_free) == 0;
}

static struct gz_thread *gz_thread(void)
{
	pthread_once(&gz_once, gz_key_init);
	if (!gz_key_ok)
		return NULL;
	struct gz_thread *t = pthread_getspecific(gz_key);
	if (t)
		return t;
	t = calloc(1, sizeof(*t));
	if (t && pthread_setspecific(gz_key, t) != 0) {
		free(t);
		return NULL;
	}
	return t;
}

bool svc_gzip_library_parse(const char *name, svc_gzip_library *lib)
{
	if (!strcmp(name, "isal"))
		*lib = SVC_GZIP_ISAL;
	else if (!strcmp(name, "libdeflate"))
		*lib = SVC_GZIP_LIBDEFLATE;
	else
		return false;
	return true;
}

const char *svc_gzip_library_name(svc_gzip_library lib)
{
	return lib == SVC_GZIP_LIBDEFLATE ? "libdeflate" : "isal";
}

bool svc_gzip_level_ok(svc_gzip_library lib, int level)
{
	if (level == SVC_GZIP_LEVEL_DEFAULT)
		return true;
	return lib == SVC_GZIP_LIBDEFLATE ? level >= 0 && level <= 12
					  : level >= 0 && level < ISAL_LEVELS;
}

int svc_gzip_level(svc_gzip_library lib, int level)
{
	if (level != SVC_GZIP_LEVEL_DEFAULT)
		return level;
	/* ISA-L's 0 (its fastest LZ77) gzips a SymbolizeResponse in about a
	 * seventh less time than its 1, for a stream about a tenth larger. */
	return lib == SVC_GZIP_LIBDEFLATE ? 1 : 0;
}

/* libdeflate's gzip appended to buf; false: out of memory. */
static bool with_libdeflate(struct gz_thread *t, int level, const void *in, size_t in_size,
			    struct evbuffer *buf)
{
	if (t->ld && t->ld_level != level) {
		libdeflate_free_compressor(t->ld);
		t->ld = NULL;
	}
	if (!t->ld) {
		if (!(t->ld = libdeflate_alloc_compressor(level)))
			return false;
		t->ld_level = level;
	}
	size_t bound = libdeflate_gzip_compress_bound(t->ld, in_size);
	if (bound > (size_t)EV_SSIZE_MAX)
		return false;
	struct evbuffer_iovec v;
	if (evbuffer_reserve_space(buf, (ev_ssize_t)bound, &v, 1) != 1)
		return false;
	size_t n = libdeflate_gzip_compress(t->ld, in, in_size, v.iov_base, v.iov_len);
	v.iov_len = n;
	evbuffer_commit_space(buf, &v, 1);
	return n != 0;
}

/*
 * ISA-L's stateless deflate: the whole input at once, into room for its
 * worst case (stored blocks: 5 bytes per 64 KiB, the gzip header and
 * trailer; a margin over that). 0: it did not fit (or failed), nothing kept.
 */
static int with_isal(struct gz_thread *t, int level, const void *in, size_t in_size,
		     struct evbuffer *buf)
{
	if (!t->zs && !(t->zs = calloc(1, sizeof(*t->zs))))
		return -1;
	uint32_t need = isal_level_buf[level];
	if (need > t->level_buf_size) {
		uint8_t *lb = malloc(need);
		if (!lb)
			return -1;
		free(t->level_buf);
		t->level_buf = lb;
		t->level_buf_size = need;
	}
	size_t bound = in_size + in_size / 256 + 1024;
	struct evbuffer_iovec v;
	if (evbuffer_reserve_space(buf, (ev_ssize_t)bound, &v, 1) != 1)
		return -1;
	struct isal_zstream *s = t->zs;
	isal_deflate_stateless_init(s);
	/* ISA-L 2.30 (Debian 12's) leaves the window unset here (2.31 sets it):
	 * a stream in reused memory compressed with whatever window its old
	 * bytes gave, kept for the thread's life. 0: the default, 32 KiB. */
	s->hist_bits = 0;
	s->level = (uint32_t)level;
	s->level_buf = need ? t->level_buf : NULL;
	s->level_buf_size = need;
	s->gzip_flag = IGZIP_GZIP;
	s->end_of_stream = 1;
	s->flush = NO_FLUSH;
	s->next_in = (uint8_t *)(uintptr_t)in;
	s->avail_in = (uint32_t)in_size;
	s->next_out = v.iov_base;
	s->avail_out = (uint32_t)(v.iov_len < UINT32_MAX ? v.iov_len : UINT32_MAX);
	if (isal_deflate_stateless(s) != COMP_OK || s->avail_in != 0)
		return 0;  /* nothing committed: the reserved room is dropped */
	v.iov_len = s->total_out;
	evbuffer_commit_space(buf, &v, 1);
	return 1;
}

bool svc_gzip_with(svc_gzip_library lib, int level, const void *in, size_t in_size,
		   struct evbuffer *buf)
{
	struct gz_thread *t = gz_thread();
	if (!t || !svc_gzip_level_ok(lib, level))
		return false;
	level = svc_gzip_level(lib, level);
	if (lib == SVC_GZIP_ISAL) {
		if (in_size < UINT32_MAX - UINT32_MAX / 128) {
			int r = with_isal(t, level, in, in_size, buf);
			if (r != 0)
				return r > 0;
		}
		/* Past 4 GiB, or did not fit its room (never expected): libdeflate,
		 * exactly bounded. */
		level = svc_gzip_level(SVC_GZIP_LIBDEFLATE, SVC_GZIP_LEVEL_DEFAULT);
	}
	return with_libdeflate(t, level, in, in_size, buf);
}

bool svc_gzip(const void *in, size_t in_size, struct evbuffer *buf)
{
	return svc_gzip_with(SVC_GZIP_ISAL, SVC_GZIP_LEVEL_DEFAULT, in, in_size, buf);
}
