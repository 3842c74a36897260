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
		snprintf(err, err_size, "%s: %s", f->name, why);
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
			snprintf(err, err_size, "%s: '%.100s' is not a count (0 to %ld)", f->name,
				 val, f->max);
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
		snprintf(err, err_size, "%s: '%.100s' is not a size (e.g. 512M)", f->name, val);
		return false;
	case BASE_FLAG_DURATION:
		if (base_parse_duration_ms(val, (int64_t *)field))
			return true;
		snprintf(err, err_size, "%s: '%.100s' is not a duration (e.g. 500ms, 30s, 10m)",
			 f->name, val);
		return false;
	case BASE_FLAG_CUSTOM:
		break;  /* above */
	}
	return false;
}

base_flag_result base_flag_parse(const base_flag_group *groups, size_t n_groups, int argc,
				 char **argv, int *i, char *err, size_t err_size)
{
	const char *arg = argv[*i];
	for (size_t g = 0; g < n_groups; g++) {
		for (size_t k = 0; k < groups[g].n_flags; k++) {
			const base_flag *f = &groups[g].flags[k];
			size_t n = strlen(f->name);
			if (strncmp(arg, f->name, n) != 0 || (arg[n] != '\0' && arg[n] != '='))
				continue;
			const char *val = arg + n + 1;
			if (arg[n] == '\0') {
				if (*i + 1 >= argc) {
					snprintf(err, err_size, "%s: missing value", f->name);
					return BASE_FLAG_BAD;
				}
				val = argv[++*i];
			}
			(*i)++;
			if (!set_value(f, groups[g].settings, val, err, err_size))
				return BASE_FLAG_BAD;
			return BASE_FLAG_TAKEN;
		}
	}
	return BASE_FLAG_UNKNOWN;
}

void base_flag_usage(FILE *out, const base_flag_group *groups, size_t n_groups)
{
	for (size_t g = 0; g < n_groups; g++) {
		fprintf(out, "%s%s:\n", g ? "\n" : "", groups[g].title);
		for (size_t k = 0; k < groups[g].n_flags; k++) {
			const base_flag *f = &groups[g].flags[k];
			char head[80];
			snprintf(head, sizeof(head), "%s%s%s", f->name, f->metavar ? " " : "",
				 f->metavar ? f->metavar : "");
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
