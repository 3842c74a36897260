/*
 * bench_rpc: end-to-end load generator for symbolizerd's Symbolize RPC.
 *
 * N client threads, each with one blocking HTTP/1.1 keep-alive connection to
 * 127.0.0.1:PORT, send M Connect unary requests (POST
 * /symbolizer.v1.SymbolizerService/Symbolize, application/proto) of B
 * addresses each, one request at a time per client, and time each request from
 * the first byte written to the last byte of the response read. The addresses
 * come from ADDR_FILE (one hex ELF address per line, as bench_symbolize.sh
 * writes them); each request is a random slice of it. Request bodies are
 * encoded with protobuf-c before the clock starts; every response is read
 * inside the clock (a real client reads its answers) to check the mapping
 * status and count the frames (Line entries): by a walk over the wire format
 * (default), or by protobuf-c's decoder (--decode protobuf-c), which costs the
 * client more CPU than the call costs the daemon.
 *
 * Prints one `key value` line per figure (frames/s, requests/s, p50/p99/max
 * latency, client CPU), as bench_rpc.sh reads them. Not a test: no figure is
 * checked. With --warm it instead repeats one request until the mapping is OK
 * (the index is built and cached) and exits.
 *
 * usage: bench_rpc --port P --build-id HEX --addrs FILE [--clients N]
 *                  [--requests M] [--batch B] [--seed S]
 *                  [--decode walk|protobuf-c] [--gzip] [--warm]
 *
 * --gzip sends Accept-Encoding: gzip (as Connect clients do by default) and
 * inflates the gzipped responses, inside the clock.
 */
#include <arpa/inet.h>
#include <errno.h>
#include <inttypes.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <pthread.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <sys/uio.h>
#include <time.h>
#include <unistd.h>

#include "bench/bench_io.h"
#include "proto/symbolizer/v1/symbolizer.pb-c.h"
#include "service/rpc/svc_connect.h"
#include "service/rpc/svc_wire.h"

#define PATH "/symbolizer.v1.SymbolizerService/Symbolize"
#define MAX_HEADER 16384
#define MAX_BODY (512u << 20)
#define N_BODIES 32 /* distinct pre-encoded requests, cycled */

static void die(const char *fmt, ...) __attribute__((format(printf, 1, 2), noreturn));
static void die(const char *fmt, ...)
{
	va_list ap;
	va_start(ap, fmt);
	fputs("bench_rpc: ", stderr);
	vfprintf(stderr, fmt, ap);
	fputc('\n', stderr);
	va_end(ap);
	exit(1);
}

