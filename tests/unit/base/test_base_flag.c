// SPDX-License-Identifier: Apache-2.0
/*
 * Unit tests of the flag table parser (base/base_flag): each kind of value,
 * both spellings (--flag V and --flag=V), bad and missing values, and a group
 * of custom flags with no settings struct (symbolizerd's logging group); and
 * what symbolctl's subcommands need: BOOL flags (plain and actions), aliases
 * and one-letter names with attached values, repeated flags, and whole
 * command lines through base_flag_parse_args (positionals, "--", -h, flags
 * that end at the first positional, unknown flags).
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

/* A command's settings, as symbolctl's subcommands have them. */
struct cmd {
	const char *exe;
	bool verbose, json;
	int kind;                /* set by action flags, the last one wins */
	const char *dirs[3];     /* --dir, repeatable */
	size_t n_dirs;
};

static bool kind_runtime(void *obj, const char *value, char *err, size_t err_size)
{
	(void)err, (void)err_size;
	CHECK(value == NULL);
	((struct cmd *)obj)->kind = 1;
	return true;
}

static bool kind_offsets(void *obj, const char *value, char *err, size_t err_size)
{
	(void)value, (void)err, (void)err_size;
	((struct cmd *)obj)->kind = 2;
	return true;
}

static bool add_dir(void *obj, const char *value, char *err, size_t err_size)
{
	struct cmd *c = obj;
	if (c->n_dirs == 3) {
		snprintf(err, err_size, "more than 3");
		return false;
	}
	c->dirs[c->n_dirs++] = value;
	return true;
}

static const base_flag CMD_FLAGS[] = {
	{"--exe -e --obj", "FILE", BASE_FLAG_STRING, offsetof(struct cmd, exe), 0, NULL,
	 "the file"},
	{"--verbose -v", NULL, BASE_FLAG_BOOL, offsetof(struct cmd, verbose), 0, NULL, "say more"},
	{"--json", NULL, BASE_FLAG_BOOL, offsetof(struct cmd, json), 0, NULL, "JSON"},
	{"--runtime", NULL, BASE_FLAG_BOOL, 0, 0, kind_runtime, "runtime addresses"},
	{"--offsets", NULL, BASE_FLAG_BOOL, 0, 0, kind_offsets, "file offsets"},
	{"--dir", "DIR", BASE_FLAG_CUSTOM, 0, 0, add_dir, "a dir (repeatable)"},
};

static base_flag_args_result parse_cmd(struct cmd *c, unsigned how, int argc, char **argv,
				       char **pos, int *n_pos, int *bad, char *err)
{
	base_flag_group g = {"Flags", CMD_FLAGS, sizeof(CMD_FLAGS) / sizeof(CMD_FLAGS[0]), c};
	return base_flag_parse_args(&g, 1, how, argc, argv, pos, n_pos, bad, err,
				    BASE_FLAG_ERR_MAX);
}

TEST(bool_alias_and_short_flags)
{
	char err[BASE_FLAG_ERR_MAX];
	char *pos[16];
	int n, bad;
	const char *spellings[][3] = {{"-e", "f1", NULL}, {"-ef1", NULL, NULL},
				      {"--exe=f1", NULL, NULL}, {"--obj", "f1", NULL},
				      {"-e=f1", NULL, NULL}};
	for (size_t k = 0; k < 5; k++) {
		struct cmd c = {0};
		char *argv[] = {"x", (char *)spellings[k][0], (char *)spellings[k][1], NULL};
		int argc = spellings[k][1] ? 3 : 2;
		CHECK(parse_cmd(&c, 0, argc, argv, pos, &n, &bad, err) == BASE_FLAG_ARGS_OK);
		/* "-e=f1" is "-e" with "=f1" attached, as getopt has it */
		CHECK_STREQ(c.exe, k == 4 ? "=f1" : "f1");
	}
	struct cmd c = {0};
	char *a1[] = {"x", "-v", "--json", NULL};
	CHECK(parse_cmd(&c, 0, 3, a1, pos, &n, &bad, err) == BASE_FLAG_ARGS_OK);
	CHECK(c.verbose && c.json && n == 0);
	char *a2[] = {"x", "--json=yes", NULL};
	CHECK(parse_cmd(&c, 0, 2, a2, pos, &n, &bad, err) == BASE_FLAG_ARGS_BAD);
	CHECK(strstr(err, "--json: takes no value") != NULL && bad == 1);
	char *a3[] = {"x", "-vx", NULL}; /* no clustering of one-letter flags */
	CHECK(parse_cmd(&c, 0, 2, a3, pos, &n, &bad, err) == BASE_FLAG_ARGS_UNKNOWN);
	char *a4[] = {"x", "-e", NULL};
	CHECK(parse_cmd(&c, 0, 2, a4, pos, &n, &bad, err) == BASE_FLAG_ARGS_BAD);
	CHECK(strstr(err, "--exe: missing value") != NULL);
}

