// SPDX-License-Identifier: Apache-2.0
/*
 * sym_gopclntab: the pclntab reader (see sym_gopclntab.h). Every read goes
 * through rd32/rdptr with an explicit bound; offsets are 64-bit so no sum of
 * table values wraps.
 */
#include "symbolizer/sym_gopclntab_impl.h"

#include <string.h>

#define MAGIC_12 0xfffffffbu
#define MAGIC_116 0xfffffffau
#define MAGIC_118 0xfffffff0u
#define MAGIC_120 0xfffffff1u

static bool fits(uint64_t off, uint64_t len, uint64_t end)
{
	return off <= end && len <= end - off;
}

static uint32_t get32(const uint8_t *p, bool be)
{
	return be ? (uint32_t)p[0] << 24 | (uint32_t)p[1] << 16 | (uint32_t)p[2] << 8 | p[3]
		  : (uint32_t)p[3] << 24 | (uint32_t)p[2] << 16 | (uint32_t)p[1] << 8 | p[0];
}

static uint64_t getptr(const uint8_t *p, bool be, unsigned ptrsize)
{
	if (ptrsize == 4)
		return get32(p, be);
	uint64_t a = get32(p, be), b = get32(p + 4, be);
	return be ? a << 32 | b : b << 32 | a;
}

/* Reads a uint32 at off if [off, off + 4) lies below end. */
static bool rd32(const sym_gopcln *t, uint64_t off, uint64_t end, uint32_t *v)
{
	if (end > t->size || !fits(off, 4, end))
		return false;
	*v = get32(t->data + off, t->big_endian);
	return true;
}

static bool rdptr(const sym_gopcln *t, uint64_t off, uint64_t end, uint64_t *v)
{
	if (end > t->size || !fits(off, t->ptrsize, end))
		return false;
	*v = getptr(t->data + off, t->big_endian, t->ptrsize);
	return true;
}

bool sym_gopcln_looks_like(const uint8_t *d, size_t size)
{
	if (size < 16 || d[4] != 0 || d[5] != 0 || (d[6] != 1 && d[6] != 2 && d[6] != 4) ||
	    (d[7] != 4 && d[7] != 8))
		return false;
	uint32_t le = get32(d, false), be = get32(d, true);
	for (int k = 0; k < 2; k++) {
		uint32_t m = k ? be : le;
		if (m == MAGIC_12 || m == MAGIC_116 || m == MAGIC_118 || m == MAGIC_120)
			return true;
	}
	return false;
}

/* Header word i (after the 8-byte prefix) as an offset into the table. */
static sym_errc header_word(const sym_gopcln *t, unsigned i, uint64_t *v, sym_error *err)
{
	if (!rdptr(t, 8 + (uint64_t)i * t->ptrsize, t->size, v))
		return sym_error_set(err, SYM_E_BAD_ELF, "pclntab: header truncated");
	return SYM_OK;
}

/* The 1.16+ tables: each from its header offset to the next one's. */
static sym_errc split_tables(sym_gopcln *t, unsigned first, sym_error *err)
{
	uint64_t off[5];
	for (unsigned i = 0; i < 5; i++)
		if (header_word(t, first + i, &off[i], err))
			return SYM_E_BAD_ELF;
	uint64_t hdr_end = 8 + (uint64_t)(first + 5) * t->ptrsize;
	for (unsigned i = 0; i < 5; i++) {
		uint64_t next = i + 1 < 5 ? off[i + 1] : t->size;
		if (off[i] < hdr_end || off[i] > next || next > t->size)
			return sym_error_set(err, SYM_E_BAD_ELF,
					     "pclntab: table %u at %#llx out of order or range", i,
					     (unsigned long long)off[i]);
	}
	t->name_off = off[0];
	t->cu_off = t->name_end = off[1];
	t->file_off = t->cu_end = off[2];
	t->pc_off = t->file_end = off[3];
	t->func_off = t->pc_end = off[4];
	t->func_end = t->size;
	t->ftab_off = t->func_off;
	return SYM_OK;
}

