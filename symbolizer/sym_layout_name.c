// SPDX-License-Identifier: Apache-2.0
/*
 * sym_layout_name: what a member's type is called (as pahole prints it) and
 * how big it is, for the layout builder (sym_layout_impl.h). Every walk along
 * DW_AT_type is bounded by LAYOUT_MAX_DEPTH, so reference loops end.
 */
#include "symbolizer/sym_layout_impl.h"

#include <dwarf.h>
#include <stdio.h>
#include <string.h>

bool sym_layout_attr_type(Dwarf_Die *die, Dwarf_Die *out)
{
	Dwarf_Attribute a;
	if (!dwarf_attr_integrate(die, DW_AT_type, &a))
		return false;
	return dwarf_formref_die(&a, out) != NULL;
}

static bool is_qualifier(int tag)
{
	return tag == DW_TAG_const_type || tag == DW_TAG_volatile_type ||
	       tag == DW_TAG_restrict_type || tag == DW_TAG_atomic_type;
}

bool sym_layout_strip(Dwarf_Die *type, Dwarf_Die *out, const char **typedef_name)
{
	Dwarf_Die cur = *type;
	for (int i = 0; i < LAYOUT_MAX_DEPTH; i++) {
		int tag = dwarf_tag(&cur);
		if (tag != DW_TAG_typedef && !is_qualifier(tag)) {
			*out = cur;
			return true;
		}
		if (tag == DW_TAG_typedef && typedef_name)
			*typedef_name = dwarf_diename(&cur);
		Dwarf_Die next;
		if (!sym_layout_attr_type(&cur, &next))
			return false;
		cur = next;
	}
	return false;
}

/* A bounded string under construction. */
struct sbuf {
	char *p;
	size_t cap, len;
};

static void put(struct sbuf *s, const char *t)
{
	size_t n = strlen(t);
	if (s->len + n >= s->cap)
		n = s->cap - 1 - s->len;
	memcpy(s->p + s->len, t, n);
	s->len += n;
	s->p[s->len] = '\0';
}

static void name_of(Dwarf_Die *t, struct sbuf *s, int depth);

static void aggregate_name(Dwarf_Die *t, const char *kw, struct sbuf *s)
{
	const char *n = dwarf_diename(t);
	put(s, kw);
	put(s, " ");
	put(s, n ? n : "{...}");
}

/* "RET (*)(ARGS)" for a subroutine type (pointer given by the caller). */
static void function_name(Dwarf_Die *t, struct sbuf *s, int depth)
{
	Dwarf_Die ret, child;
	if (sym_layout_attr_type(t, &ret))
		name_of(&ret, s, depth + 1);
	else
		put(s, "void");
	put(s, " (*)(");
	int n = 0;
	if (dwarf_child(t, &child) == 0) {
		do {
			int tag = dwarf_tag(&child);
			if (tag == DW_TAG_unspecified_parameters) {
				put(s, n++ ? ", ..." : "...");
			} else if (tag == DW_TAG_formal_parameter) {
				Dwarf_Die pt;
				if (n++)
					put(s, ", ");
				if (sym_layout_attr_type(&child, &pt))
					name_of(&pt, s, depth + 1);
				else
					put(s, "void");
			}
		} while (dwarf_siblingof(&child, &child) == 0 && n < 64);
	}
	if (!n)
		put(s, "void");
	put(s, ")");
}

static void pointer_name(Dwarf_Die *t, const char *suffix, struct sbuf *s, int depth)
{
	Dwarf_Die to;
	if (!sym_layout_attr_type(t, &to)) {
		put(s, "void ");
		put(s, suffix);
		return;
	}
	int tag = dwarf_tag(&to);
	if (tag == DW_TAG_subroutine_type) {
		function_name(&to, s, depth);
		return;
	}
	name_of(&to, s, depth + 1);
	bool wide = false;
	if (is_qualifier(tag)) {
		Dwarf_Die under;
		wide = !sym_layout_attr_type(&to, &under) || dwarf_tag(&under) != DW_TAG_pointer_type;
	}
	put(s, wide ? "  " : " ");
	put(s, suffix);
}

static void qualified_name(Dwarf_Die *t, const char *kw, struct sbuf *s, int depth)
{
	Dwarf_Die under;
	bool has = sym_layout_attr_type(t, &under);
	if (has && dwarf_tag(&under) == DW_TAG_pointer_type) {
		name_of(&under, s, depth + 1);
		put(s, " ");
		put(s, kw);
		return;
	}
	put(s, kw);
	put(s, " ");
	if (has)
		name_of(&under, s, depth + 1);
	else
		put(s, "void");
}

