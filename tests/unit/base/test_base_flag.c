// SPDX-License-Identifier: Apache-2.0
/*
 * Unit tests of the flag table parser (base/base_flag): each kind of value,
 * both spellings (--flag V and --flag=V), bad and missing values, and a group
 * of custom flags with no settings struct (symbolizerd's logging group).
 */
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include "base/base_flag.h"
#include "test.h"

struct settings {
	const char *name;
	uint32_t count;
	uint64_t bytes;
	int64_t wait_ms;
};

static const base_flag FLAGS[] = {
	{"--name", "S", BASE_FLAG_STRING, offsetof(struct settings, name), 0, NULL, "a name"},
	{"--count", "N", BASE_FLAG_U32, offsetof(struct settings, count), 10, NULL, "a count"},
	{"--bytes", "SIZE", BASE_FLAG_SIZE, offsetof(struct settings, bytes), 0, NULL, "a size"},
	{"--wait", "DUR", BASE_FLAG_DURATION, offsetof(struct settings, wait_ms), 0, NULL, "a wait"},
};

static int custom_calls;
static bool custom_level(void *obj, const char *value, char *err, size_t err_size)
{
	CHECK(obj == NULL);
	custom_calls++;
	if (strcmp(value, "debug") == 0)
		return true;
	snprintf(err, err_size, "'%s' is not a level", value);
	return false;
}

static const base_flag CUSTOM[] = {
	{"--level", "L", BASE_FLAG_CUSTOM, 0, 0, custom_level, "a level"},
};

/* Parses one command line; the result of its first flag. */
static base_flag_result parse(struct settings *s, int argc, char **argv, char *err)
{
	base_flag_group groups[] = {{"Flags", FLAGS, 4, s}, {"Logging", CUSTOM, 1, NULL}};
	int i = 1;
	return base_flag_parse(groups, 2, argc, argv, &i, err, BASE_FLAG_ERR_MAX);
}

TEST(each_kind_both_spellings)
{
	struct settings s = {0};
	char err[BASE_FLAG_ERR_MAX];
	char *a1[] = {"x", "--name", "abc", NULL};
	CHECK(parse(&s, 3, a1, err) == BASE_FLAG_TAKEN && strcmp(s.name, "abc") == 0);
	char *a2[] = {"x", "--count=7", NULL};
	CHECK(parse(&s, 2, a2, err) == BASE_FLAG_TAKEN);
	CHECK_EQ_U(s.count, 7);
	char *a3[] = {"x", "--bytes", "2K", NULL};
	CHECK(parse(&s, 3, a3, err) == BASE_FLAG_TAKEN);
	CHECK_EQ_U(s.bytes, 2048);
	char *a4[] = {"x", "--wait=1500ms", NULL};
	CHECK(parse(&s, 2, a4, err) == BASE_FLAG_TAKEN);
	CHECK_EQ_U(s.wait_ms, 1500);
	char *a5[] = {"x", "--other", NULL};
	CHECK(parse(&s, 2, a5, err) == BASE_FLAG_UNKNOWN);
}

TEST(bad_and_missing_values_name_the_flag)
{
	struct settings s = {0};
	char err[BASE_FLAG_ERR_MAX];
	char *a1[] = {"x", "--count=11", NULL};
	CHECK(parse(&s, 2, a1, err) == BASE_FLAG_BAD && strstr(err, "--count") != NULL);
	char *a2[] = {"x", "--wait", NULL};
	CHECK(parse(&s, 2, a2, err) == BASE_FLAG_BAD && strstr(err, "--wait") != NULL);
	char *a3[] = {"x", "--bytes=lots", NULL};
	CHECK(parse(&s, 2, a3, err) == BASE_FLAG_BAD && strstr(err, "--bytes") != NULL);
}

/* A group with no settings struct: its custom parser gets NULL, and nothing
 * computes a field address from it (UBSan: offset applied to a null pointer). */
TEST(custom_flags_of_a_group_without_settings)
{
	struct settings s = {0};
	char err[BASE_FLAG_ERR_MAX];
	char *a1[] = {"x", "--level=debug", NULL};
	CHECK(parse(&s, 2, a1, err) == BASE_FLAG_TAKEN);
	char *a2[] = {"x", "--level", "loud", NULL};
	CHECK(parse(&s, 3, a2, err) == BASE_FLAG_BAD);
	CHECK(strstr(err, "--level: 'loud' is not a level") != NULL);
	CHECK_EQ_U(custom_calls, 2);
}

TEST_MAIN()
