/* SPDX-License-Identifier: Apache-2.0 */
/*
 * test.h: the unit-test registry and assertions shared by every tests/unit program.
 *
 * A test is `TEST(name) { ... }`; CHECK* record a failure and go on, REQUIRE*
 * stop the current test. Each program's main is TEST_MAIN(), which runs all
 * registered tests (or those named on the command line) and ends with the
 * line "N passed, N failed".
 */
#ifndef TEST_H
#define TEST_H

#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

typedef void (*test_fn)(void);
struct test_case { const char *name; test_fn fn; };

#define TEST_MAX 256
extern struct test_case test_cases[TEST_MAX];
extern int test_count, test_failed_now;

#define TEST(name)                                                          \
	static void test_##name(void);                                      \
	__attribute__((constructor)) static void register_##name(void)      \
	{                                                                   \
		if (test_count < TEST_MAX)                                  \
			test_cases[test_count++] = (struct test_case){#name, test_##name}; \
	}                                                                   \
	static void test_##name(void)

#define TEST_FAIL_(...)                                                     \
	do {                                                                \
		fprintf(stderr, "  %s:%d: ", __FILE__, __LINE__);           \
		fprintf(stderr, __VA_ARGS__);                               \
		fprintf(stderr, "\n");                                      \
		test_failed_now = 1;                                        \
	} while (0)

#define CHECK(c) do { if (!(c)) TEST_FAIL_("CHECK(%s) failed", #c); } while (0)
#define REQUIRE(c) do { if (!(c)) { TEST_FAIL_("REQUIRE(%s) failed", #c); return; } } while (0)
#define CHECK_EQ_U(a, b) do { uint64_t a_ = (a), b_ = (b); if (a_ != b_) \
	TEST_FAIL_("%s == %s: %" PRIu64 " != %" PRIu64, #a, #b, a_, b_); } while (0)
#define CHECK_STREQ(a, b) do { const char *a_ = (a), *b_ = (b); \
	if (!a_ || !b_ || strcmp(a_, b_) != 0) \
	TEST_FAIL_("%s == %s: \"%s\" != \"%s\"", #a, #b, a_ ? a_ : "(null)", b_ ? b_ : "(null)"); } while (0)

#define TEST_MAIN()                                                         \
	struct test_case test_cases[TEST_MAX];                              \
	int test_count, test_failed_now;                                    \
	int main(int argc, char **argv)                                     \
	{                                                                   \
		int passed = 0, failed = 0;                                 \
		for (int i = 0; i < test_count; i++) {                      \
			int wanted = argc < 2;                              \
			for (int j = 1; j < argc; j++)                      \
				wanted |= strcmp(argv[j], test_cases[i].name) == 0; \
			if (!wanted)                                        \
				continue;                                   \
			test_failed_now = 0;                                \
			test_cases[i].fn();                                 \
			printf("%s %s\n", test_failed_now ? "FAIL" : "ok  ", test_cases[i].name); \
			fflush(stdout);                                     \
			if (test_failed_now) failed++; else passed++;       \
		}                                                           \
		printf("%d passed, %d failed\n", passed, failed);           \
		return failed ? 1 : 0;                                      \
	}

/* Directory of test data set by CMake (compiled fixtures). */
#ifndef TEST_FIXTURE_DIR
#define TEST_FIXTURE_DIR "."
#endif

/* A whole file in malloc'ed memory (at least one byte allocated), or NULL. */
static inline uint8_t *test_read_file(const char *path, size_t *size)
{
	*size = 0;
	FILE *f = fopen(path, "rb");
	if (!f)
		return NULL;
	uint8_t *buf = NULL;
	long n = fseek(f, 0, SEEK_END) == 0 ? ftell(f) : -1;
	if (n >= 0 && fseek(f, 0, SEEK_SET) == 0 && (buf = malloc(n > 0 ? (size_t)n : 1)) &&
	    fread(buf, 1, (size_t)n, f) != (size_t)n) {
		free(buf);
		buf = NULL;
	}
	fclose(f);
	*size = buf ? (size_t)n : 0;
	return buf;
}

/* A compiled fixture (tests/fixtures, built into TEST_FIXTURE_DIR), or NULL. */
static inline uint8_t *test_read_fixture(const char *name, size_t *size)
{
	char path[4096];
	snprintf(path, sizeof(path), "%s/%s", TEST_FIXTURE_DIR, name);
	return test_read_file(path, size);
}

#endif
