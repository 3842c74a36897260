// SPDX-License-Identifier: Apache-2.0
/*
 * test_svc_flight: the single-flight table (svc_flight): one flight per build
 * ID through growth and removal, waiters served in the order they came, a
 * waiter leaving before the end, and waiters leaving while others are served.
 */
#include <stdlib.h>
#include <string.h>

#include "service/core/svc_flight.h"
#include "test.h"

static sym_build_id id_of(unsigned n)
{
	sym_build_id id = {.len = 20};
	for (int i = 0; i < 20; i++)
		id.bytes[i] = (uint8_t)(n >> (8 * (i % 4)));
	return id;
}

TEST(table_find_add_remove)
{
	enum { N = 1000 };
	svc_flight_table t;
	svc_flight_table_init(&t);
	svc_flight *fl = calloc(N, sizeof(*fl));
	REQUIRE(fl);
	CHECK(svc_flight_any(&t) == NULL);
	for (unsigned i = 0; i < N; i++) {
		sym_build_id id = id_of(i);
		CHECK(svc_flight_find(&t, &id) == NULL);
		REQUIRE(svc_flight_add(&t, &fl[i], &id));
	}
	CHECK_EQ_U(svc_flight_count(&t), N);
	for (unsigned i = 0; i < N; i++) {
		sym_build_id id = id_of(i);
		CHECK(svc_flight_find(&t, &id) == &fl[i]);
	}
	for (unsigned i = 0; i < N; i += 2)
		svc_flight_remove(&t, &fl[i]);
	CHECK_EQ_U(svc_flight_count(&t), N / 2);
	for (unsigned i = 0; i < N; i++) {
		sym_build_id id = id_of(i);
		CHECK(svc_flight_find(&t, &id) == (i % 2 ? &fl[i] : NULL));
	}
	/* Ending them all, as at shutdown. */
	size_t ended = 0;
	svc_flight *f;
	while ((f = svc_flight_any(&t))) {
		svc_flight_remove(&t, f);
		ended++;
	}
	CHECK_EQ_U(ended, N / 2);
	svc_flight_table_deinit(&t);
	free(fl);
}

TEST(waiters_in_order_and_leaving)
{
	svc_flight f = {0};
	svc_flight_waiter w[4];
	CHECK(!svc_flight_has_waiters(&f));
	for (int i = 0; i < 4; i++)
		svc_flight_join(&f, &w[i]);
	CHECK(svc_flight_has_waiters(&f));
	CHECK(w[2].flight == &f);
	svc_flight_leave(&w[2]);
	CHECK(w[2].flight == NULL);
	svc_flight_leave(&w[2]); /* twice: no-op */
	CHECK(svc_flight_pop(&f) == &w[0]);
	/* While w[0] is served, w[3] leaves and a new one joins at the end. */
	svc_flight_leave(&w[3]);
	svc_flight_join(&f, &w[2]);
	CHECK(svc_flight_pop(&f) == &w[1]);
	CHECK(svc_flight_pop(&f) == &w[2]);
	CHECK(svc_flight_pop(&f) == NULL);
	CHECK(!svc_flight_has_waiters(&f));
	CHECK(f.head == NULL && f.tail == NULL);
}

TEST_MAIN()
