// SPDX-License-Identifier: Apache-2.0
/*
 * svc_conns_h2: how svc_conns.c hands a connection that opened with HTTP/2's
 * preface from evhttp to the HTTP/2 server (svc_h2_impl.h): spotting the
 * preface, and taking the socket out of evhttp's hands (svc_server_impl.h).
 */
#include <fcntl.h>
#include <string.h>
#include <unistd.h>

#include <sys/socket.h>

#include <event2/buffer.h>
#include <event2/bufferevent.h>
#include <event2/http.h>

#include "service/http/svc_server_impl.h"

int svc_conns_preface(struct evbuffer *buf)
{
	/* "PRI " is no HTTP/1.1 method: the preface's first 4 bytes decide. */
	static const char pri[4] = "PRI ";
	char head[4];
	size_t n = evbuffer_get_length(buf);
	size_t k = n < 4 ? n : 4;
	if (evbuffer_copyout(buf, head, k) < 0 || memcmp(head, pri, k) != 0)
		return -1;
	return n < 4 ? 0 : 1;
}

int svc_conns_take_socket(struct bufferevent *bev, struct evhttp_connection *evcon)
{
	evutil_socket_t fd = bufferevent_getfd(bev);
	/* The socket leaves evhttp's bufferevent (its events too) and moves to a
	 * descriptor of its own; the number evhttp knows gets an unconnected
	 * socket for evhttp to shut down (libevent 2.1 keeps its own copy of the
	 * number), closed here. */
	bufferevent_setfd(bev, -1);
	int own = fd >= 0 ? fcntl(fd, F_DUPFD_CLOEXEC, 0) : -1;
	int dummy = own >= 0 ? socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0) : -1;
	if (dummy >= 0) {
		dup3(dummy, fd, O_CLOEXEC);
		close(dummy);
	} else if (own >= 0) {
		close(own);
		own = -1;
	}
	evhttp_connection_free(evcon);
	if (fd >= 0)
		close(fd);  /* the unconnected one; evhttp only shut it down */
	return own;
}
