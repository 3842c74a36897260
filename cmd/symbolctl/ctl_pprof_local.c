// SPDX-License-Identifier: Apache-2.0
/*
 * ctl_pprof_local: `symbolctl pprof ... --debug-dir DIR`, a profile symbolized
 * here with no daemon, through the daemon's own fill step (svc_profile_decode,
 * svc_profile_fill: the same normalization of runtime addresses, return
 * addresses looked up at address - 1, the same Line and Function tables). Each
 * mapping's file is found by its build ID (ctl_local_index). Indexes are built
 * in memory, one per mapping with locations to fill. Mappings not found are reported as the daemon's are.
 */
#include "cmd/symbolctl/ctl_pprof_local.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "cmd/symbolctl/ctl_local_index.h"
#include "cmd/symbolctl/ctl_perf_profile.h"
#include "cmd/symbolctl/exit_codes.h"
#include "service/core/svc_build_id.h"
#include "service/resolve/svc_index_cache.h"
#include "service/symbolize/svc_profile_decode.h"
#include "service/symbolize/svc_profile_fill.h"
#include "symbolizer/sym_elf.h"
#include "symbolizer/sym_index.h"

#define STATUS(x) SYMBOLIZER__V1__MAPPING_RESULT__STATUS__STATUS_##x

typedef struct local_map {
	Symbolizer__V1__Mapping pb;
	svc_index_entry entry;
	void *blob;
	char hex[SYM_BUILD_ID_HEX_MAX];
} local_map;

/* The mappings resolved here; how many are not OK (reported on stderr). */
static size_t resolve(svc_profile_doc *d, local_map *lms, svc_lookup_mapping *maps,
		      const char *const *dirs, size_t n_dirs)
{
	const Perftools__Profiles__Profile *p = d->p;
	bool *wanted = calloc(p->n_mapping ? p->n_mapping : 1, 1);
	for (size_t i = 0; wanted && i < p->n_location; i++)
		if (d->loc_mapping[i] && p->location[i]->n_line == 0)
			wanted[d->loc_mapping[i] - 1] = true;
	size_t bad = 0;
	for (size_t i = 0; i < p->n_mapping; i++) {
		const Perftools__Profiles__Mapping *pm = p->mapping[i];
		local_map *lm = &lms[i];
		symbolizer__v1__mapping__init(&lm->pb);
		lm->pb.memory_start = pm->memory_start;
		lm->pb.memory_limit = pm->memory_limit;
		lm->pb.file_offset = pm->file_offset;
		lm->pb.address_kind = SYMBOLIZER__V1__ADDRESS_KIND__ADDRESS_KIND_RUNTIME;
		snprintf(lm->hex, sizeof(lm->hex), "%.*s", (int)sizeof(lm->hex) - 1,
			 p->string_table[pm->build_id]);
		for (char *s = lm->hex; *s; s++)
			if (*s >= 'A' && *s <= 'F')
				*s = (char)(*s - 'A' + 'a');
		lm->pb.build_id = lm->hex;
		svc_lookup_mapping *m = &maps[i];
		m->pb = &lm->pb;
		m->status = STATUS(NOT_FOUND);
		if (!wanted || !wanted[i])
			continue;
		const char *file = p->string_table[pm->filename];
		const char *bad_id = svc_build_id_check(lm->hex, &m->id);
		char why[512];
		if (bad_id)
			snprintf(why, sizeof(why), "%s", bad_id);
		else if (ctl_local_index("pprof", &m->id, file, dirs, n_dirs, &lm->entry, &lm->blob,
					 why, sizeof(why))) {
			m->status = STATUS(OK);
			m->entry = &lm->entry;
			continue;
		}
		bad++;
		fprintf(stderr, "symbolctl pprof: mapping %zu (build id %s, %s): not_found: %s\n",
			i + 1, lm->hex, file, why);
	}
	free(wanted);
	return bad;
}

int ctl_pprof_local(const uint8_t *prof, size_t len, const char *const *dirs, size_t n_dirs,
		    bool no_inline, bool no_demangle, uint8_t **out, size_t *out_len)
{
	svc_profile_limits lim = {SIZE_MAX / 2, SIZE_MAX / 2, SIZE_MAX / 2};
	base_arena arena = {0};
	svc_profile_doc d = {0};
	svc_error err;
	int rc = CTL_EXIT_IO;
	local_map *lms = NULL;
	svc_lookup_mapping *maps = NULL;
	if (!svc_profile_decode(prof, len, &lim, &arena, &d, &err)) {
		fprintf(stderr, "symbolctl pprof: not a pprof profile: %s\n", err.msg);
		goto out;
	}
	size_t nm = d.p->n_mapping ? d.p->n_mapping : 1;
	lms = calloc(nm, sizeof(*lms));
	maps = calloc(nm, sizeof(*maps));
	if (!lms || !maps) {
		fprintf(stderr, "symbolctl pprof: out of memory\n");
		goto out;
	}
	size_t bad = resolve(&d, lms, maps, dirs, n_dirs);
	svc_profile_fill_stats st = {0};
	if (!svc_profile_fill(&d, maps, no_inline, no_demangle, &arena, &st, &err)) {
		fprintf(stderr, "symbolctl pprof: %s\n", err.msg);
		goto out;
	}
	size_t plen = perftools__profiles__profile__get_packed_size(d.p);
	uint8_t *packed = malloc(plen ? plen : 1);
	if (!packed) {
		fprintf(stderr, "symbolctl pprof: out of memory\n");
		goto out;
	}
	perftools__profiles__profile__pack(d.p, packed);
	if (!d.gzipped) {
		*out = packed;
		*out_len = plen;
	} else {
		bool ok = ctl_gzip(packed, plen, out, out_len);
		free(packed);
		if (!ok) {
			fprintf(stderr, "symbolctl pprof: out of memory gzipping the profile\n");
			goto out;
		}
	}
	rc = bad ? CTL_EXIT_NOT_FOUND : CTL_EXIT_OK;
out:
	for (size_t i = 0; lms && i < d.p->n_mapping; i++) {
		sym_index_destroy(lms[i].entry.index);
		free(lms[i].blob);
	}
	free(lms);
	free(maps);
	svc_profile_doc_release(&d);
	base_arena_deinit(&arena);
	return rc;
}
