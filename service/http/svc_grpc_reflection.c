// SPDX-License-Identifier: Apache-2.0
/*
 * svc_grpc_reflection: gRPC server reflection (grpc.reflection.v1 and
 * v1alpha, ServerReflectionInfo: one answer per request, on a stream that
 * stays open; svc_h2_stream.c carries it), so grpcurl and buf curl call our
 * methods without the .proto files. The descriptors are the FileDescriptorSet
 * of proto/symbolizer (with its imports) that the build embeds
 * (svc_grpc_embed.cmake); a service added there is listed with no change
 * here. Answers: list_services (the services of our own files: those under
 * proto/symbolizer, not the imported OTLP files' ProfilesService, which is not
 * served), file_by_filename and file_containing_symbol (the file and its
 * imports, transitively), an error_response (NOT_FOUND, UNIMPLEMENTED)
 * for the rest. The messages are read and written by hand (a few fields).
 */
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <event2/buffer.h>

#include "service/http/svc_grpc_impl.h"

extern const unsigned char svc_grpc_descriptor_set[];
extern const size_t svc_grpc_descriptor_set_len;

#define MAX_FILES 32
#define MAX_DEPS 16
#define MAX_SYMBOLS 128

typedef struct span {
	const uint8_t *p;
	size_t n;
} span;

typedef struct file {
	span bytes, name, package;
	span deps[MAX_DEPS];
	size_t n_deps;
	span symbols[MAX_SYMBOLS];   /* top-level messages, enums, services */
	size_t n_symbols;
	span services[8];
	size_t n_services;
} file;

static file files[MAX_FILES];
static size_t n_files;
static pthread_once_t once = PTHREAD_ONCE_INIT;

/* ---- the wire ---- */

static bool varint(const uint8_t *p, size_t n, size_t *i, uint64_t *v)
{
	*v = 0;
	for (int shift = 0; shift < 64; shift += 7) {
		if (*i >= n)
			return false;
		uint8_t b = p[(*i)++];
		*v |= (uint64_t)(b & 0x7f) << shift;
		if (!(b & 0x80))
			return true;
	}
	return false;
}

/* The next field of p: its number and, for a length-delimited one, its
 * bytes (others skipped, val set). False at the end or on malformed bytes. */
static bool next(const uint8_t *p, size_t n, size_t *i, uint32_t *field, span *s, bool *ok)
{
	*ok = true;
	if (*i >= n)
		return false;
	uint64_t key, v;
	if (!varint(p, n, i, &key))
		return *ok = false;
	*field = (uint32_t)(key >> 3);
	s->p = NULL, s->n = 0;
	switch (key & 7) {
	case 0:
		return varint(p, n, i, &v) || (*ok = false);
	case 1:
	case 5: {
		size_t w = (key & 7) == 1 ? 8 : 4;
		if (n - *i < w)
			return *ok = false;
		*i += w;
		return true;
	}
	case 2:
		if (!varint(p, n, i, &v) || v > n - *i)
			return *ok = false;
		s->p = p + *i, s->n = (size_t)v;
		*i += (size_t)v;
		return true;
	default:
		return *ok = false;
	}
}

/* The name (field 1) of a DescriptorProto, EnumDescriptorProto or service. */
static span name_of(span msg)
{
	size_t i = 0;
	uint32_t f;
	span s, none = {NULL, 0};
	bool ok;
	while (next(msg.p, msg.n, &i, &f, &s, &ok))
		if (f == 1 && s.p)
			return s;
	return none;
}

static void index_file(span bytes)
{
	if (n_files == MAX_FILES)
		return;
	file *fl = &files[n_files++];
	memset(fl, 0, sizeof(*fl));
	fl->bytes = bytes;
	size_t i = 0;
	uint32_t f;
	span s;
	bool ok;
	while (next(bytes.p, bytes.n, &i, &f, &s, &ok)) {
		if (!s.p)
			continue;
		if (f == 1)
			fl->name = s;
		else if (f == 2)
			fl->package = s;
		else if (f == 3 && fl->n_deps < MAX_DEPS)
			fl->deps[fl->n_deps++] = s;
		else if ((f == 4 || f == 5 || f == 6) && fl->n_symbols < MAX_SYMBOLS)
			fl->symbols[fl->n_symbols++] = name_of(s);
		if (f == 6 && fl->n_services < 8)
			fl->services[fl->n_services++] = name_of(s);
	}
}

static void load(void)
{
	size_t i = 0;
	uint32_t f;
	span s;
	bool ok;
	while (next(svc_grpc_descriptor_set, svc_grpc_descriptor_set_len, &i, &f, &s, &ok))
		if (f == 1 && s.p)
			index_file(s);
}

/* ---- lookups ---- */

/* A file of proto/symbolizer (whose services we serve), not an import. */
static bool is_ours(const file *fl)
{
	static const char dir[] = "symbolizer/";
	return fl->name.n > sizeof(dir) - 1 && memcmp(fl->name.p, dir, sizeof(dir) - 1) == 0;
}