static uint64_t ftab_field(const sym_gopcln *t)
{
	return t->version >= SYM_GOPCLN_118 ? 4 : t->ptrsize;
}

sym_errc sym_gopcln_open(sym_gopcln *t, const void *data, size_t size, uint64_t vaddr,
			 uint64_t text_start, sym_error *err)
{
	memset(t, 0, sizeof(*t));
	t->data = data;
	t->size = size;
	t->vaddr = vaddr;
	if (!sym_gopcln_looks_like(data, size))
		return sym_error_set(err, SYM_E_BAD_ELF, "pclntab: no Go 1.2+ header");
	const uint8_t *d = data;
	uint32_t le = get32(d, false), be = get32(d, true);
	t->big_endian = !(le == MAGIC_12 || le == MAGIC_116 || le == MAGIC_118 || le == MAGIC_120);
	uint32_t m = t->big_endian ? be : le;
	t->version = m == MAGIC_12 ? SYM_GOPCLN_12 : m == MAGIC_116 ? SYM_GOPCLN_116
		     : m == MAGIC_118 ? SYM_GOPCLN_118 : SYM_GOPCLN_120;
	t->quantum = d[6];
	t->ptrsize = d[7];
	if (header_word(t, 0, &t->nfunc, err))
		return SYM_E_BAD_ELF;
	sym_errc rc = SYM_OK;
	if (t->version == SYM_GOPCLN_12) {
		/* One table: names, pc tables and _func records at offsets from its start. */
		t->name_end = t->pc_end = t->func_end = t->file_end = size;
		t->ftab_off = 8 + (uint64_t)t->ptrsize;
	} else if (t->version == SYM_GOPCLN_116) {
		rc = split_tables(t, 2, err);
	} else {
		uint64_t ts = 0;
		if ((rc = header_word(t, 2, &ts, err)) == SYM_OK)
			rc = split_tables(t, 3, err);
		t->text_start = ts ? ts : text_start;
		t->text_from_header = ts != 0;
	}
	if (rc)
		return rc;
	if (t->nfunc == 0 || t->nfunc > SYM_GOPCLN_MAX_FUNCS)
		return sym_error_set(err, SYM_E_BAD_ELF, "pclntab: %llu functions",
				     (unsigned long long)t->nfunc);
	uint64_t fsz = ftab_field(t), tab = (t->nfunc * 2 + 1) * fsz;
	if (!fits(t->ftab_off, tab, t->func_end))
		return sym_error_set(err, SYM_E_BAD_ELF, "pclntab: function table of %llu "
				     "entries past the end", (unsigned long long)t->nfunc);
	if (t->version == SYM_GOPCLN_12) {
		/* After the functab: the file table's offset; its first word is its count. */
		uint32_t fileoff, n;
		if (!rd32(t, t->ftab_off + tab, size, &fileoff) || !rd32(t, fileoff, size, &n) ||
		    !fits(fileoff, (uint64_t)n * 4, size))
			return sym_error_set(err, SYM_E_BAD_ELF, "pclntab: file table out of range");
		t->file_off = fileoff;
		t->nfiles = n;
	}
	return SYM_OK;
}

