// SPDX-License-Identifier: Apache-2.0
/*
 * progress: the progress line of symbolctl (see progress.h). The line is cut
 * to the terminal's width so that '\r' always goes back to its start.
 */
#include "cmd/symbolctl/progress.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <unistd.h>

#include <event2/event.h>

#include "base/base_clock.h"

#define PROGRESS_EVERY_MS 100

struct progress {
	const char *what;
	uint64_t total, done, bytes;
	int64_t start_ms, drawn_ms;
	bool shown;
	struct event *timer;
};

progress *progress_create(const char *what, uint64_t total, bool off)
{
	if (off || !isatty(STDOUT_FILENO) || !isatty(STDERR_FILENO))
		return NULL;
	progress *p = calloc(1, sizeof(*p));
	if (!p)
		return NULL;
	p->what = what;
	p->total = total;
	p->start_ms = base_mono_ms();
	p->drawn_ms = p->start_ms - PROGRESS_EVERY_MS;
	return p;
}

void progress_clear(progress *p)
{
	if (!p || !p->shown)
		return;
	fputs("\r\033[K", stderr);
	fflush(stderr);
	p->shown = false;
}

void progress_destroy(progress *p)
{
	if (!p)
		return;
	if (p->timer)
		event_free(p->timer);
	progress_clear(p);
	free(p);
}

/* "12.3 MiB" */
static void fmt_bytes(char *out, size_t n, double v)
{
	static const char *const units[] = {"B", "KiB", "MiB", "GiB", "TiB"};
	int u = 0;
	while (v >= 1024 && u < 4) {
		v /= 1024;
		u++;
	}
	snprintf(out, n, u ? "%.1f %s" : "%.0f %s", v, units[u]);
}

/* "1:05" or "1:02:03" */
static void fmt_secs(char *out, size_t n, int64_t s)
{
	if (s >= 3600)
		snprintf(out, n, "%lld:%02lld:%02lld", (long long)(s / 3600),
			 (long long)(s / 60 % 60), (long long)(s % 60));
	else
		snprintf(out, n, "%lld:%02lld", (long long)(s / 60), (long long)(s % 60));
}

static void draw(progress *p, int64_t now)
{
	char line[256], bytes[32], rate[32], elapsed[32], eta[32];
	int64_t ms = now - p->start_ms;
	fmt_bytes(bytes, sizeof(bytes), (double)p->bytes);
	fmt_bytes(rate, sizeof(rate), ms > 0 ? (double)p->bytes * 1000.0 / (double)ms : 0);
	fmt_secs(elapsed, sizeof(elapsed), ms / 1000);
	int len = snprintf(line, sizeof(line), "%s: %llu", p->what, (unsigned long long)p->done);
	if (p->total)
		len += snprintf(line + len, sizeof(line) - (size_t)len, "/%llu",
				(unsigned long long)p->total);
	if (p->bytes)
		len += snprintf(line + len, sizeof(line) - (size_t)len, " done, %s, %s/s, %s", bytes,
				rate, elapsed);
	else  /* no bytes (yet): the rate in items */
		len += snprintf(line + len, sizeof(line) - (size_t)len, " done, %.1f/s, %s",
				ms > 0 ? (double)p->done * 1000.0 / (double)ms : 0.0, elapsed);
	if (p->total && p->done && p->done < p->total) {
		fmt_secs(eta, sizeof(eta),
			 ms * (int64_t)(p->total - p->done) / (int64_t)p->done / 1000);
		snprintf(line + len, sizeof(line) - (size_t)len, ", ETA %s", eta);
	}
	struct winsize ws;
	size_t width = ioctl(STDERR_FILENO, TIOCGWINSZ, &ws) == 0 && ws.ws_col > 1
			       ? (size_t)ws.ws_col - 1 : 79;
	fprintf(stderr, "\r%.*s\033[K", (int)(width < sizeof(line) ? width : sizeof(line)), line);
	fflush(stderr);
	p->shown = true;
	p->drawn_ms = now;
}

void progress_tick(progress *p)
{
	if (!p)
		return;
	int64_t now = base_mono_ms();
	if (now - p->drawn_ms >= PROGRESS_EVERY_MS)
		draw(p, now);
}

void progress_set(progress *p, uint64_t done, uint64_t bytes)
{
	if (!p)
		return;
	p->done = done;
	p->bytes = bytes;
	progress_tick(p);
}

static void timer_cb(evutil_socket_t fd, short what, void *arg)
{
	(void)fd;
	(void)what;
	progress_tick(arg);
}

bool progress_attach(progress *p, struct event_base *base)
{
	if (!p)
		return true;
	struct timeval tv = {0, PROGRESS_EVERY_MS * 1000};
	p->timer = event_new(base, -1, EV_PERSIST, timer_cb, p);
	return p->timer && event_add(p->timer, &tv) == 0;
}
