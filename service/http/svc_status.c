// SPDX-License-Identifier: Apache-2.0
/*
 * svc_status: the status document of one build ID (svc_status.h), built with
 * json-c from the store's metadata, the fetcher's per-source outcomes and
 * breakers, and the resolver's memory; then the one-line summary that says
 * which of them decides the answer.
 */
#include "service/http/svc_status.h"
#include "service/core/svc_build_id.h"

#include <stdio.h>
#include <string.h>

#include <event2/buffer.h>
#include <json-c/json.h>

#include "base/base_clock.h"
#include "service/fetch/svc_s3.h"

#define MAX_ROWS 64
#define MAX_UPS 64

static void add_str(json_object *o, const char *k, const char *v)
{
	json_object_object_add(o, k, v ? json_object_new_string(v) : NULL);
}

static void add_i64(json_object *o, const char *k, int64_t v)
{
	json_object_object_add(o, k, json_object_new_int64(v));
}

static void add_bool(json_object *o, const char *k, bool v)
{
	json_object_object_add(o, k, json_object_new_boolean(v));
}

/* The store's record: the file held, or the negative result. */
static json_object *store_json(const stor_meta *m, bool known)
{
	json_object *o = json_object_new_object();
	add_str(o, "state", known ? stor_state_name(m->state) : "none");
	if (!known)
		return o;
	add_str(o, "kind", stor_kind_name(m->kind));
	add_str(o, "source", m->source);
	add_i64(o, "size", (int64_t)m->size);
	add_i64(o, "index_size", (int64_t)m->index_size);
	add_i64(o, "stored_at_ms", m->fetch_time);
	add_str(o, "last_error", m->last_error);
	return o;
}

/* The negative-cache entries: the store's (the fetcher's) and the resolver's. */
static json_object *negative_json(const stor_meta *m, bool known, const svc_resolver_info *ri,
				  int64_t now)
{
	json_object *o = json_object_new_object();
	json_object *st = NULL;
	/* A negative record, or the failed search for debug info of an executable. */
	if (known && m->neg_expiry) {
		st = json_object_new_object();
		add_str(st, "state", m->state == STOR_STATE_PRESENT ? "no_debuginfo"
								    : stor_state_name(m->state));
		add_str(st, "error", m->last_error);
		add_i64(st, "expires_at_ms", m->neg_expiry);
		add_bool(st, "expired", m->neg_expiry <= now);
	}
	json_object_object_add(o, "store", st);
	json_object *mem = NULL;
	if (ri->negative) {
		mem = json_object_new_object();
		add_str(mem, "status", svc_resolve_status_name(ri->neg_status));
		add_str(mem, "error", ri->neg_error);
		add_i64(mem, "expires_at_ms", ri->neg_expires_ms);
	}
	json_object_object_add(o, "memory", mem);
	return o;
}

static json_object *sources_json(const svc_source_outcome *rows, size_t n)
{
	json_object *a = json_object_new_array();
	for (size_t i = 0; i < n; i++) {
		json_object *o = json_object_new_object();
		add_str(o, "source", rows[i].source);
		add_str(o, "type", rows[i].type);
		add_str(o, "want", rows[i].want);
		add_str(o, "outcome", svc_source_outcome_name(rows[i].outcome));
		add_str(o, "error", rows[i].error);
		add_i64(o, "at_ms", rows[i].at_ms);
		json_object_array_add(a, o);
	}
	return a;
}

static json_object *notes_json(const svc_breaker_failure_note *n, unsigned count)
{
	json_object *a = json_object_new_array();
	for (unsigned i = 0; i < count; i++) {
		json_object *o = json_object_new_object();
		add_i64(o, "at_ms", n[i].at_ms);
		add_str(o, "reason", n[i].why);
		json_object_array_add(a, o);
	}
	return a;
}

