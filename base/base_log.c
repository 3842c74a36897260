// SPDX-License-Identifier: Apache-2.0
/*
 * svc_log: logfmt lines on stderr (svc_log.h).
 */
#include "base/base_log.h"

#include <stdarg.h>
#include <stdio.h>
#include <string.h>
#include "base/base_clock.h"
#include <time.h>
#include <unistd.h>

static base_log_level min_level = BASE_LOG_INFO;
static const char *const level_names[] = {"debug", "info", "warn", "error"};

void base_log_set_level(base_log_level level)
{
	min_level = level;
}

int base_log_parse_level(const char *s)
{
	for (int i = 0; i < 4; i++)
		if (strcmp(s, level_names[i]) == 0)
			return i;
	return -1;
}

const char *base_log_quote(char *out, size_t out_size, const char *s)
{
	size_t n = 0;
	if (out_size < 3) {
		if (out_size)
			out[0] = '\0';
		return out;
	}
	out[n++] = '"';
	for (; *s && n + 3 < out_size; s++) {
		char c = *s;
		if (c == '"' || c == '\\') {
			out[n++] = '\\';
			out[n++] = c;
		} else if (c == '\n' || c == '\r' || c == '\t') {
			out[n++] = '\\';
			out[n++] = c == '\n' ? 'n' : c == '\r' ? 'r' : 't';
		} else if ((unsigned char)c < 0x20) {
			out[n++] = '?';
		} else {
			out[n++] = c;
		}
	}
	out[n++] = '"';
	out[n] = '\0';
	return out;
}

void base_logf(base_log_level level, const char *msg, const char *fmt, ...)
{
	if (level < min_level)
		return;
	char line[2048];
	int64_t now_ms = base_real_ms();
	time_t secs = (time_t)(now_ms / 1000);
	struct tm tm;
	gmtime_r(&secs, &tm);
	char qmsg[512];
	int n = snprintf(line, sizeof(line),
			 "ts=%04d-%02d-%02dT%02d:%02d:%02d.%03dZ level=%s msg=%s",
			 tm.tm_year + 1900, tm.tm_mon + 1, tm.tm_mday, tm.tm_hour, tm.tm_min,
			 tm.tm_sec, (int)(now_ms % 1000), level_names[level],
			 base_log_quote(qmsg, sizeof(qmsg), msg));
	if (fmt && *fmt && n > 0 && (size_t)n < sizeof(line) - 2) {
		line[n++] = ' ';
		va_list ap;
		va_start(ap, fmt);
		int m = vsnprintf(line + n, sizeof(line) - (size_t)n - 1, fmt, ap);
		va_end(ap);
		if (m > 0)
			n += m < (int)(sizeof(line) - (size_t)n - 1) ? m
								     : (int)(sizeof(line) - (size_t)n - 2);
	}
	if (n < 0)
		return;
	if ((size_t)n > sizeof(line) - 2)
		n = (int)sizeof(line) - 2;
	line[n++] = '\n';
	ssize_t w = write(STDERR_FILENO, line, (size_t)n);
	(void)w;
}