static double now(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

static uint64_t rng_next(uint64_t *s)
{
	/* splitmix64 */
	uint64_t z = (*s += 0x9e3779b97f4a7c15ull);
	z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
	z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
	return z ^ (z >> 31);
}

struct body {
	uint8_t *data;
	size_t len;
};

/* One request of BATCH addresses from POOL starting at START (wrapping). */
static struct body encode(const char *build_id, const uint64_t *pool, size_t n_pool, size_t start,
			  size_t batch, uint32_t max_wait_ms)
{
	Symbolizer__V1__Mapping m = SYMBOLIZER__V1__MAPPING__INIT;
	m.build_id = (char *)build_id;
	Symbolizer__V1__Mapping *mp = &m;
	Symbolizer__V1__Location *locs = calloc(batch, sizeof(*locs));
	Symbolizer__V1__Location **lp = calloc(batch, sizeof(*lp));
	if (!locs || !lp)
		die("out of memory");
	for (size_t i = 0; i < batch; i++) {
		Symbolizer__V1__Location l = SYMBOLIZER__V1__LOCATION__INIT;
		l.mapping_index = 0;
		l.address = pool[(start + i) % n_pool];
		locs[i] = l;
		lp[i] = &locs[i];
	}
	Symbolizer__V1__Options o = SYMBOLIZER__V1__OPTIONS__INIT;
	o.max_wait_ms = max_wait_ms;
	Symbolizer__V1__SymbolizeRequest r = SYMBOLIZER__V1__SYMBOLIZE_REQUEST__INIT;
	r.n_mappings = 1;
	r.mappings = &mp;
	r.n_locations = batch;
	r.locations = lp;
	r.options = &o;
	struct body b;
	b.len = symbolizer__v1__symbolize_request__get_packed_size(&r);
	b.data = malloc(b.len ? b.len : 1);
	if (!b.data)
		die("out of memory");
	symbolizer__v1__symbolize_request__pack(&r, b.data);
	free(locs);
	free(lp);
	return b;
}

struct conn {
	int fd;
	int port;
	char hdr[MAX_HEADER + 1];
	uint8_t *buf; /* bytes read past the header (body and beyond) */
	size_t buf_cap;
	size_t carry; /* bytes of the next response already read */
	uint64_t reconnects;
	bool gzipped;  /* the last response had Content-Encoding: gzip */
};

static bool accept_gzip; /* --gzip: requests carry Accept-Encoding: gzip */

static void conn_open(struct conn *c)
{
	c->fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
	if (c->fd < 0)
		die("socket: %s", strerror(errno));
	int one = 1;
	setsockopt(c->fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof(one));
	struct sockaddr_in a = {.sin_family = AF_INET, .sin_port = htons((uint16_t)c->port)};
	a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
	if (connect(c->fd, (struct sockaddr *)&a, sizeof(a)) != 0)
		die("connect 127.0.0.1:%d: %s", c->port, strerror(errno));
	c->carry = 0;
}

static void write_all(int fd, struct iovec *iov, int n)
{
	while (n > 0) {
		ssize_t w = writev(fd, iov, n);
		if (w < 0) {
			if (errno == EINTR)
				continue;
			die("write: %s", strerror(errno));
		}
		while (n > 0 && (size_t)w >= iov->iov_len) {
			w -= (ssize_t)iov->iov_len;
			iov++;
			n--;
		}
		if (n > 0) {
			iov->iov_base = (char *)iov->iov_base + w;
			iov->iov_len -= (size_t)w;
		}
	}
}

static void ensure(struct conn *c, size_t need)
{
	if (need <= c->buf_cap)
		return;
	size_t cap = c->buf_cap ? c->buf_cap : 1 << 16;
	while (cap < need)
		cap *= 2;
	c->buf = realloc(c->buf, cap);
	if (!c->buf)
		die("out of memory");
	c->buf_cap = cap;
}

static ssize_t rd(int fd, void *p, size_t n)
{
	for (;;) {
		ssize_t r = read(fd, p, n);
		if (r < 0 && errno == EINTR)
			continue;
		return r;
	}
}

/*
 * One exchange on the connection: sends BODY, reads the response into c->buf.
 * Returns the HTTP status and sets *body_len; 0 when the server closed the
 * connection before answering (the caller reconnects and retries).
 */
static int exchange(struct conn *c, const struct body *body, size_t *body_len, bool *closes)
{
	char head[256];
	int hl = snprintf(head, sizeof(head),
			  "POST " PATH " HTTP/1.1\r\nHost: 127.0.0.1:%d\r\n"
			  "Content-Type: application/proto\r\nConnect-Protocol-Version: 1\r\n"
			  "%sContent-Length: %zu\r\n\r\n",
			  c->port, accept_gzip ? "Accept-Encoding: gzip\r\n" : "", body->len);
	struct iovec iov[2] = {{head, (size_t)hl}, {body->data, body->len}};
	write_all(c->fd, iov, 2);

	/* Header: bytes up to \r\n\r\n; anything after belongs to the body. */
	size_t have = 0;
	char *end = NULL;
	ensure(c, MAX_HEADER);
	if (c->carry) {
		memcpy(c->hdr, c->buf, c->carry);
		have = c->carry;
		c->carry = 0;
		c->hdr[have] = 0;
		end = strstr(c->hdr, "\r\n\r\n");
	}
	while (!end) {
		if (have >= MAX_HEADER)
			die("response header over %d bytes", MAX_HEADER);
		ssize_t r = rd(c->fd, c->hdr + have, MAX_HEADER - have);
		if (r < 0)
			die("read: %s", strerror(errno));
		if (r == 0) {
			if (have == 0)
				return 0;
			die("connection closed in a response header");
		}
		have += (size_t)r;
		c->hdr[have] = 0;
		end = strstr(c->hdr, "\r\n\r\n");
	}
	size_t head_len = (size_t)(end - c->hdr) + 4;
	int status = 0;
	if (sscanf(c->hdr, "HTTP/1.%*d %d", &status) != 1)
		die("not an HTTP/1.x response: %.40s", c->hdr);
	size_t clen = SIZE_MAX;
	*closes = false;
	c->gzipped = false;
	for (char *p = strstr(c->hdr, "\r\n"); p && p < end; p = strstr(p + 2, "\r\n")) {
		char *l = p + 2;
		if (!strncasecmp(l, "content-length:", 15))
			clen = strtoull(l + 15, NULL, 10);
		else if (!strncasecmp(l, "content-encoding:", 17))
			c->gzipped = strncasecmp(l + 17 + strspn(l + 17, " "), "gzip", 4) == 0;
		else if (!strncasecmp(l, "transfer-encoding:", 18))
			die("chunked responses are not supported by this client");
		else if (!strncasecmp(l, "connection:", 11) && strcasestr(l, "close") &&
			 strcasestr(l, "close") < strstr(l, "\r\n"))
			*closes = true;
	}
	if (clen == SIZE_MAX)
		die("response without Content-Length (status %d)", status);
	if (clen > MAX_BODY)
		die("response body of %zu bytes", clen);
	size_t extra = have - head_len;
	ensure(c, clen > extra ? clen : extra);
	memcpy(c->buf, c->hdr + head_len, extra);
	size_t got = extra;
	while (got < clen) {
		ensure(c, clen);
		ssize_t r = rd(c->fd, c->buf + got, c->buf_cap - got);
		if (r < 0)
			die("read: %s", strerror(errno));
		if (r == 0)
			die("connection closed in a response body (%zu of %zu bytes)", got, clen);
		got += (size_t)r;
	}
	*body_len = clen;
	/* Pipelining is not used, so nothing should follow; keep it if it does. */
	if (got > clen) {
		c->carry = got - clen;
		memmove(c->buf, c->buf + clen, c->carry);
		if (c->carry > MAX_HEADER)
			die("unexpected %zu bytes after a response", c->carry);
	}
	return status;
}

struct outcome {
	uint64_t frames;
	uint64_t located; /* locations with at least one line */
	int status;       /* of the first mapping */
};

/* Every response decoded by protobuf-c (--decode protobuf-c). */
static struct outcome decode_pbc(const uint8_t *data, size_t len, size_t batch)
{
	struct outcome o = {0};
	Symbolizer__V1__SymbolizeResponse *r =
		symbolizer__v1__symbolize_response__unpack(NULL, len, data);
	if (!r)
		die("response is not a SymbolizeResponse (%zu bytes)", len);
	if (r->n_mappings != 1 || r->n_locations != batch)
		die("response has %zu mappings and %zu locations for 1 and %zu", r->n_mappings,
		    r->n_locations, batch);
	o.status = r->mappings[0]->status;
	for (size_t i = 0; i < r->n_locations; i++) {
		o.frames += r->locations[i]->n_lines;
		o.located += r->locations[i]->n_lines > 0;
	}
	symbolizer__v1__symbolize_response__free_unpacked(r, NULL);
	return o;
}

/* One field of a message at *p: its number, wire type and value (or bytes). */
static bool next_field(const uint8_t **p, const uint8_t *end, uint32_t *field,
		       uint64_t *v, const uint8_t **sub)
{
	uint64_t tag;
	if (!svc_wire_get_varint(p, end, &tag))
		return false;
	*field = (uint32_t)(tag >> 3);
	switch (tag & 7) {
	case SVC_WIRE_VARINT:
		*sub = NULL;
		return svc_wire_get_varint(p, end, v);
	case SVC_WIRE_LEN:
		if (!svc_wire_get_varint(p, end, v) || *v > (uint64_t)(end - *p))
			return false;
		*sub = *p;
		*p += *v;
		return true;
	default:
		return false;
	}
}

/*
 * A message without submessages (Function, Line, MappingResult): the sum of
 * its varints, and field 1's value in *first (0 when absent); strings (a
 * MappingResult's error) are stepped over.
 */
static uint64_t walk_scalars(const uint8_t *p, const uint8_t *end, const char *what,
			     uint64_t *first)
{
	uint64_t sum = 0;
	*first = 0;
	while (p < end) {
		uint32_t f;
		uint64_t x;
		const uint8_t *s;
		if (!next_field(&p, end, &f, &x, &s))
			die("bad %s in the response", what);
		if (s)
			continue;
		if (f == 1)
			*first = x;
		sum += x;
	}
	return sum;
}

/* A LocationResult: its number of Lines, each function_index checked. */
static uint64_t walk_location(const uint8_t *p, const uint8_t *end, size_t n_functions,
			      uint64_t *sink)
{
	uint64_t lines = 0;
	while (p < end) {
		uint32_t f;
		uint64_t x, function;
		const uint8_t *s;
		if (!next_field(&p, end, &f, &x, &s))
			die("bad LocationResult in the response");
		if (f != 1 || !s) {
			*sink += x;
			continue;
		}
		*sink += walk_scalars(s, s + x, "Line", &function);
		if (function >= n_functions)
			die("Line.function_index %" PRIu64 " of %zu functions", function, n_functions);
		lines++;
	}
	return lines;
}

/*
 * The default: a walk over the wire format that reads every field of the
 * response (each Line's function, line and column included) without building
 * objects, as a client with a fast generated decoder would; protobuf-c's
 * generic decoder costs the client more CPU than the daemon spends on the
 * call, and the client shares the daemon's 2 cores. The first response of
 * each client is also decoded by protobuf-c, and the two must agree.
 */
static struct outcome decode_walk(const uint8_t *data, size_t len, size_t batch)
{
	struct outcome o = {0};
	const uint8_t *p = data, *end = data + len, *sub;
	size_t n_strings = 0, n_functions = 0, n_locations = 0, n_mappings = 0;
	uint64_t sink = 0, first;
	while (p < end) {
		uint32_t field;
		uint64_t v;
		if (!next_field(&p, end, &field, &v, &sub))
			die("response is not a SymbolizeResponse (%zu bytes)", len);
		if (!sub)
			continue;
		if (field == 1) {
			n_strings++;
		} else if (field == 2) {
			sink += walk_scalars(sub, sub + v, "Function", &first);
			n_functions++;
		} else if (field == 3) {
			uint64_t lines = walk_location(sub, sub + v, n_functions, &sink);
			o.frames += lines;
			o.located += lines > 0;
			n_locations++;
		} else if (field == 4) {
			sink += walk_scalars(sub, sub + v, "MappingResult", &first);
			if (n_mappings++ == 0)
				o.status = (int)first;
		}
	}
	if (n_mappings != 1 || n_locations != batch || n_strings == 0)
		die("response has %zu mappings and %zu locations for 1 and %zu", n_mappings,
		    n_locations, batch);
	__asm__ volatile("" : : "r"(sink));
	return o;
}

static bool decode_with_pbc;

static struct outcome decode(const uint8_t *data, size_t len, size_t batch, bool first)
{
	if (decode_with_pbc)
		return decode_pbc(data, len, batch);
	struct outcome o = decode_walk(data, len, batch);
	if (first) {
		struct outcome q = decode_pbc(data, len, batch);
		if (q.frames != o.frames || q.located != o.located || q.status != o.status)
			die("protobuf-c and the wire walk disagree on a response");
	}
	return o;
}

struct shared {
	int port;
	int requests;
	size_t batch;
	const struct body *bodies;
	pthread_barrier_t start;
};

struct client {
	struct shared *sh;
	int id;
	double *lat; /* seconds, one per request */
	uint64_t frames, located, not_ok, reconnects;
	double t_end;
	double cpu; /* thread CPU seconds */
	pthread_t th;
};

static double thread_cpu(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

/* Inflates a gzipped body in c->buf (len bytes) and makes it c->buf. */
static void gunzip_body(struct conn *c, size_t *len)
{
	void *plain;
	size_t n;
	if (svc_gunzip(c->buf, *len, MAX_BODY, &plain, &n) != SVC_OK)
		die("response is not valid gzip, or inflates past %u bytes", MAX_BODY);
	free(c->buf);
	c->buf = plain;
	c->buf_cap = n;
	*len = n;
}

static int call(struct conn *c, const struct body *b, size_t *len)
{
	for (int attempt = 0;; attempt++) {
		bool closes = false;
		int st = exchange(c, b, len, &closes);
		if (st != 0 && c->gzipped)
			gunzip_body(c, len);
		if (st != 0) {
			if (closes) {
				close(c->fd);
				conn_open(c);
				c->reconnects++;
			}
			return st;
		}
		if (attempt == 3)
			die("server keeps closing the connection");
		close(c->fd);
		conn_open(c);
		c->reconnects++;
	}
}

static void *client_main(void *arg)
{
	struct client *cl = arg;
	struct shared *sh = cl->sh;
	struct conn c = {.port = sh->port};
	conn_open(&c);
	size_t len;
	/* One untimed exchange: connection set up, server and client warm. */
	int st = call(&c, &sh->bodies[cl->id % N_BODIES], &len);
	if (st != 200)
		die("warm-up request: HTTP %d: %.*s", st, (int)(len < 300 ? len : 300), c.buf);
	decode(c.buf, len, sh->batch, true);
	pthread_barrier_wait(&sh->start);
	double cpu0 = thread_cpu();
	for (int i = 0; i < sh->requests; i++) {
		const struct body *b = &sh->bodies[(size_t)(cl->id * 7 + i) % N_BODIES];
		double t0 = now();
		st = call(&c, b, &len);
		if (st != 200)
			die("HTTP %d: %.*s", st, (int)(len < 300 ? len : 300), c.buf);
		struct outcome o = decode(c.buf, len, sh->batch, false);
		cl->lat[i] = now() - t0;
		cl->frames += o.frames;
		cl->located += o.located;
		cl->not_ok += o.status != SYMBOLIZER__V1__MAPPING_RESULT__STATUS__STATUS_OK;
	}
	cl->t_end = now();
	cl->cpu = thread_cpu() - cpu0;
	cl->reconnects = c.reconnects;
	close(c.fd);
	free(c.buf);
	return NULL;
}

static int cmp_double(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;
	return x < y ? -1 : x > y;
}

static double pct(const double *v, size_t n, double p)
{
	size_t i = (size_t)(p * (double)(n - 1) + 0.5);
	return v[i < n ? i : n - 1];
}

static void usage(void)
{
	fprintf(stderr, "usage: bench_rpc --port P --build-id HEX --addrs FILE [--clients N] "
			"[--requests M] [--batch B] [--seed S] [--decode walk|protobuf-c] [--gzip] [--warm]\n");
	exit(2);
}

int main(int argc, char **argv)
{
	int port = 0, clients = 1, requests = 100;
	size_t batch = 1000;
	uint64_t seed = 1;
	const char *build_id = NULL, *addr_path = NULL;
	bool warm = false;
	for (int i = 1; i < argc; i++) {
		const char *a = argv[i];
		const char *v = i + 1 < argc ? argv[i + 1] : NULL;
		if (!strcmp(a, "--decode") && i + 1 < argc) {
			const char *d = argv[++i];
			if (strcmp(d, "protobuf-c") && strcmp(d, "walk"))
				die("--decode protobuf-c or walk");
			decode_with_pbc = !strcmp(d, "protobuf-c");
			continue;
		}
		if (!strcmp(a, "--gzip")) {
			accept_gzip = true;
			continue;
		}
		if (!strcmp(a, "--warm")) {
			warm = true;
			continue;
		}
		if (!v)
			usage();
		if (!strcmp(a, "--port"))
			port = atoi(v);
		else if (!strcmp(a, "--build-id"))
			build_id = v;
		else if (!strcmp(a, "--addrs"))
			addr_path = v;
		else if (!strcmp(a, "--clients"))
			clients = atoi(v);
		else if (!strcmp(a, "--requests"))
			requests = atoi(v);
		else if (!strcmp(a, "--batch"))
			batch = strtoull(v, NULL, 10);
		else if (!strcmp(a, "--seed"))
			seed = strtoull(v, NULL, 10);
		else
			usage();
		i++;
	}
	if (port <= 0 || port > 65535 || !build_id || !addr_path || clients < 1 || requests < 1 ||
	    batch < 1)
		usage();

	size_t n_pool;
	uint64_t *pool = read_addrs(addr_path, &n_pool);

	if (warm) {
		struct body b = encode(build_id, pool, n_pool, 0, batch, 60000);
		struct conn c = {.port = port};
		conn_open(&c);
		double t0 = now();
		for (;;) {
			size_t len;
			int st = call(&c, &b, &len);
			if (st != 200)
				die("warm-up: HTTP %d: %.*s", st, (int)(len < 300 ? len : 300), c.buf);
			struct outcome o = decode(c.buf, len, batch, true);
			if (o.status == SYMBOLIZER__V1__MAPPING_RESULT__STATUS__STATUS_OK) {
				printf("warm_seconds %.3f\n", now() - t0);
				printf("warm_frames %" PRIu64 "\n", o.frames);
				break;
			}
			if (o.status != SYMBOLIZER__V1__MAPPING_RESULT__STATUS__STATUS_PENDING)
				die("warm-up: mapping status %d (not OK, not PENDING)", o.status);
			if (now() - t0 > 300)
				die("warm-up: still PENDING after 300 s");
		}
		close(c.fd);
		free(c.buf);
		free(b.data);
		free(pool);
		return 0;
	}

	struct body bodies[N_BODIES];
	uint64_t rs = seed;
	size_t body_bytes = 0;
	for (int i = 0; i < N_BODIES; i++) {
		bodies[i] = encode(build_id, pool, n_pool, (size_t)(rng_next(&rs) % n_pool), batch, 0);
		body_bytes += bodies[i].len;
	}

	struct shared sh = {.port = port, .requests = requests, .batch = batch, .bodies = bodies};
	pthread_barrier_init(&sh.start, NULL, (unsigned)clients + 1);
	struct client *cl = calloc((size_t)clients, sizeof(*cl));
	if (!cl)
		die("out of memory");
	for (int i = 0; i < clients; i++) {
		cl[i].sh = &sh;
		cl[i].id = i;
		cl[i].lat = calloc((size_t)requests, sizeof(double));
		if (!cl[i].lat || pthread_create(&cl[i].th, NULL, client_main, &cl[i]) != 0)
			die("cannot start client %d", i);
	}
	struct rusage ru0, ru1;
	pthread_barrier_wait(&sh.start);
	double t0 = now();
	getrusage(RUSAGE_SELF, &ru0);
	for (int i = 0; i < clients; i++)
		pthread_join(cl[i].th, NULL);
	getrusage(RUSAGE_SELF, &ru1);
	double t_end = 0;
	uint64_t frames = 0, located = 0, not_ok = 0, reconnects = 0;
	size_t n_lat = (size_t)clients * (size_t)requests, k = 0;
	double *lat = malloc(n_lat * sizeof(double));
	if (!lat)
		die("out of memory");
	for (int i = 0; i < clients; i++) {
		if (cl[i].t_end > t_end)
			t_end = cl[i].t_end;
		frames += cl[i].frames;
		located += cl[i].located;
		not_ok += cl[i].not_ok;
		reconnects += cl[i].reconnects;
		memcpy(lat + k, cl[i].lat, (size_t)requests * sizeof(double));
		k += (size_t)requests;
		free(cl[i].lat);
	}
	double wall = t_end - t0;
	qsort(lat, n_lat, sizeof(double), cmp_double);
	double cpu = (double)(ru1.ru_utime.tv_sec - ru0.ru_utime.tv_sec) +
		     (double)(ru1.ru_utime.tv_usec - ru0.ru_utime.tv_usec) / 1e6 +
		     (double)(ru1.ru_stime.tv_sec - ru0.ru_stime.tv_sec) +
		     (double)(ru1.ru_stime.tv_usec - ru0.ru_stime.tv_usec) / 1e6;
	double addresses = (double)n_lat * (double)batch;
	printf("clients %d\n", clients);
	printf("batch %zu\n", batch);
	printf("requests %zu\n", n_lat);
	printf("request_bytes_avg %.0f\n", (double)body_bytes / N_BODIES);
	printf("seconds %.3f\n", wall);
	printf("frames %" PRIu64 "\n", frames);
	printf("frames_per_address %.3f\n", (double)frames / addresses);
	printf("found_fraction %.4f\n", (double)located / addresses);
	printf("not_ok_responses %" PRIu64 "\n", not_ok);
	printf("reconnects %" PRIu64 "\n", reconnects);
	printf("frames_per_second %.0f\n", (double)frames / wall);
	printf("addresses_per_second %.0f\n", addresses / wall);
	printf("requests_per_second %.1f\n", (double)n_lat / wall);
	printf("latency_p50_ms %.3f\n", pct(lat, n_lat, 0.50) * 1e3);
	printf("latency_p99_ms %.3f\n", pct(lat, n_lat, 0.99) * 1e3);
	printf("latency_max_ms %.3f\n", lat[n_lat - 1] * 1e3);
	printf("client_decode %s%s\n", decode_with_pbc ? "protobuf-c" : "walk",
	       accept_gzip ? "+gzip" : "");
	printf("client_cpu_seconds %.3f\n", cpu);
	printf("client_cpu_fraction %.3f\n", cpu / wall);
	pthread_barrier_destroy(&sh.start);
	for (int i = 0; i < N_BODIES; i++)
		free(bodies[i].data);
	free(lat);
	free(cl);
	free(pool);
	return not_ok ? 3 : 0;
}
