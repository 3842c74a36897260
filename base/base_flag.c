// SPDX-License-Identifier: Apache-2.0
/*
 * base_flag: table-driven flag parsing and --help (base_flag.h).
 */
#include "base/base_flag.h"

#include <ctype.h>
#include <errno.h>
#include <stdlib.h>
#include <string.h>

bool base_parse_duration_ms(const char *s, int64_t *out)
{
	if (!s || !isdigit((unsigned char)*s))
		return false;
	errno = 0;
	char *end;
	double v = strtod(s, &end);
	if (errno || end == s || v < 0)
		return false;
	double mult;
	if (!*end || !strcmp(end, "s"))
		mult = 1000;
	else if (!strcmp(end, "ms"))
		mult = 1;
	else if (!strcmp(end, "m"))
		mult = 60 * 1000;
	else if (!strcmp(end, "h"))
		mult = 3600 * 1000;
	else
		return false;
	double ms = v * mult;
	if (ms > 9e15)
		return false;
	*out = (int64_t)ms;
	return true;
}

static bool size_suffix(const char *end, unsigned *shift)
{
	switch (toupper((unsigned char)*end)) {
	case '\0': *shift = 0; return true;
	case 'K': *shift = 10; break;
	case 'M': *shift = 20; break;
	case 'G': *shift = 30; break;
	case 'T': *shift = 40; break;
	default: return false;
	}
	end++;
	if (*end == 'i' || *end == 'I')
		end++;
	if (*end == 'b' || *end == 'B')
		end++;
	return *end == '\0';
}

bool base_parse_size(const char *s, uint64_t *out)
{
	if (!s || !isdigit((unsigned char)*s))
		return false;
	errno = 0;
	char *end;
	unsigned long long v = strtoull(s, &end, 10);
	unsigned shift;
	if (errno || end == s || !size_suffix(end, &shift))
		return false;
	if (shift && v > (UINT64_MAX >> shift))
		return false;
	*out = (uint64_t)v << shift;
	return true;
}

static bool parse_count(const char *val, long max, long *out)
{
	char *end;
	errno = 0;
	long v = strtol(val, &end, 10);
	if (errno || end == val || *end || v < 0 || v > max)
		return false;
	*out = v;
	return true;
}

/* The first of a flag's names, for "%.*s" in messages. */
#define FIRST_NAME(f) (int)strcspn((f)->name, " "), (f)->name

/* Stores val into the flag's field; false with err set (naming the flag). */
static bool set_value(const base_flag *f, void *settings, const char *val, char *err,
		      size_t err_size)
{
	long n;
	if (f->kind == BASE_FLAG_CUSTOM) {
		/* The whole settings (NULL for a group whose flags are all custom). */
		char why[BASE_FLAG_ERR_MAX] = "";
		if (f->parse(settings, val, why, sizeof(why)))
			return true;
		snprintf(err, err_size, "%.*s: %s", FIRST_NAME(f), why);
		return false;
	}
	char *field = (char *)settings + f->offset;
	switch (f->kind) {
	case BASE_FLAG_STRING:
		*(const char **)field = val;
		return true;
	case BASE_FLAG_U32:
	case BASE_FLAG_INT:
		if (!parse_count(val, f->max, &n)) {
			snprintf(err, err_size, "%.*s: '%.100s' is not a count (0 to %ld)",
				 FIRST_NAME(f), val, f->max);
			return false;
		}
		if (f->kind == BASE_FLAG_U32)
			*(uint32_t *)field = (uint32_t)n;
		else
			*(int *)field = (int)n;
		return true;
	case BASE_FLAG_SIZE:
		if (base_parse_size(val, (uint64_t *)field))
			return true;
		snprintf(err, err_size, "%.*s: '%.100s' is not a size (e.g. 512M)", FIRST_NAME(f),
			 val);
		return false;
	case BASE_FLAG_DURATION:
		if (base_parse_duration_ms(val, (int64_t *)field))
			return true;
		snprintf(err, err_size, "%.*s: '%.100s' is not a duration (e.g. 500ms, 30s, 10m)",
			 FIRST_NAME(f), val);
		return false;
	case BASE_FLAG_CUSTOM:
	case BASE_FLAG_BOOL:
		break;  /* above, and in take() */
	}
	return false;
}

/* Whether arg names the flag called name (n bytes): *val is its value when
 * attached ("--name=V", "-xV"), else NULL. */
static bool names(const char *arg, const char *name, size_t n, bool bool_flag, const char **val)
{
	if (strncmp(arg, name, n) != 0)
		return false;
	*val = NULL;
	if (arg[n] == '\0')
		return true;
	/* "-eFILE": a one-letter name with its value attached (all of it, as
	 * getopt has it: "-e=F" is "=F") */
	if (n == 2 && name[0] == '-' && name[1] != '-' && !bool_flag) {
		*val = arg + n;
		return true;
	}
	if (arg[n] == '=') {
		*val = arg + n + 1;
		return true;
	}
	return false;
}