static file *by_name(span name)
{
	for (size_t i = 0; i < n_files; i++)
		if (files[i].name.n == name.n && memcmp(files[i].name.p, name.p, name.n) == 0)
			return &files[i];
	return NULL;
}

/* "pkg.Name", "pkg.Name.Nested" or "pkg.Service.Method". */
static file *by_symbol(span sym)
{
	for (size_t i = 0; i < n_files; i++) {
		file *fl = &files[i];
		size_t pl = fl->package.n;
		if (sym.n <= pl + 1 || memcmp(sym.p, fl->package.p, pl) != 0 || sym.p[pl] != '.')
			continue;
		const uint8_t *rest = sym.p + pl + 1;
		size_t rn = sym.n - pl - 1;
		for (size_t k = 0; k < fl->n_symbols; k++) {
			span nm = fl->symbols[k];
			if (nm.n && rn >= nm.n && memcmp(rest, nm.p, nm.n) == 0 &&
			    (rn == nm.n || rest[nm.n] == '.'))
				return fl;
		}
	}
	return NULL;
}

/* ---- the answer ---- */

static void put_varint(struct evbuffer *b, uint64_t v)
{
	uint8_t buf[10];
	int n = 0;
	do {
		buf[n++] = (uint8_t)((v & 0x7f) | (v > 0x7f ? 0x80 : 0));
		v >>= 7;
	} while (v);
	evbuffer_add(b, buf, (size_t)n);
}

static void put_bytes(struct evbuffer *b, uint32_t field, const void *p, size_t n)
{
	put_varint(b, (uint64_t)field << 3 | 2);
	put_varint(b, n);
	evbuffer_add(b, p, n);
}

/* The field as a nested message from the bytes of inner (drained). */
static void put_msg(struct evbuffer *b, uint32_t field, struct evbuffer *inner)
{
	size_t n = evbuffer_get_length(inner);
	put_varint(b, (uint64_t)field << 3 | 2);
	put_varint(b, n);
	evbuffer_add_buffer(b, inner);
}

/* The file and its imports (each once) as FileDescriptorResponse bytes. */
static void add_with_deps(struct evbuffer *b, file *fl, bool *sent)
{
	size_t idx = (size_t)(fl - files);
	if (sent[idx])
		return;
	sent[idx] = true;
	put_bytes(b, 1, fl->bytes.p, fl->bytes.n);
	for (size_t i = 0; i < fl->n_deps; i++) {
		file *d = by_name(fl->deps[i]);
		if (d)
			add_with_deps(b, d, sent);
	}
}

static void error_response(struct evbuffer *inner, int code, const char *msg)
{
	put_varint(inner, 1 << 3 | 0);
	put_varint(inner, (uint64_t)code);
	put_bytes(inner, 2, msg, strlen(msg));
}

bool svc_grpc_reflection_answer(const uint8_t *req, size_t len, struct evbuffer *out)
{
	pthread_once(&once, load);
	size_t i = 0;
	uint32_t f;
	span s, host = {NULL, 0};
	bool ok, asked = false;
	struct evbuffer *inner = evbuffer_new();
	if (!inner)
		return false;
	uint32_t kind = 7;  /* of the answer: error_response */
	while (next(req, len, &i, &f, &s, &ok)) {
		if (f == 1 && s.p) {
			host = s;
			continue;
		}
		if (f < 3 || f > 7 || asked)
			continue;
		asked = true;
		file *fl = NULL;
		if (f == 7) {  /* list_services */
			kind = 6;
			for (size_t k = 0; k < n_files; k++) {
				for (size_t j = 0; is_ours(&files[k]) && j < files[k].n_services; j++) {
					struct evbuffer *svc = evbuffer_new();
					if (!svc)
						continue;
					char full[256];
					int n = snprintf(full, sizeof(full), "%.*s.%.*s",
							 (int)files[k].package.n,
							 (const char *)files[k].package.p,
							 (int)files[k].services[j].n,
							 (const char *)files[k].services[j].p);
					put_bytes(svc, 1, full, n > 0 && (size_t)n < sizeof(full) ? (size_t)n : 0);
					put_msg(inner, 1, svc);
					evbuffer_free(svc);
				}
			}
		} else if ((f == 3 || f == 4) && s.p &&
			   (fl = f == 3 ? by_name(s) : by_symbol(s)) != NULL) {
			bool sent[MAX_FILES] = {false};
			kind = 4;
			add_with_deps(inner, fl, sent);
		} else if (f == 3 || f == 4) {
			error_response(inner, 5, f == 3 ? "no such file" : "no such symbol");
		} else {
			error_response(inner, 12, "extensions are not served");
		}
	}
	if (!ok || !asked) {
		evbuffer_drain(inner, evbuffer_get_length(inner));
		kind = 7;
		error_response(inner, 3, ok ? "the request asks nothing" : "malformed request");
	}
	if (host.p)
		put_bytes(out, 1, host.p, host.n);
	put_bytes(out, 2, req, len);
	put_msg(out, kind, inner);
	evbuffer_free(inner);
	return true;
}