sym_errc sym_gopcln_func_at(const sym_gopcln *t, uint64_t i, sym_gopcln_func *f, sym_error *err)
{
	memset(f, 0, sizeof(*f));
	if (i >= t->nfunc)
		return sym_error_set(err, SYM_E_BAD_ELF, "pclntab: function %llu of %llu",
				     (unsigned long long)i, (unsigned long long)t->nfunc);
	uint64_t fsz = ftab_field(t), at = t->ftab_off + i * 2 * fsz;
	uint64_t e0 = 0, off = 0, e1 = 0;
	bool ok;
	if (fsz == 4) {
		uint32_t a = 0, b = 0, c = 0;
		ok = rd32(t, at, t->func_end, &a) && rd32(t, at + 4, t->func_end, &b) &&
		     rd32(t, at + 8, t->func_end, &c);
		e0 = a, off = b, e1 = c;
	} else {
		ok = rdptr(t, at, t->func_end, &e0) && rdptr(t, at + fsz, t->func_end, &off) &&
		     rdptr(t, at + 2 * fsz, t->func_end, &e1);
	}
	if (!ok)
		return sym_error_set(err, SYM_E_BAD_ELF, "pclntab: functab entry %llu truncated",
				     (unsigned long long)i);
	uint64_t base = t->version == SYM_GOPCLN_12 ? 0 : t->func_off;
	uint64_t rec = base + off;
	/* Fixed part: entry, 7 or 8 uint32 fields, then version-specific bytes. */
	uint64_t sz0 = t->version >= SYM_GOPCLN_118 ? 4 : t->ptrsize;
	uint64_t fixed = t->version == SYM_GOPCLN_12 ? sz0 + 32
			 : t->version == SYM_GOPCLN_120 ? sz0 + 40 : sz0 + 36;
	if (off > t->func_end || !fits(rec, fixed, t->func_end))
		return sym_error_set(err, SYM_E_BAD_ELF, "pclntab: function %llu record at %#llx "
				     "out of range", (unsigned long long)i, (unsigned long long)off);
	uint32_t v[8];
	for (unsigned k = 0; k < 8; k++)
		rd32(t, rec + sz0 + k * 4, t->func_end, &v[k]);
	uint64_t entry;
	if (sz0 == 4)
		entry = t->text_start + get32(t->data + rec, t->big_endian);
	else
		entry = getptr(t->data + rec, t->big_endian, t->ptrsize);
	if (fsz == 4) {
		e0 += t->text_start;
		e1 += t->text_start;
	}
	f->entry = entry;
	f->end = e1;
	f->nameoff = v[0];
	f->pcfile = v[4];
	f->pcln = v[5];
	f->npcdata = v[6];
	if (t->version == SYM_GOPCLN_12) {
		/* Go 1.2-1.9: nfuncdata int32; 1.10+: funcID uint8, [2]int8, nfuncdata
		 * uint8 (its last byte, whichever the byte order). */
		uint8_t last = t->data[rec + fixed - 1];
		f->nfuncdata = last ? last : v[7];
	} else {
		f->cu_offset = v[7];
		f->nfuncdata = t->data[rec + fixed - 1];
	}
	if (entry != e0 || e1 <= e0)
		return sym_error_set(err, SYM_E_BAD_ELF, "pclntab: function %llu entry %#llx "
				     "disagrees with its table (%#llx-%#llx)", (unsigned long long)i,
				     (unsigned long long)entry, (unsigned long long)e0,
				     (unsigned long long)e1);
	if (f->npcdata > SYM_GOPCLN_MAX_PCDATA || f->nfuncdata > 255 ||
	    !fits(rec + fixed, (uint64_t)f->npcdata * 4, t->func_end))
		return sym_error_set(err, SYM_E_BAD_ELF, "pclntab: function %llu pcdata out of range",
				     (unsigned long long)i);
	f->pcdata_at = rec + fixed;
	uint64_t fd = f->pcdata_at + (uint64_t)f->npcdata * 4;
	uint64_t fdsz = t->version >= SYM_GOPCLN_118 ? 4 : t->ptrsize;
	if (fdsz == 8 && ((t->vaddr + fd) & 4))
		fd += 4;   /* funcdata pointers are pointer-aligned in memory */
	if (!fits(fd, (uint64_t)f->nfuncdata * fdsz, t->func_end))
		f->nfuncdata = 0;   /* unreachable funcdata: no inline tree, still names and lines */
	f->funcdata_at = fd;
	return SYM_OK;
}

/* A NUL-terminated string at off within [lo, end), or NULL. */
static const char *string_in(const sym_gopcln *t, uint64_t lo, uint64_t end, uint64_t off)
{
	if (end > t->size || lo > end || off >= end - lo)
		return NULL;
	const uint8_t *s = t->data + lo + off;
	return memchr(s, 0, end - lo - off) ? (const char *)s : NULL;
}

const char *sym_gopcln_name(const sym_gopcln *t, uint32_t nameoff)
{
	return string_in(t, t->name_off, t->name_end, nameoff);
}

