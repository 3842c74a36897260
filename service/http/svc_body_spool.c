// SPDX-License-Identifier: Apache-2.0
/*
 * svc_body_spool: an upload's body on its way in (svc_server_impl.h). Once a
 * request's head says it is an authorized upload (svc_request_head.c,
 * body_cap), its bytes are counted against the budget of uploads in flight
 * (--upload-memory-bytes; over it: 503 and Retry-After before a byte of the
 * body is read), and a body with a Content-Length is written, as it arrives,
 * to an unlinked file of DATA/tmp (svc_spool.h, the downloads' spool) instead
 * of piling up in evhttp's buffer. The bytes are taken out of the
 * connection's input buffer before evhttp looks at them; when the last one
 * is in the file, the whole body goes back in their place as one file-backed
 * (mapped) segment, which evhttp moves to the request's input buffer without
 * copying it, and the upload room reads it from the mapping (evbuffer_pullup
 * of one segment is the segment). The file goes with the request (or the
 * connection, when the client leaves mid-body): nothing is left in DATA/tmp,
 * a kill -9 included. A chunked body is not spooled (evhttp reads its
 * framing): it counts the whole --max-upload-bytes in the budget instead.
 */
#include "service/http/svc_server_impl.h"

#include <errno.h>
#include <stdio.h>
#include <unistd.h>

#include <sys/socket.h>

#include <event2/buffer.h>

#include "base/base_expo.h"
#include "service/fetch/svc_spool.h"

void svc_body_spool_init(svc_body_spool *sp)
{
	sp->fd = -1;
	sp->want = sp->got = sp->reserved = 0;
}

int svc_body_begin(svc_upload_gate *g, svc_body_spool *sp, const svc_head_scan *h, uint64_t cap)
{
	uint64_t want = h->has_length ? h->content_length : cap;
	/* One upload is always let in, however large: the budget bounds the rest. */
	if (g->in_flight && g->budget && g->in_flight + want > g->budget) {
		g->refused_busy++;
		return 503;
	}
	g->in_flight += want;
	sp->reserved = want;
	if (!h->has_length || h->content_length == 0 || !g->dir)
		return 0;
	if ((sp->fd = svc_spool_open(g->dir)) < 0) {
		g->refused_spool++;
		return 507;
	}
	sp->want = h->content_length;
	sp->got = 0;
	return 0;
}

void svc_body_end(svc_upload_gate *g, svc_body_spool *sp)
{
	g->in_flight -= sp->reserved < g->in_flight ? sp->reserved : g->in_flight;
	if (sp->fd >= 0)
		close(sp->fd);
	svc_body_spool_init(sp);
}

/* Writes the first n bytes of buf to the file and drains them; 0 or errno. */
static int write_out(svc_body_spool *sp, struct evbuffer *buf, size_t n)
{
	while (n) {
		struct evbuffer_iovec v[16];
		int k = evbuffer_peek(buf, (ev_ssize_t)n, NULL, v, 16);
		size_t done = 0;
		for (int i = 0; i < k && i < 16 && done < n; i++) {
			size_t m = v[i].iov_len < n - done ? v[i].iov_len : n - done;
			int e = svc_spool_write(sp->fd, v[i].iov_base, m);
			if (e)
				return e;
			done += m;
		}
		if (done == 0)
			return EIO;
		evbuffer_drain(buf, done);
		sp->got += done;
		n -= done;
	}
	return 0;
}

/* The whole body as one mapped segment of the file, appended to out (which
 * then owns the file). */
static int put_back(svc_body_spool *sp, struct evbuffer *out)
{
	struct evbuffer_file_segment *seg =
		evbuffer_file_segment_new(sp->fd, 0, (ev_off_t)sp->want, EVBUF_FS_CLOSE_ON_FREE);
	if (!seg)
		return errno ? errno : ENOMEM;
	sp->fd = -1;
	int rc = evbuffer_add_file_segment(out, seg, 0, (ev_off_t)sp->want);
	evbuffer_file_segment_free(seg); /* the buffer's chain keeps its reference */
	return rc == 0 ? 0 : ENOMEM;
}

int svc_body_take(svc_body_spool *sp, struct evbuffer *buf, size_t from)
{
	size_t len = evbuffer_get_length(buf);
	if (sp->fd < 0 || from >= len)
		return 0;
	struct evbuffer *front = evbuffer_new();
	if (!front)
		return 507;
	/* What comes before the body (its head, not parsed by evhttp yet) stays
	 * in front of it; bytes after it (a pipelined request) stay after it. */
	evbuffer_remove_buffer(buf, front, from);
	uint64_t left = sp->want - sp->got;
	size_t n = len - from < left ? len - from : (size_t)left;
	int e = write_out(sp, buf, n);
	if (!e && sp->got == sp->want)
		e = put_back(sp, front);
	evbuffer_prepend_buffer(buf, front);
	evbuffer_free(front);
	if (e)
		sp->err = e;
	return e ? 507 : 0;
}

void svc_send_status(int fd, int status)
{
	const char *text = status == 503   ? "503 Service Unavailable\r\nRetry-After: 5"
			   : status == 507 ? "507 Insufficient Storage"
					   : "413 Payload Too Large";
	char r[160];
	int n = snprintf(r, sizeof(r),
			 "HTTP/1.1 %s\r\nConnection: close\r\nContent-Length: 0\r\n\r\n", text);
	if (fd >= 0 && n > 0 && send(fd, r, (size_t)n, MSG_NOSIGNAL | MSG_DONTWAIT) < 0)
		(void)errno;
}

void svc_upload_gate_render(const svc_upload_gate *g, base_buf *b)
{
	base_expo_family(b, "symbolizer_upload_inflight_bytes", "gauge",
			 "Bytes of the uploads being received or stored (their Content-Length).");
	base_expo_u64(b, "symbolizer_upload_inflight_bytes", "", g->in_flight);
	base_expo_family(b, "symbolizer_upload_inflight_bytes_max", "gauge",
			 "The budget of uploads in flight (--upload-memory-bytes).");
	base_expo_u64(b, "symbolizer_upload_inflight_bytes_max", "", g->budget);
	base_expo_family(b, "symbolizer_upload_bodies_refused_total", "counter",
			 "Upload bodies refused from their head: the budget was full (busy, "
			 "503), or no spool file in DATA/tmp (spool, 507).");
	base_expo_u64(b, "symbolizer_upload_bodies_refused_total", "reason=\"busy\"",
		      g->refused_busy);
	base_expo_u64(b, "symbolizer_upload_bodies_refused_total", "reason=\"spool\"",
		      g->refused_spool);
}
