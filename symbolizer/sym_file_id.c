// SPDX-License-Identifier: Apache-2.0
/*
 * sym_file_id: a file's identities from its bytes (see sym_file_id.h).
 */
#include "symbolizer/sym_file_id.h"
#include "symbolizer/sym_elf.h"
#include "symbolizer/sym_elf_util_impl.h"
#include "base/base_sha256.h"

#include <gelf.h>
#include <libelf.h>
#include <string.h>

#define HTL_PART SYM_HTLHASH_PART
#define HTL_LEN 16
#define GO_NOTE_TYPE 4   /* ELF_NOTE_GOBUILDID_TAG in Go's cmd/link */

void sym_htlhash(const void *data, size_t size, sym_build_id *out)
{
	const uint8_t *p = data;
	size_t part = size < HTL_PART ? size : HTL_PART;
	sym_htlhash_parts(p, p + size - part, size, out);
}

void sym_htlhash_parts(const void *head, const void *tail, uint64_t size, sym_build_id *out)
{
	size_t part = size < HTL_PART ? (size_t)size : HTL_PART;
	uint8_t len[8], digest[BASE_SHA256_LEN];
	for (int i = 0; i < 8; i++)
		len[i] = (uint8_t)(size >> (56 - 8 * i));
	base_sha256 s;
	base_sha256_init(&s);
	base_sha256_update(&s, head, part);
	base_sha256_update(&s, tail, part);
	base_sha256_update(&s, len, sizeof(len));
	base_sha256_final(&s, digest);
	memset(out, 0, sizeof(*out));
	out->kind = SYM_ID_HTLHASH;
	out->len = HTL_LEN;
	memcpy(out->bytes, digest, HTL_LEN);
}

bool sym_go_build_id_of_text(const char *text, size_t len, sym_build_id *out)
{
	if (len == 0 || len > SYM_GO_BUILD_ID_TEXT_MAX)
		return false;
	for (size_t i = 0; i < len; i++)
		if (text[i] <= ' ' || text[i] > '~')
			return false;
	uint8_t digest[BASE_SHA256_LEN];
	base_sha256_of(text, len, digest);
	memset(out, 0, sizeof(*out));
	out->kind = SYM_ID_GO;
	out->len = BASE_SHA256_LEN;
	memcpy(out->bytes, digest, BASE_SHA256_LEN);
	return true;
}

/* The Go note's string in one note section, if it has one. */
static bool go_note(Elf_Data *d, char *text)
{
	GElf_Nhdr n;
	size_t off = 0, name_off, desc_off, next;
	while (off < d->d_size && (next = gelf_getnote(d, off, &n, &name_off, &desc_off)) > 0) {
		const char *b = d->d_buf;
		if (n.n_type == GO_NOTE_TYPE && (n.n_namesz == 3 || n.n_namesz == 4) &&
		    memcmp(b + name_off, "Go", 3) == 0 &&
		    n.n_descsz > 0 && n.n_descsz <= SYM_GO_BUILD_ID_TEXT_MAX &&
		    desc_off + n.n_descsz <= d->d_size) {
			memcpy(text, b + desc_off, n.n_descsz);
			text[n.n_descsz] = '\0';
			return true;
		}
		off = next;
	}
	return false;
}

bool sym_go_build_id_text(const void *data, size_t size, char *text)
{
	Elf *elf;
	sym_error err;
	if (sym_elf_begin(data, size, &elf, &err) != SYM_OK)
		return false;
	bool found = false;
	for (Elf_Scn *scn = NULL; !found && (scn = elf_nextscn(elf, scn));) {
		GElf_Shdr shdr;
		const char *name = sym_elf_section_name(elf, scn, &shdr);
		if (!name || shdr.sh_type != SHT_NOTE || strcmp(name, ".note.go.buildid") != 0)
			continue;
		Elf_Data *d = elf_getdata(scn, NULL);
		found = d && d->d_buf && go_note(d, text);
	}
	elf_end(elf);
	return found;
}

size_t sym_file_ids(const void *data, size_t size, sym_build_id *ids)
{
	size_t n = 0;
	if (size == 0)
		return 0;
	sym_elf_info info;
	sym_error err;
	if (sym_elf_probe(data, size, &info, &err) == SYM_OK && info.build_id.len)
		ids[n++] = info.build_id;
	char text[SYM_GO_BUILD_ID_TEXT_MAX + 1];
	if (sym_go_build_id_text(data, size, text) &&
	    sym_go_build_id_of_text(text, strlen(text), &ids[n]))
		n++;
	sym_htlhash(data, size, &ids[n++]);
	return n;
}

const sym_build_id *sym_file_ids_canonical(const sym_build_id *ids, size_t n)
{
	const sym_build_id *hash = NULL;
	for (size_t i = 0; i < n; i++) {
		if (ids[i].kind == SYM_ID_GNU)
			return &ids[i];
		if (ids[i].kind == SYM_ID_HTLHASH)
			hash = &ids[i];
	}
	return hash;
}