/* Whether arg names f by one of its names. */
static bool matches(const base_flag *f, const char *arg, const char **val)
{
	bool b = f->kind == BASE_FLAG_BOOL;
	for (const char *a = f->name; *a;) {
		size_t n = strcspn(a, " ");
		if (n && names(arg, a, n, b, val))
			return true;
		a += n;
		a += strspn(a, " ");
	}
	return false;
}

/* Takes f at argv[*i] (its attached value val, or NULL). */
static base_flag_result take(const base_flag *f, void *settings, const char *val, int argc,
			     char **argv, int *i, char *err, size_t err_size)
{
	if (f->kind == BASE_FLAG_BOOL) {
		if (val) {
			snprintf(err, err_size, "%.*s: takes no value", FIRST_NAME(f));
			return BASE_FLAG_BAD;
		}
		(*i)++;
		if (!f->parse) {
			*(bool *)((char *)settings + f->offset) = true;
			return BASE_FLAG_TAKEN;
		}
		char why[BASE_FLAG_ERR_MAX] = "";
		if (f->parse(settings, NULL, why, sizeof(why)))
			return BASE_FLAG_TAKEN;
		snprintf(err, err_size, "%.*s: %s", FIRST_NAME(f), why);
		return BASE_FLAG_BAD;
	}
	if (!val) {
		if (*i + 1 >= argc) {
			snprintf(err, err_size, "%.*s: missing value", FIRST_NAME(f));
			return BASE_FLAG_BAD;
		}
		val = argv[++*i];
	}
	(*i)++;
	return set_value(f, settings, val, err, err_size) ? BASE_FLAG_TAKEN : BASE_FLAG_BAD;
}

base_flag_result base_flag_parse(const base_flag_group *groups, size_t n_groups, int argc,
				 char **argv, int *i, char *err, size_t err_size)
{
	const char *arg = argv[*i];
	for (size_t g = 0; g < n_groups; g++) {
		for (size_t k = 0; k < groups[g].n_flags; k++) {
			const base_flag *f = &groups[g].flags[k];
			const char *val;
			if (matches(f, arg, &val))
				return take(f, groups[g].settings, val, argc, argv, i, err,
					    err_size);
		}
	}
	return BASE_FLAG_UNKNOWN;
}

base_flag_args_result base_flag_parse_args(const base_flag_group *groups, size_t n_groups,
					   unsigned how, int argc, char **argv, char **pos,
					   int *n_pos, int *bad, char *err, size_t err_size)
{
	*n_pos = 0;
	bool flags = true;
	for (int i = 1; i < argc;) {
		const char *a = argv[i];
		if (!flags || a[0] != '-' || a[1] == '\0') {
			pos[(*n_pos)++] = argv[i++];
			if (how & BASE_FLAG_STOP_AT_POSITIONAL)
				flags = false;
			continue;
		}
		if (!strcmp(a, "--")) {
			flags = false;
			i++;
			continue;
		}
		if (!strcmp(a, "-h") || !strcmp(a, "--help"))
			return BASE_FLAG_ARGS_HELP;
		*bad = i;
		switch (base_flag_parse(groups, n_groups, argc, argv, &i, err, err_size)) {
		case BASE_FLAG_TAKEN:
			break;
		case BASE_FLAG_UNKNOWN:
			snprintf(err, err_size, "unknown flag '%s'", a);
			return BASE_FLAG_ARGS_UNKNOWN;
		case BASE_FLAG_BAD:
			return BASE_FLAG_ARGS_BAD;
		}
	}
	return BASE_FLAG_ARGS_OK;
}

void base_flag_usage(FILE *out, const base_flag_group *groups, size_t n_groups)
{
	for (size_t g = 0; g < n_groups; g++) {
		fprintf(out, "%s%s:\n", g ? "\n" : "", groups[g].title);
		for (size_t k = 0; k < groups[g].n_flags; k++) {
			const base_flag *f = &groups[g].flags[k];
			char head[80];
			snprintf(head, sizeof(head), "%s%s%s", f->name,
				 f->metavar && f->kind != BASE_FLAG_BOOL ? " " : "",
				 f->metavar && f->kind != BASE_FLAG_BOOL ? f->metavar : "");
			/* A long head gets its help on the next line. */
			if (strlen(head) > 32)
				fprintf(out, "  %s\n  %-32s ", head, "");
			else
				fprintf(out, "  %-32s ", head);
			/* Continuation lines of the help line up under its first. */
			for (const char *h = f->help; *h; h++) {
				fputc(*h, out);
				if (*h == '\n')
					fprintf(out, "  %-32s ", "");
			}
			fputc('\n', out);
		}
	}
}
