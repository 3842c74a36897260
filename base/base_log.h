/* SPDX-License-Identifier: Apache-2.0 */
/*
 * svc_log: structured log lines on stderr, one event per line in logfmt:
 *
 *   ts=2026-11-22T10:00:00.123Z level=info msg="listening" addr=127.0.0.1:8080
 *
 * base_logf(level, msg, fmt, ...) formats the key=value tail with printf; use
 * base_log_quote() for values that may hold spaces or quotes. Lines below the
 * level set with base_log_set_level() are dropped. Thread-safe (one write(2)
 * per line).
 */
#ifndef BASE_LOG_H
#define BASE_LOG_H

#include <stddef.h>

typedef enum base_log_level {
	BASE_LOG_DEBUG = 0,
	BASE_LOG_INFO,
	BASE_LOG_WARN,
	BASE_LOG_ERROR,
} base_log_level;

void base_log_set_level(base_log_level level);
/* "debug", "info", "warn", "error" -> level; -1 when unknown. */
int base_log_parse_level(const char *s);

void base_logf(base_log_level level, const char *msg, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));

/* Writes s as a logfmt value ("..." with \" \\ \n escaped, cut at out_size). */
const char *base_log_quote(char *out, size_t out_size, const char *s);

#endif