static json_object *upstreams_json(const svc_fetcher *f, int64_t now)
{
	static const char *const states[] = {"closed", "open", "half_open"};
	static svc_upstream_stats ups[MAX_UPS]; /* loop thread only */
	size_t n = svc_fetcher_get_upstreams(f, ups, MAX_UPS);
	json_object *a = json_object_new_array();
	for (size_t i = 0; i < n; i++) {
		const svc_upstream_stats *u = &ups[i];
		json_object *o = json_object_new_object(), *b = json_object_new_object();
		add_str(o, "url", u->url);
		add_str(b, "state", states[u->breaker]);
		add_i64(b, "consecutive_failures", u->consecutive_failures);
		json_object_object_add(b, "opened_at_ms", u->breaker_opened_at_ms
								 ? json_object_new_int64(u->breaker_opened_at_ms)
								 : NULL);
		json_object_object_add(b, "open_until_ms", u->breaker == 1
								  ? json_object_new_int64(now + u->breaker_remaining_ms)
								  : NULL);
		add_i64(b, "opens", (int64_t)u->breaker_opens);
		json_object_object_add(b, "opened_by", notes_json(u->opened_by, u->n_opened_by));
		json_object_object_add(b, "recent_failures", notes_json(u->recent, u->n_recent));
		json_object_object_add(o, "breaker", b);
		add_bool(o, "asked_for_executables",
			 u->serves_executables || u->executable_misses < SVC_FETCH_EXEC_LEARN);
		json_object_array_add(a, o);
	}
	return a;
}

/* The index: in memory, in the store, being built or queued, or failed. */
static json_object *index_json(const stor_meta *m, bool known, const svc_resolver_info *ri)
{
	json_object *o = json_object_new_object();
	const char *state = ri->loaded                        ? "loaded"
			    : ri->build_queued                ? "queued"
			    : ri->stage && !strcmp(ri->stage, "building the index") ? "building"
			    : ri->build_failed                ? "failed"
			    : known && m->index_size          ? "stored"
							      : "none";
	add_str(o, "state", state);
	add_bool(o, "in_memory", ri->loaded);
	add_i64(o, "memory_bytes", (int64_t)ri->index_bytes);
	add_i64(o, "stored_bytes", known ? (int64_t)m->index_size : 0);
	add_bool(o, "from_executable", ri->loaded ? ri->from_executable
						  : known && m->kind == STOR_KIND_EXECUTABLE);
	add_str(o, "source", ri->loaded ? sym_index_source_name(ri->source) : NULL);
	json_object *fail = NULL;
	if (ri->build_failed) {
		fail = json_object_new_object();
		add_str(fail, "status", svc_resolve_status_name(ri->failed_status));
		add_str(fail, "error", ri->failed_error);
		add_i64(fail, "failures", ri->failures);
		add_i64(fail, "file_stored_at_ms", ri->failed_file_time);
		add_i64(fail, "retry_at_ms", ri->retry_at_ms);
	}
	json_object_object_add(o, "failed", fail);
	return o;
}

/* The answer a Symbolize call would get now, and the one line that says why. */
static void summary(json_object *doc, const stor_meta *m, bool known, const svc_resolver_info *ri,
		    bool fetching, int64_t now)
{
	char line[SYM_ERROR_MSG_MAX + 96];
	const char *state;
	if (ri->loaded) {
		state = "ok";
		snprintf(line, sizeof(line), "%s",
			 ri->from_executable ? "symbolized from the executable's symbols "
					       "(no debug info found)"
					     : "symbolized from debug info");
	} else if (ri->stage || fetching) {
		state = "pending";
		snprintf(line, sizeof(line), "in progress: %s", ri->stage ? ri->stage : "fetching");
	} else if (ri->negative) {
		state = svc_resolve_status_name(ri->neg_status);
		snprintf(line, sizeof(line), "%s", ri->neg_error);
	} else if (ri->build_failed) {
		state = svc_resolve_status_name(ri->failed_status);
		snprintf(line, sizeof(line), "index build failed: %s", ri->failed_error);
	} else if (known && m->state != STOR_STATE_PRESENT && m->neg_expiry > now) {
		state = stor_state_name(m->state);
		snprintf(line, sizeof(line), "%s", m->last_error);
	} else if (known && m->state == STOR_STATE_PRESENT) {
		state = "unknown";
		snprintf(line, sizeof(line), "%s stored, not loaded yet (the next call loads it)",
			 stor_kind_name(m->kind));
	} else {
		state = "unknown";
		snprintf(line, sizeof(line), "%s", known ? "the last search expired; the next call "
							  "searches again"
							: "never asked for");
	}
	add_str(doc, "state", state);
	add_str(doc, "summary", line);
}