const char *sym_gopcln_file(const sym_gopcln *t, const sym_gopcln_func *f, int32_t fileno)
{
	if (fileno < 0)
		return NULL;
	uint32_t off;
	if (t->version == SYM_GOPCLN_12) {
		if (fileno == 0 || (uint64_t)fileno >= t->nfiles ||
		    !rd32(t, t->file_off + (uint64_t)fileno * 4, t->size, &off))
			return NULL;
		return string_in(t, 0, t->size, off);
	}
	if (!rd32(t, t->cu_off + ((uint64_t)f->cu_offset + (uint32_t)fileno) * 4, t->cu_end, &off) ||
	    off == UINT32_MAX)
		return NULL;
	return string_in(t, t->file_off, t->file_end, off);
}

uint32_t sym_gopcln_pcdata(const sym_gopcln *t, const sym_gopcln_func *f, uint32_t k)
{
	uint32_t v = 0;
	if (k < f->npcdata)
		rd32(t, f->pcdata_at + (uint64_t)k * 4, t->func_end, &v);
	return v;
}

void sym_gopcln_pcv_init(sym_gopcln_pcv *it, const sym_gopcln *t, uint32_t off,
			 const sym_gopcln_func *f)
{
	memset(it, 0, sizeof(*it));
	it->t = t;
	it->p = t->pc_off + off;
	it->end = t->pc_end;
	it->pc = f->entry;
	it->fend = f->end;
	it->val = -1;
	it->first = true;
	it->done = off == 0 || it->p >= it->end;
}

static bool varint(sym_gopcln_pcv *it, uint32_t *v)
{
	uint32_t x = 0;
	for (unsigned shift = 0; shift < 35; shift += 7) {
		if (it->p >= it->end)
			return false;
		uint8_t b = it->t->data[it->p++];
		x |= (uint32_t)(b & 0x7f) << shift;
		if (!(b & 0x80)) {
			*v = x;
			return true;
		}
	}
	return false;
}

int sym_gopcln_pcv_next(sym_gopcln_pcv *it, uint64_t *lo, uint64_t *hi, int32_t *val)
{
	while (!it->done) {
		uint32_t uv, pcd;
		if (it->p >= it->end)
			return it->done = true, -1;
		if (it->t->data[it->p] == 0 && !it->first)
			return it->done = true, 0;
		if (!varint(it, &uv) || !varint(it, &pcd))
			return it->done = true, -1;
		it->first = false;
		it->steps++;
		it->val = (int32_t)((uint32_t)it->val + (-(uv & 1) ^ (uv >> 1)));
		uint64_t start = it->pc;
		it->pc += (uint64_t)pcd * it->t->quantum;
		if (start >= it->fend)
			return it->done = true, 0;
		if (it->pc > start) {
			*lo = start;
			*hi = it->pc < it->fend ? it->pc : it->fend;
			*val = it->val;
			return 1;
		}
	}
	return 0;
}

int32_t sym_gopcln_pcvalue(const sym_gopcln *t, uint32_t off, const sym_gopcln_func *f, uint64_t pc,
			   uint64_t *steps)
{
	sym_gopcln_pcv it;
	sym_gopcln_pcv_init(&it, t, off, f);
	uint64_t lo, hi;
	int32_t v, found = -1;
	while (sym_gopcln_pcv_next(&it, &lo, &hi, &v) == 1)
		if (pc >= lo && pc < hi) {
			found = v;
			break;
		}
	if (steps)
		*steps += it.steps;
	return found;
}

/* The bytes at address addr of the image, with how many follow; NULL if none. */
static const uint8_t *image_at(const sym_gopcln *t, uint64_t addr, size_t *avail)
{
	for (size_t i = 0; i < t->nsegs; i++) {
		const sym_gopcln_seg *s = &t->segs[i];
		if (addr >= s->vaddr && addr - s->vaddr < s->size) {
			*avail = s->size - (size_t)(addr - s->vaddr);
			return s->data + (addr - s->vaddr);
		}
	}
	return NULL;
}

