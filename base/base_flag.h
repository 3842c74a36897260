/* SPDX-License-Identifier: Apache-2.0 */
/*
 * base_flag: command-line flags from tables. A program's flags are declared
 * once, as rows {name, value kind, field offset, help}, by the module that
 * owns the settings (svc_config: store and sources; svc_server_options: the
 * daemon's own); main() joins the tables it takes into one base_flag_set and
 * hands every argument to base_flag_parse(), which also prints --help.
 *
 * A value follows as "--flag=V" or as the next argument.
 *   DURATION: a number with unit ms, s, m, h (a bare number is seconds)
 *   SIZE: a number with optional K, M, G, T (powers of 1024; "KiB", "KB" too)
 */
#ifndef BASE_FLAG_H
#define BASE_FLAG_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#define BASE_FLAG_ERR_MAX 256

typedef enum base_flag_kind {
	BASE_FLAG_STRING,      /* const char *, pointing into argv */
	BASE_FLAG_U32,         /* uint32_t count, 0..max */
	BASE_FLAG_INT,         /* int count, 0..max */
	BASE_FLAG_SIZE,        /* uint64_t bytes */
	BASE_FLAG_DURATION,    /* int64_t milliseconds */
	BASE_FLAG_CUSTOM,      /* parse(field, value) decides */
} base_flag_kind;

/* A custom flag's parser: false with err filled (without the flag's name). */
typedef bool (*base_flag_parse_fn)(void *obj, const char *value, char *err, size_t err_size);

typedef struct base_flag {
	const char *name;          /* "--listen" */
	const char *metavar;       /* "ADDR" (NULL for none) */
	base_flag_kind kind;
	size_t offset;             /* of the field in the settings struct */
	long max;                  /* counts: largest accepted value */
	base_flag_parse_fn parse;  /* CUSTOM: gets the whole settings struct */
	const char *help;          /* may hold "\n" for more lines */
} base_flag;

/* One table and the settings struct its offsets point into. */
typedef struct base_flag_group {
	const char *title;         /* heading in --help ("Server flags") */
	const base_flag *flags;
	size_t n_flags;
	void *settings;
} base_flag_group;

typedef enum base_flag_result {
	BASE_FLAG_UNKNOWN = 0,     /* argv[*i] is none of the flags (untouched) */
	BASE_FLAG_TAKEN,           /* consumed; *i is past it and its value */
	BASE_FLAG_BAD,             /* a flag with a missing or bad value; err says which */
} base_flag_result;

/* Looks at argv[*i] in every group, in order. */
base_flag_result base_flag_parse(const base_flag_group *groups, size_t n_groups, int argc,
				 char **argv, int *i, char *err, size_t err_size);

/* The flag list of each group, for --help. */
void base_flag_usage(FILE *out, const base_flag_group *groups, size_t n_groups);

/* The value parsers behind the kinds, for values that come from elsewhere. */
bool base_parse_duration_ms(const char *s, int64_t *out);
bool base_parse_size(const char *s, uint64_t *out);

#endif