static void name_of(Dwarf_Die *t, struct sbuf *s, int depth)
{
	if (depth > LAYOUT_MAX_DEPTH) {
		put(s, "<loop>");
		return;
	}
	Dwarf_Die under;
	const char *n;
	switch (dwarf_tag(t)) {
	case DW_TAG_structure_type: aggregate_name(t, "struct", s); break;
	case DW_TAG_union_type: aggregate_name(t, "union", s); break;
	case DW_TAG_class_type: aggregate_name(t, "class", s); break;
	case DW_TAG_enumeration_type: aggregate_name(t, "enum", s); break;
	case DW_TAG_pointer_type: pointer_name(t, "*", s, depth); break;
	case DW_TAG_reference_type: pointer_name(t, "&", s, depth); break;
	case DW_TAG_rvalue_reference_type: pointer_name(t, "&&", s, depth); break;
	case DW_TAG_const_type: qualified_name(t, "const", s, depth); break;
	case DW_TAG_volatile_type: qualified_name(t, "volatile", s, depth); break;
	case DW_TAG_atomic_type: qualified_name(t, "_Atomic", s, depth); break;
	case DW_TAG_restrict_type:
		if (sym_layout_attr_type(t, &under))
			name_of(&under, s, depth + 1);
		else
			put(s, "void");
		break;
	case DW_TAG_array_type:
		if (sym_layout_attr_type(t, &under))
			name_of(&under, s, depth + 1);
		put(s, "[]");
		break;
	case DW_TAG_subroutine_type: function_name(t, s, depth); break;
	default:
		n = dwarf_diename(t);
		put(s, n ? n : "<unknown>");
		break;
	}
}

void sym_layout_type_name(Dwarf_Die *type, char *buf, size_t cap)
{
	struct sbuf s = {buf, cap, 0};
	buf[0] = '\0';
	if (!type) {
		put(&s, "void");
		return;
	}
	name_of(type, &s, 0);
}

/*
 * A bound as a signed value. Constant forms are unsigned in DWARF (libdw would
 * sign-extend DW_FORM_data1 254 to -2): only sdata/implicit_const are signed,
 * and an all-ones data4/data8 is gcc's -1.
 */
static bool bound_value(Dwarf_Attribute *a, int64_t *out)
{
	Dwarf_Word u;
	Dwarf_Sword sv;
	unsigned form = dwarf_whatform(a);
	if (form == DW_FORM_sdata || form == DW_FORM_implicit_const) {
		if (dwarf_formsdata(a, &sv) != 0)
			return false;
		*out = sv;
		return true;
	}
	if (dwarf_formudata(a, &u) != 0)
		return false;
	if ((form == DW_FORM_data4 && u == 0xffffffffu) || u == UINT64_MAX)
		*out = -1;
	else if (u > (uint64_t)INT64_MAX)
		return false;
	else
		*out = (int64_t)u;
	return true;
}

/* Elements in one subrange; UINT64_MAX for a flexible array (no bound). */
uint64_t sym_layout_subrange_count(Dwarf_Die *sr)
{
	Dwarf_Attribute a;
	Dwarf_Word v;
	if (dwarf_attr_integrate(sr, DW_AT_count, &a))
		return dwarf_formudata(&a, &v) == 0 ? v : UINT64_MAX;
	int64_t up, lo = 0;
	if (!dwarf_attr_integrate(sr, DW_AT_upper_bound, &a) || !bound_value(&a, &up))
		return UINT64_MAX;
	if (up == -1)
		return 0;
	if (dwarf_attr_integrate(sr, DW_AT_lower_bound, &a) && !bound_value(&a, &lo))
		return UINT64_MAX;
	if (lo < 0 || up < lo)
		return UINT64_MAX;
	return (uint64_t)(up - lo) + 1;
}

static bool array_size(Dwarf_Die *t, uint64_t *out, int depth)
{
	Dwarf_Die el, sr;
	uint64_t n = 1, es;
	if (!sym_layout_attr_type(t, &el) || !sym_layout_type_size(&el, &es, depth + 1))
		return false;
	if (dwarf_child(t, &sr) == 0) {
		do {
			if (dwarf_tag(&sr) != DW_TAG_subrange_type)
				continue;
			uint64_t c = sym_layout_subrange_count(&sr);
			if (c == UINT64_MAX)
				c = 0;
			if (c && n > LAYOUT_MAX_SIZE / c)
				return false;
			n *= c;
		} while (dwarf_siblingof(&sr, &sr) == 0);
	}
	if (es && n > LAYOUT_MAX_SIZE / es)
		return false;
	*out = n * es;
	return true;
}

bool sym_layout_type_size(Dwarf_Die *t, uint64_t *out, int depth)
{
	if (depth > LAYOUT_MAX_DEPTH)
		return false;
	Dwarf_Attribute a;
	Dwarf_Word v;
	int tag = dwarf_tag(t);
	if (tag == DW_TAG_array_type)
		return array_size(t, out, depth);
	if (dwarf_attr_integrate(t, DW_AT_byte_size, &a) && dwarf_formudata(&a, &v) == 0) {
		*out = v;
		return v <= LAYOUT_MAX_SIZE;
	}
	if (tag == DW_TAG_pointer_type || tag == DW_TAG_reference_type ||
	    tag == DW_TAG_rvalue_reference_type || tag == DW_TAG_ptr_to_member_type) {
		Dwarf_Die cu;
		uint8_t asz = 8;
		if (dwarf_diecu(t, &cu, &asz, NULL) == NULL)
			asz = 8;
		*out = asz;
		return true;
	}
	if (tag == DW_TAG_typedef || is_qualifier(tag)) {
		Dwarf_Die under;
		return sym_layout_attr_type(t, &under) && sym_layout_type_size(&under, out, depth + 1);
	}
	return false;
}