TEST(actions_and_repeated_flags)
{
	char err[BASE_FLAG_ERR_MAX];
	char *pos[16];
	int n, bad;
	struct cmd c = {0};
	char *a1[] = {"x", "--runtime", "--dir", "a", "--offsets", "--dir=b", NULL};
	CHECK(parse_cmd(&c, 0, 6, a1, pos, &n, &bad, err) == BASE_FLAG_ARGS_OK);
	CHECK(c.kind == 2 && c.n_dirs == 2);
	CHECK_STREQ(c.dirs[0], "a");
	CHECK_STREQ(c.dirs[1], "b");
	char *a2[] = {"x", "--dir", "c", "--dir", "d", NULL};
	CHECK(parse_cmd(&c, 0, 5, a2, pos, &n, &bad, err) == BASE_FLAG_ARGS_BAD);
	CHECK(strstr(err, "--dir: more than 3") != NULL && bad == 3);
}

TEST(whole_command_lines)
{
	char err[BASE_FLAG_ERR_MAX];
	char *pos[16];
	int n, bad;
	struct cmd c = {0};
	/* flags anywhere; "-" is positional; "--" ends the flags */
	char *a1[] = {"x", "a", "-e", "f", "-", "--json", "--", "-v", "--help", NULL};
	CHECK(parse_cmd(&c, 0, 9, a1, pos, &n, &bad, err) == BASE_FLAG_ARGS_OK);
	REQUIRE(n == 4);
	CHECK_STREQ(pos[0], "a");
	CHECK_STREQ(pos[1], "-");
	CHECK_STREQ(pos[2], "-v");
	CHECK_STREQ(pos[3], "--help");
	CHECK(c.json && !c.verbose);
	/* flags end at the first positional word */
	struct cmd d = {0};
	char *a2[] = {"x", "-v", "1000", "--json", "-e", NULL};
	CHECK(parse_cmd(&d, BASE_FLAG_STOP_AT_POSITIONAL, 5, a2, pos, &n, &bad, err) ==
	      BASE_FLAG_ARGS_OK);
	CHECK(n == 3 && d.verbose && !d.json);
	/* help, unknown */
	char *a3[] = {"x", "-v", "-h", "--nosuch", NULL};
	CHECK(parse_cmd(&d, 0, 4, a3, pos, &n, &bad, err) == BASE_FLAG_ARGS_HELP);
	char *a4[] = {"x", "-v", "--nosuch", "-h", NULL};
	CHECK(parse_cmd(&d, 0, 4, a4, pos, &n, &bad, err) == BASE_FLAG_ARGS_UNKNOWN);
	CHECK(bad == 2 && strstr(err, "unknown flag '--nosuch'") != NULL);
	/* a prefix of a name is not the name */
	char *a5[] = {"x", "--verb", NULL};
	CHECK(parse_cmd(&d, 0, 2, a5, pos, &n, &bad, err) == BASE_FLAG_ARGS_UNKNOWN);
}

TEST_MAIN()
