// SPDX-License-Identifier: Apache-2.0
/*
 * svc_mappings: a call's mappings checked, resolved and waited for through
 * svc_resolve_set, their answers as MappingResult statuses (svc_mappings.h).
 */
#include "service/symbolize/svc_mappings.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "service/core/svc_build_id.h"

#define STATUS(x) SYMBOLIZER__V1__MAPPING_RESULT__STATUS__STATUS_##x

struct svc_mappings {
	svc_resolver *resolver;
	svc_lookup_mapping *maps;
	size_t n;
	svc_resolve_set *set;
};

static void apply_resolution(svc_lookup_mapping *m, svc_resolution *res)
{
	switch (res->status) {
	case SVC_RESOLVE_OK:
		m->status = STATUS(OK);
		m->entry = res->entry;
		return;
	case SVC_RESOLVE_NOT_FOUND:
		m->status = STATUS(NOT_FOUND);
		break;
	case SVC_RESOLVE_NO_SYMBOLS:
		m->status = STATUS(NO_SYMBOLS);
		break;
	case SVC_RESOLVE_TOO_LARGE:
		m->status = STATUS(TOO_LARGE);
		break;
	default:
		m->status = STATUS(ERROR);
		m->retry_after_ms = 5000;
		break;
	}
	snprintf(m->error, sizeof(m->error), "%s", res->error);
}

static void answer(void *arg, size_t i, const svc_resolve_answer *a)
{
	svc_lookup_mapping *lm = &((svc_mappings *)arg)->maps[i];
	if (!a->pending) {
		apply_resolution(lm, a->res);
		return;
	}
	lm->status = STATUS(PENDING);
	snprintf(lm->error, sizeof(lm->error), "%s", a->why);
	lm->retry_after_ms = a->retry_after_ms;
}

svc_mappings *svc_mappings_create(struct event_base *base, svc_resolver *resolver,
				  svc_lookup_mapping *maps, size_t n, uint32_t max_new_lookups)
{
	svc_mappings *m = calloc(1, sizeof(*m));
	if (!m)
		return NULL;
	m->set = svc_resolve_set_create(base, resolver, n, answer, m);
	if (!m->set) {
		free(m);
		return NULL;
	}
	svc_resolve_set_bound_new(m->set, max_new_lookups);
	m->resolver = resolver;
	m->maps = maps;
	m->n = n;
	return m;
}

void svc_mappings_destroy(svc_mappings *m)
{
	if (!m)
		return;
	svc_resolve_set_destroy(m->set);
	for (size_t i = 0; i < m->n; i++) {
		svc_resolver_release(m->resolver, m->maps[i].entry);
		m->maps[i].entry = NULL;
	}
	free(m);
}

/* Why a mapping cannot be resolved; NULL when it can. */
static const char *check(const Symbolizer__V1__Mapping *pm, sym_build_id *id)
{
	const char *bad = svc_build_id_check_kind(pm->build_id_kind, pm->build_id, id);
	if (!bad && (unsigned)pm->address_kind > SYMBOLIZER__V1__ADDRESS_KIND__ADDRESS_KIND_SECTION)
		bad = "address_kind is not one of ELF, RUNTIME, FILE_OFFSET, SECTION";
	if (!bad && pm->section && strlen(pm->section) > 255)
		bad = "section name longer than 255 bytes";
	if (!bad && pm->address_kind == SYMBOLIZER__V1__ADDRESS_KIND__ADDRESS_KIND_RUNTIME &&
	    pm->memory_limit != 0 && pm->memory_limit <= pm->memory_start)
		bad = "memory_limit must be above memory_start";
	return bad;
}

bool svc_mappings_start(svc_mappings *m, int64_t wait_ms, void (*done)(void *arg), void *arg)
{
	for (size_t i = 0; i < m->n; i++) {
		svc_lookup_mapping *lm = &m->maps[i];
		if (lm->skip)
			continue;
		const char *bad = check(lm->pb, &lm->id);
		if (bad) {
			lm->status = STATUS(INVALID);
			snprintf(lm->error, sizeof(lm->error), "%s", bad);
			continue;
		}
		svc_resolve_set_add(m->set, i, &lm->id, SVC_ARTIFACT_SYMBOLS);
	}
	return svc_resolve_set_wait(m->set, wait_ms, done, arg);
}

void svc_mappings_stop(svc_mappings *m)
{
	svc_resolve_set_stop(m->set);
}

static void resume(void *arg)
{
	svc_rpc_flow_resume(arg);
}

svc_rpc_flow_wait svc_mappings_wait(svc_mappings *m, svc_rpc_flow *fl, int64_t wait_ms)
{
	return svc_mappings_start(m, wait_ms, resume, fl) ? SVC_RPC_FLOW_READY
							 : SVC_RPC_FLOW_WAITING;
}