/*
 * The PCDATA and FUNCDATA slots of the inline tree: fixed since 1.16; in a
 * 1.2 table, Go 1.13-1.15's when the image holds the build-info blob (1.13+),
 * else Go 1.12's (Go 1.9-1.11 used the same slots with another inlinedCall,
 * refused by inl_shape_ok).
 */
static void inl_slots(const sym_gopcln *t, uint32_t *pcdata, uint32_t *funcdata)
{
	*pcdata = SYM_GOPCLN_PCDATA_INLTREE;
	*funcdata = SYM_GOPCLN_FUNCDATA_INLTREE;
	if (t->version == SYM_GOPCLN_12 && t->buildinfo) {
		*funcdata = SYM_GOPCLN_FUNCDATA_INLTREE_113;
	} else if (t->version == SYM_GOPCLN_12) {
		*pcdata = SYM_GOPCLN_PCDATA_INLTREE_112;
		*funcdata = SYM_GOPCLN_FUNCDATA_INLTREE_112;
	}
}

uint32_t sym_gopcln_inl_pcdata(const sym_gopcln *t, const sym_gopcln_func *f)
{
	uint32_t pcd, fd;
	inl_slots(t, &pcd, &fd);
	return sym_gopcln_pcdata(t, f, pcd);
}

/* Address of f's inline tree, 0 when none or unreachable. */
static uint64_t inltree_addr(const sym_gopcln *t, const sym_gopcln_func *f)
{
	uint32_t pcd, fd;
	inl_slots(t, &pcd, &fd);
	if (f->nfuncdata <= fd)
		return 0;
	if (t->version >= SYM_GOPCLN_118) {
		uint32_t off;
		if (!t->gofunc ||
		    !rd32(t, f->funcdata_at + SYM_GOPCLN_FUNCDATA_INLTREE * 4, t->func_end, &off) ||
		    off == UINT32_MAX)
			return 0;
		return t->gofunc + off;
	}
	uint64_t p;
	if (!rdptr(t, f->funcdata_at + (uint64_t)fd * t->ptrsize, t->func_end, &p))
		return 0;
	return p;
}

/*
 * A 1.2 table's tree must open as 1.12+'s inlinedCall does: entry 0 is a root
 * (parent int16 < 0) and its pad byte is 0; Go 1.9-1.11's entry (parent int32
 * -1, then file, line, func_, no parentPc) has 0xff there.
 */
static bool inl_shape_ok(const sym_gopcln *t, const uint8_t *p)
{
	if (t->version != SYM_GOPCLN_12)
		return true;
	uint8_t parent_sign = t->big_endian ? p[0] : p[1];
	return (parent_sign & 0x80) && p[3] == 0;
}

bool sym_gopcln_has_inltree(const sym_gopcln *t, const sym_gopcln_func *f)
{
	size_t avail;
	uint64_t a = inltree_addr(t, f);
	const uint8_t *p = a ? image_at(t, a, &avail) : NULL;
	return p && avail >= 20 && inl_shape_ok(t, p);
}

bool sym_gopcln_inl_at(const sym_gopcln *t, const sym_gopcln_func *f, int32_t ix,
		       sym_gopcln_inl *out)
{
	uint64_t a = inltree_addr(t, f);
	/* 1.12-1.19: parent int16, funcID, pad, file, line, func_, parentPc (20 bytes);
	 * 1.20+: funcID, pad[3], nameOff, parentPc, startLine (16 bytes). */
	uint64_t esz = t->version >= SYM_GOPCLN_120 ? 16 : 20;
	uint64_t name_at = t->version >= SYM_GOPCLN_120 ? 4 : 12;
	size_t avail;
	const uint8_t *p;
	if (!a || ix < 0 || ix >= SYM_GOPCLN_MAX_INL_INDEX ||
	    !(p = image_at(t, a + (uint64_t)ix * esz, &avail)) || avail < esz)
		return false;
	out->nameoff = get32(p + name_at, t->big_endian);
	out->parent_pc = (int32_t)get32(p + name_at + 4, t->big_endian);
	return true;
}