int svc_status_render(stor_db *store, const svc_fetcher *fetcher, const svc_resolver *resolver,
		      const sym_build_id *id, struct evbuffer *out)
{
	static svc_source_outcome rows[MAX_ROWS]; /* loop thread only */
	char hex[SYM_BUILD_ID_HEX_MAX];
	sym_build_id_to_hex(id, hex);
	int64_t now = base_real_ms();
	stor_meta m;
	bool known = stor_get_meta(store, SVC_STORE_KEY(id), &m, NULL) == STOR_OK;
	svc_resolver_info ri;
	svc_resolver_describe(resolver, id, &ri);
	bool fetching = false;
	size_t n = svc_fetcher_describe(fetcher, id, rows, MAX_ROWS, &fetching);

	json_object *doc = json_object_new_object();
	if (!doc)
		return 500;
	add_str(doc, "build_id", hex);
	add_str(doc, "build_id_kind", sym_id_kind_name(id->kind)); /* the file's own (canonical) */
	summary(doc, &m, known, &ri, fetching, now);
	add_i64(doc, "now_ms", now);
	add_str(doc, "resolving", ri.stage);
	add_bool(doc, "fetch_in_flight", fetching);
	json_object_object_add(doc, "store", store_json(&m, known));
	json_object_object_add(doc, "negative_cache", negative_json(&m, known, &ri, now));
	json_object_object_add(doc, "index", index_json(&m, known, &ri));
	json_object_object_add(doc, "sources", sources_json(rows, n));
	json_object_object_add(doc, "upstreams", upstreams_json(fetcher, now));
	const char *text = json_object_to_json_string_ext(doc, JSON_C_TO_STRING_PRETTY |
							       JSON_C_TO_STRING_NOSLASHESCAPE);
	int rc = text && evbuffer_add_printf(out, "%s\n", text) >= 0 ? 200 : 500;
	json_object_put(doc);
	return rc;
}

/* The S3 tier's state: its credentials (failing after start: a key revoked
 * or rotated), its writes, the write-behind queue. NULL when none. */
static json_object *s3_json(const svc_fetcher *f)
{
	struct svc_s3 *s3 = svc_fetcher_s3(f);
	if (!s3)
		return NULL;
	long last = 0;
	uint64_t refusals = 0;
	svc_s3_auth a = svc_s3_auth_state(s3, &last, &refusals);
	svc_s3_stats st;
	svc_s3_get_stats(s3, &st);
	json_object *o = json_object_new_object(), *c = json_object_new_object();
	add_str(o, "name", svc_s3_name(s3));
	add_str(c, "state", a == SVC_S3_AUTH_OK ? "ok" : "failing");
	json_object_object_add(c, "last_refused_status", last ? json_object_new_int64(last) : NULL);
	add_i64(c, "refusals", (int64_t)refusals);
	json_object_object_add(o, "credentials", c);
	add_i64(o, "puts_ok", (int64_t)st.puts_ok);
	add_i64(o, "puts_failed", (int64_t)st.puts_failed);
	add_i64(o, "write_behind_queued", (int64_t)st.behind_len);
	return o;
}

int svc_status_global_render(const svc_fetcher *fetcher, struct evbuffer *out)
{
	int64_t now = base_real_ms();
	json_object *doc = json_object_new_object();
	if (!doc)
		return 500;
	json_object *s3 = s3_json(fetcher);
	bool failing = s3 && svc_s3_auth_state(svc_fetcher_s3(fetcher), NULL, NULL) != SVC_S3_AUTH_OK;
	add_str(doc, "summary", failing ? "the S3 tier refuses the credentials: uploads answer 503"
				       : "ok");
	add_i64(doc, "now_ms", now);
	json_object_object_add(doc, "s3", s3);
	json_object_object_add(doc, "upstreams", upstreams_json(fetcher, now));
	const char *text = json_object_to_json_string_ext(doc, JSON_C_TO_STRING_PRETTY |
							       JSON_C_TO_STRING_NOSLASHESCAPE);
	int rc = text && evbuffer_add_printf(out, "%s\n", text) >= 0 ? 200 : 500;
	json_object_put(doc);
	return rc;
}
