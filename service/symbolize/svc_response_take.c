// SPDX-License-Identifier: Apache-2.0
/*
 * svc_response_take: a response's end (svc_response.h): the locations not
 * given end empty, the MappingResults are added (in protobuf at the end of
 * the last section; in JSON as the codec writes them, svc_response_json.c),
 * and the sections are handed over as they are.
 */
#include <stdlib.h>
#include <string.h>

#include "service/symbolize/svc_response.h"
#include "service/symbolize/svc_response_impl.h"
#include "service/symbolize/svc_response_json.h"

static size_t error_size(const char *error)
{
	size_t n = error ? strlen(error) : 0;
	return n ? len_field_size(n) : 0;
}

static size_t mapping_size(const svc_response_mapping *m)
{
	return varint_field_size((uint64_t)(int64_t)m->status) + error_size(m->error) +
	       varint_field_size(m->retry_after_ms) +
	       2 * (size_t)(!!(m->flags & SYM_INDEX_HAS_FUNCTIONS) +
			    !!(m->flags & SYM_INDEX_HAS_FILENAMES) +
			    !!(m->flags & SYM_INDEX_HAS_LINE_NUMBERS) +
			    !!(m->flags & SYM_INDEX_HAS_INLINE_FRAMES));
}

/* The MappingResults' wire bytes at p (mappings_size's); returns their end. */
static uint8_t *put_mappings(uint8_t *p, const svc_response_mapping *maps, size_t n_maps)
{
	for (size_t i = 0; i < n_maps; i++) {
		const svc_response_mapping *m = &maps[i];
		p = put_len_header(p, TAG(4, SVC_WIRE_LEN), mapping_size(m));
		p = put_varint_field(p, TAG(1, SVC_WIRE_VARINT), (uint64_t)(int64_t)m->status);
		size_t n = m->error ? strlen(m->error) : 0;
		if (n) {
			p = put_len_header(p, TAG(2, SVC_WIRE_LEN), n);
			memcpy(p, m->error, n);
			p += n;
		}
		p = put_varint_field(p, TAG(3, SVC_WIRE_VARINT), m->retry_after_ms);
		p = put_varint_field(p, TAG(4, SVC_WIRE_VARINT),
				     !!(m->flags & SYM_INDEX_HAS_FUNCTIONS));
		p = put_varint_field(p, TAG(5, SVC_WIRE_VARINT),
				     !!(m->flags & SYM_INDEX_HAS_FILENAMES));
		p = put_varint_field(p, TAG(6, SVC_WIRE_VARINT),
				     !!(m->flags & SYM_INDEX_HAS_LINE_NUMBERS));
		p = put_varint_field(p, TAG(7, SVC_WIRE_VARINT),
				     !!(m->flags & SYM_INDEX_HAS_INLINE_FRAMES));
	}
	return p;
}

static size_t mappings_size(const svc_response_mapping *maps, size_t n_maps)
{
	size_t n = 0;
	for (size_t i = 0; i < n_maps; i++)
		n += len_field_size(mapping_size(&maps[i]));
	return n;
}

/* The message's end in JSON: the MappingResults written by the codec from
 * their wire bytes. */
static bool json_end(svc_response *r, const svc_response_mapping *maps, size_t n_maps)
{
	size_t n = mappings_size(maps, n_maps);
	uint8_t *wire = malloc(n ? n : 1);
	if (!wire) {
		r->oom = true;
		return false;
	}
	bool ok = svc_response_json_end(r, wire, (size_t)(put_mappings(wire, maps, n_maps) - wire));
	free(wire);
	return ok;
}

size_t svc_response_take(svc_response *r, const svc_response_mapping *maps, size_t n_maps,
			 svc_response_piece out[SVC_RESPONSE_PIECES])
{
	svc_response_tables *t = r->t;
	while (r->next_location < r->n_locations && !r->oom)
		svc_response_frames(r, 0, NULL, 0, false, 0);   /* an empty LocationResult */
	if (r->oom)
		return 0;
	if (r->json) {
		if (!json_end(r, maps, n_maps))
			return 0;
	} else if (n_maps) {
		/* The MappingResults end the last section (field 4 follows 3). */
		if (!section_reserve(r, &t->locations, mappings_size(maps, n_maps)))
			return 0;
		section_set_end(&t->locations,
				put_mappings(section_end(&t->locations), maps, n_maps));
	}
	base_vec *secs[SVC_RESPONSE_PIECES] = {&t->string_table, &t->functions, &t->locations};
	size_t n = 0;
	for (size_t i = 0; i < SVC_RESPONSE_PIECES; i++)
		if (secs[i]->len)
			out[n++] = svc_response_section_take(r, secs[i]);
	return n;
}
