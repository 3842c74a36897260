/* SPDX-License-Identifier: Apache-2.0 */
/*
 * base_flag: command-line flags from tables. A program's flags are declared
 * once, as rows {name, value kind, field offset, help}, by the module that
 * owns the settings (svc_config: store and sources; svc_server_options: the
 * daemon's own); main() joins the tables it takes into one base_flag_set and
 * hands every argument to base_flag_parse(), which also prints --help.
 *
 * A value follows as "--flag=V" or as the next argument (a one-letter "-x"
 * name also takes it attached: "-eFILE"). A flag may have other names after
 * its first, space-separated ("--exe -e --obj"; messages use the first). A
 * BOOL flag takes no value.
 *   DURATION: a number with unit ms, s, m, h (a bare number is seconds)
 *   SIZE: a number with optional K, M, G, T (powers of 1024; "KiB", "KB" too)
 *
 * A command whose whole argv is flags and positional words (symbolctl's
 * subcommands) hands it to base_flag_parse_args(): -h/--help, "--" (the rest
 * are positional), flags anywhere (or up to the first positional word), each
 * positional word collected in order. A flag given twice keeps the last value,
 * or, CUSTOM, does what its parser does (a repeatable flag appends).
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
	BASE_FLAG_BOOL,        /* bool set to true; no value. With parse: parse(obj, NULL) */
} base_flag_kind;

/* A custom flag's parser: false with err filled (without the flag's name). */
typedef bool (*base_flag_parse_fn)(void *obj, const char *value, char *err, size_t err_size);

typedef struct base_flag {
	const char *name;          /* "--listen"; other names after spaces: "--exe -e --obj" */
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

/* How base_flag_parse_args reads a command line (or'ed). */
enum {
	/* The first positional word ends the flags (getopt's "+"): later words
	 * starting with '-' are positional too. */
	BASE_FLAG_STOP_AT_POSITIONAL = 1,
};

typedef enum base_flag_args_result {
	BASE_FLAG_ARGS_OK = 0,     /* every flag taken; positionals in pos[] */
	BASE_FLAG_ARGS_HELP,       /* -h or --help (before the flags ended) */
	BASE_FLAG_ARGS_UNKNOWN,    /* argv[*bad] starts with '-' and is no flag of the groups */
	BASE_FLAG_ARGS_BAD,        /* argv[*bad] is a flag with a missing or bad value: err */
} base_flag_args_result;

/*
 * Reads argv[1..argc): flags through the groups, in order; "--" makes every
 * later word positional; "-" alone is positional (stdin). pos (room for argc
 * pointers) gets the positional words in order, *n_pos their count.
 */
base_flag_args_result base_flag_parse_args(const base_flag_group *groups, size_t n_groups,
					   unsigned how, int argc, char **argv, char **pos,
					   int *n_pos, int *bad, char *err, size_t err_size);

/* The flag list of each group, for --help. */
void base_flag_usage(FILE *out, const base_flag_group *groups, size_t n_groups);

/* The value parsers behind the kinds, for values that come from elsewhere. */
bool base_parse_duration_ms(const char *s, int64_t *out);
bool base_parse_size(const char *s, uint64_t *out);

#endif
