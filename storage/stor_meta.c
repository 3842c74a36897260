// SPDX-License-Identifier: Apache-2.0
/*
 * stor_meta: metadata records and the names of the store's enums (stor_meta.h).
 *
 * Record layout (little-endian): magic "SM", version, state, kind, alt_len,
 * 2 bytes padding, then u64 size, index_size, fetch_time, last_access,
 * neg_expiry (48 bytes), then alt_id[alt_len], then source and last_error,
 * each as a u16 length and its bytes, then (only when there is one) the u64
 * size of the type-layout blob: a record without it reads as 0.
 */
#include "storage/stor_meta.h"

#include <stdarg.h>
#include <stdio.h>
#include <string.h>

#define META_MAGIC0 'S'
#define META_MAGIC1 'M'
#define META_VERSION 1

stor_errc stor_set_err(stor_error *err, stor_errc code, const char *fmt, ...)
{
	if (err) {
		va_list ap;
		va_start(ap, fmt);
		vsnprintf(err->msg, sizeof(err->msg), fmt, ap);
		va_end(ap);
		err->code = code;
	}
	return code;
}

const char *stor_errc_name(stor_errc code)
{
	switch (code) {
	case STOR_OK: return "ok";
	case STOR_E_NOMEM: return "nomem";
	case STOR_E_INVALID: return "invalid";
	case STOR_E_IO: return "io";
	case STOR_E_NOT_FOUND: return "not_found";
	case STOR_E_CORRUPT: return "corrupt";
	case STOR_E_TOO_LARGE: return "too_large";
	case STOR_E_EXISTS: return "exists";
	case STOR_E_NOSPACE: return "no_space";
	case STOR_E_STALE: return "stale";
	}
	return "unknown";
}

const char *stor_state_name(stor_state s)
{
	switch (s) {
	case STOR_STATE_NONE: return "none";
	case STOR_STATE_PRESENT: return "present";
	case STOR_STATE_NOT_FOUND: return "not_found";
	case STOR_STATE_ERROR: return "error";
	case STOR_STATE_TOO_LARGE: return "too_large";
	}
	return "unknown";
}

const char *stor_kind_name(stor_kind k)
{
	switch (k) {
	case STOR_KIND_NONE: return "none";
	case STOR_KIND_DEBUGINFO: return "debuginfo";
	case STOR_KIND_EXECUTABLE: return "executable";
	}
	return "unknown";
}

static void put_u64(uint8_t *p, uint64_t v)
{
	for (int i = 0; i < 8; i++)
		p[i] = (uint8_t)(v >> (8 * i));
}

static uint64_t get_u64(const uint8_t *p)
{
	uint64_t v = 0;
	for (int i = 0; i < 8; i++)
		v |= (uint64_t)p[i] << (8 * i);
	return v;
}

/* Appends a u16 length and a string of at most max - 1 bytes. */
static size_t put_str(uint8_t *buf, size_t off, const char *s, size_t max)
{
	size_t len = strnlen(s, max - 1);
	buf[off++] = (uint8_t)(len & 0xff);
	buf[off++] = (uint8_t)(len >> 8);
	memcpy(buf + off, s, len);
	return off + len;
}

/* Reads a u16-prefixed string at *off into out (max bytes, NUL included). */
static bool get_str(const uint8_t *p, size_t n, size_t *off, char *out, size_t max)
{
	if (n - *off < 2)
		return false;
	size_t len = p[*off] | (size_t)p[*off + 1] << 8;
	*off += 2;
	if (len >= max || n - *off < len)
		return false;
	memcpy(out, p + *off, len);
	out[len] = '\0';
	*off += len;
	return true;
}

size_t stor_meta_encode(const stor_meta *m, uint8_t *buf)
{
	uint8_t alt_len = m->alt_len <= STOR_ID_MAX ? m->alt_len : 0;
	memset(buf, 0, STOR_META_FIXED);
	buf[0] = META_MAGIC0;
	buf[1] = META_MAGIC1;
	buf[2] = META_VERSION;
	buf[3] = (uint8_t)m->state;
	buf[4] = (uint8_t)m->kind;
	buf[5] = alt_len;
	put_u64(buf + 8, m->size);
	put_u64(buf + 16, m->index_size);
	put_u64(buf + 24, (uint64_t)m->fetch_time);
	put_u64(buf + 32, (uint64_t)m->last_access);
	put_u64(buf + 40, (uint64_t)m->neg_expiry);
	size_t off = STOR_META_FIXED;
	memcpy(buf + off, m->alt_id, alt_len);
	off += alt_len;
	off = put_str(buf, off, m->source, STOR_SOURCE_MAX);
	off = put_str(buf, off, m->last_error, STOR_ERROR_MAX);
	if (m->layout_size) {
		put_u64(buf + off, m->layout_size);
		off += 8;
	}
	return off;
}

stor_errc stor_meta_decode(const uint8_t *p, size_t n, stor_meta *m, stor_error *err)
{
	memset(m, 0, sizeof(*m));
	if (n < STOR_META_FIXED + 4 || p[0] != META_MAGIC0 || p[1] != META_MAGIC1)
		return stor_set_err(err, STOR_E_CORRUPT,
				    "store: metadata record of %zu bytes is malformed", n);
	if (p[2] != META_VERSION)
		return stor_set_err(err, STOR_E_CORRUPT, "store: metadata version %u unknown", p[2]);
	if (p[3] > STOR_STATE_TOO_LARGE || p[4] > STOR_KIND_EXECUTABLE || p[5] > STOR_ID_MAX)
		return stor_set_err(err, STOR_E_CORRUPT, "store: metadata fields out of range");
	m->state = (stor_state)p[3];
	m->kind = (stor_kind)p[4];
	m->alt_len = p[5];
	m->size = get_u64(p + 8);
	m->index_size = get_u64(p + 16);
	m->fetch_time = (int64_t)get_u64(p + 24);
	m->last_access = (int64_t)get_u64(p + 32);
	m->neg_expiry = (int64_t)get_u64(p + 40);
	size_t off = STOR_META_FIXED;
	if (n - off < (size_t)m->alt_len + 2)
		return stor_set_err(err, STOR_E_CORRUPT, "store: metadata truncated");
	memcpy(m->alt_id, p + off, m->alt_len);
	off += m->alt_len;
	if (!get_str(p, n, &off, m->source, STOR_SOURCE_MAX))
		return stor_set_err(err, STOR_E_CORRUPT, "store: metadata source truncated");
	if (!get_str(p, n, &off, m->last_error, STOR_ERROR_MAX))
		return stor_set_err(err, STOR_E_CORRUPT, "store: metadata error text truncated");
	if (n - off == 8) {
		m->layout_size = get_u64(p + off);
		off += 8;
	}
	if (off != n)
		return stor_set_err(err, STOR_E_CORRUPT, "store: metadata has trailing bytes");
	return STOR_OK;
}
