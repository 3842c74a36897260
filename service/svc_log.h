/*
 * svc_log: structured log lines on stderr, one event per line in logfmt:
 *
 *   ts=2026-11-22T10:00:00.123Z level=info msg="listening" addr=127.0.0.1:8080
 *
 * svc_logf(level, msg, fmt, ...) formats the key=value tail with printf; use
 * svc_log_quote() for values that may hold spaces or quotes. Lines below the
 * level set with svc_log_set_level() are dropped. Thread-safe (one write(2)
 * per line).
 */
#ifndef SVC_LOG_H
#define SVC_LOG_H

#include <stddef.h>

typedef enum svc_log_level {
	SVC_LOG_DEBUG = 0,
	SVC_LOG_INFO,
	SVC_LOG_WARN,
	SVC_LOG_ERROR,
} svc_log_level;

void svc_log_set_level(svc_log_level level);
/* "debug", "info", "warn", "error" -> level; -1 when unknown. */
int svc_log_parse_level(const char *s);

void svc_logf(svc_log_level level, const char *msg, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));

/* Writes s as a logfmt value ("..." with \" \\ \n escaped, cut at out_size). */
const char *svc_log_quote(char *out, size_t out_size, const char *s);

#endif
