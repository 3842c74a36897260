// SPDX-License-Identifier: Apache-2.0
/*
 * svc_conns_read: reading a request's bytes past libevent's 4 KiB a turn
 * (svc_server_impl.h). svc_conns' input callback calls it while libevent's
 * own read is being added to the connection's input buffer: the bytes read
 * here join that buffer before evhttp parses it, so evhttp sees one larger
 * read and the cap and deadline logic counts them like any other.
 */
#include <errno.h>
#include <stddef.h>

#include <sys/uio.h>

#include <event2/buffer.h>
#include <event2/bufferevent.h>

#include "service/http/svc_server_impl.h"

size_t svc_conns_read_more(struct bufferevent *bev, struct evbuffer *buf, uint64_t want)
{
	if (want > SVC_CONNS_READ_MORE_MAX)
		want = SVC_CONNS_READ_MORE_MAX;
	evutil_socket_t fd = bufferevent_getfd(bev);
	if (fd < 0 || want == 0)
		return 0;
	struct evbuffer_iovec v[2];
	int n = evbuffer_reserve_space(buf, (ev_ssize_t)want, v, 2);
	if (n <= 0)
		return 0;
	struct iovec io[2];
	size_t left = (size_t)want;
	int k = 0;
	for (; k < n && left; k++) {
		size_t len = v[k].iov_len < left ? v[k].iov_len : left;
		io[k].iov_base = v[k].iov_base;
		io[k].iov_len = len;
		left -= len;
	}
	ssize_t got;
	do
		got = readv(fd, io, k);
	while (got < 0 && errno == EINTR);
	if (got <= 0) {
		evbuffer_commit_space(buf, v, 0);
		return 0;
	}
	size_t rest = (size_t)got;
	int used = 0;
	for (; used < k && rest; used++) {
		if (v[used].iov_len > rest)
			v[used].iov_len = rest;
		rest -= v[used].iov_len;
	}
	evbuffer_commit_space(buf, v, used);
	return (size_t)got;
}
