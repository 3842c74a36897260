// SPDX-License-Identifier: Apache-2.0
/*
 * test_base_hash: the bytes' hash (base_hash_bytes) depends on every byte and
 * on the length, whatever the alignment, and takes no bytes from NULL.
 */
#include <stdlib.h>

#include "base/base_hash.h"
#include "test.h"

static int cmp_u64(const void *a, const void *b)
{
	uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;
	return (x > y) - (x < y);
}

TEST(every_byte_and_the_length_count)
{
	unsigned char buf[80];
	for (size_t i = 0; i < sizeof(buf); i++)
		buf[i] = (unsigned char)(i * 37 + 11);
	CHECK(base_hash_bytes(NULL, 0) == base_hash_bytes(buf, 0));
	/* Each length from 0 to 64 at each of 8 alignments (the same bytes at an
	 * alignment hash alike), and each byte of a 64-byte run flipped. */
	uint64_t h[65 + 64];
	for (size_t n = 0; n <= 64; n++) {
		h[n] = base_hash_bytes(buf + 8, n);
		unsigned char copy[72];
		for (size_t off = 0; off < 8; off++) {
			memcpy(copy + off, buf + 8, n);
			CHECK(base_hash_bytes(copy + off, n) == h[n]);
		}
	}
	for (size_t i = 0; i < 64; i++) {
		unsigned char copy[64];
		memcpy(copy, buf + 8, 64);
		copy[i] ^= 1;
		h[65 + i] = base_hash_bytes(copy, 64);
	}
	qsort(h, sizeof(h) / sizeof(h[0]), sizeof(h[0]), cmp_u64);
	unsigned same = 0;
	for (size_t i = 1; i < sizeof(h) / sizeof(h[0]); i++)
		same += h[i] == h[i - 1];
	CHECK_EQ_U(same, 0);
}

TEST(low_bits_spread)
{
	/* 4,096 short keys ("k0" to "k4095") into 1,024 buckets by the low
	 * bits, as the tables take them: no bucket holds more than 16. */
	unsigned count[1024] = {0};
	char key[16];
	for (unsigned i = 0; i < 4096; i++) {
		int n = snprintf(key, sizeof(key), "k%u", i);
		count[base_hash_bytes(key, (size_t)n) & 1023]++;
	}
	unsigned most = 0;
	for (unsigned i = 0; i < 1024; i++)
		most = count[i] > most ? count[i] : most;
	CHECK(most <= 16);
}

TEST_MAIN()
