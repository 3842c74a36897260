// SPDX-License-Identifier: Apache-2.0
/*
 * sym_qualify: qualified names from DIE parents (see sym_qualify_impl.h).
 */
#include "symbolizer/sym_qualify_impl.h"
#include "symbolizer/sym_demangle_impl.h"

#include <dwarf.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define MAX_DEPTH 256        /* DIE nesting indexed, and scopes joined */
#define MAX_HOPS 8           /* DW_AT_abstract_origin / DW_AT_specification followed */
#define NO_NODE UINT32_MAX

struct sym_qualify_node {
	Dwarf_Die die;
	uint64_t start, end; /* DIE keys it encloses: [own key, next sibling's), end open: ~0 */
	uint32_t parent;     /* enclosing namespace, class or subprogram, or NO_NODE */
	int tag;
	char *qual;          /* this scope's qualified name, once computed */
	/* A subprogram's body is indexed only when a DIE inside it is asked about
	 * (most hold no class, and their bodies are most of a unit's DIEs): then
	 * its scopes are the kids block [kids_first, + kids_count), in DIE order. */
	bool lazy;           /* a subprogram whose body is not indexed yet */
	bool holds;          /* an indexed subprogram holding a scope: a parent */
	unsigned level;      /* the DIE's depth below its unit */
	uint32_t kids_first, kids_count;
};

struct sym_qualify_unit {
	uint32_t first, count;
};

void sym_qualify_init(sym_qualify *q, Dwarf *dw)
{
	memset(q, 0, sizeof(*q));
	q->dw = dw;
	sym_qualify_map_init(&q->units);
	base_vec_init(&q->unit_vec, sizeof(struct sym_qualify_unit), (size_t)UINT32_MAX - 1);
	base_vec_init(&q->node_vec, sizeof(struct sym_qualify_node), (size_t)UINT32_MAX - 1);
	base_buf_init(&q->buf, SIZE_MAX);
}

void sym_qualify_deinit(sym_qualify *q)
{
	for (size_t i = 0; i < q->node_vec.len; i++)
		free(BASE_VEC_AT(&q->node_vec, struct sym_qualify_node, i).qual);
	base_vec_deinit(&q->node_vec);
	base_vec_deinit(&q->unit_vec);
	sym_qualify_map_deinit(&q->units);
	base_buf_deinit(&q->buf);
	memset(q, 0, sizeof(*q));
}

static struct sym_qualify_node *node_at(sym_qualify *q, uint32_t i)
{
	return &BASE_VEC_AT(&q->node_vec, struct sym_qualify_node, i);
}

static bool is_scope_tag(int tag)
{
	return tag == DW_TAG_namespace || tag == DW_TAG_class_type ||
	       tag == DW_TAG_structure_type || tag == DW_TAG_union_type ||
	       tag == DW_TAG_interface_type || tag == DW_TAG_subprogram;
}

/*
 * Records the scopes under die in DIE order, each with its nearest recorded
 * parent: namespaces and classes with what they hold, and each defined
 * subprogram with its body left for expand().
 */
static int index_children(sym_qualify *q, Dwarf_Die *die, uint32_t parent, unsigned level)
{
	Dwarf_Die child;
	if (level >= MAX_DEPTH || dwarf_child(die, &child) != 0)
		return 0;
	for (;;) {
		int tag = dwarf_tag(&child);
		uint32_t id = NO_NODE;
		/* A declaration's children are its parameters: no scope there. */
		if (is_scope_tag(tag) &&
		    (tag != DW_TAG_subprogram || !dwarf_hasattr(&child, DW_AT_declaration))) {
			id = (uint32_t)q->node_vec.len;
			struct sym_qualify_node *n = base_vec_push(&q->node_vec);
			if (!n)
				return -1;
			*n = (struct sym_qualify_node){.die = child, .parent = parent, .tag = tag,
						       .start = sym_qualify_key(q->dw, &child),
						       .end = ~(uint64_t)0,
						       .lazy = tag == DW_TAG_subprogram,
						       .level = level + 1};
			if (tag != DW_TAG_subprogram && index_children(q, &child, id, level + 1))
				return -1;
		} else if (tag == DW_TAG_lexical_block) {
			if (index_children(q, &child, parent, level + 1))
				return -1;
		}
		Dwarf_Off here = dwarf_dieoffset(&child);
		if (dwarf_siblingof(&child, &child) != 0 || dwarf_dieoffset(&child) <= here)
			return 0;
		if (id != NO_NODE)
			node_at(q, id)->end = sym_qualify_key(q->dw, &child);
	}
}

/* The nodes of die's unit, indexing it first if need be; NULL when out of memory. */
static const struct sym_qualify_unit *unit_of(sym_qualify *q, Dwarf_Die *die, int *nomem)
{
	static const struct sym_qualify_unit none = {0, 0};
	Dwarf_Die cu;
	if (!dwarf_diecu(die, &cu, NULL, NULL))
		return &none;
	uint64_t ukey = sym_qualify_key(q->dw, &cu);
	uint32_t *v = sym_qualify_map_get(&q->units, &ukey);
	if (v)
		return &BASE_VEC_AT(&q->unit_vec, struct sym_qualify_unit, *v - 1);
	struct sym_qualify_unit u = {(uint32_t)q->node_vec.len, 0};
	bool added;
	struct sym_qualify_unit *slot = base_vec_push(&q->unit_vec);
	v = slot ? sym_qualify_map_put(&q->units, &ukey, &added) : NULL;
	if (!v || index_children(q, &cu, NO_NODE, 0)) {
		*nomem = 1;
		return NULL;
	}
	u.count = (uint32_t)q->node_vec.len - u.first;
	*slot = u;
	*v = (uint32_t)q->unit_vec.len;
	return slot;
}

/*
 * Where node i's DIEs end: its next sibling's key; a last child has none and
 * ends where its parent does (its open end, ~0, would claim every DIE after
 * the parent: a function after a namespace's last inner namespace was put in
 * it, as __pstl::execution::v1::__gthread_setspecific in libstdc++).
 */
static uint64_t end_of(sym_qualify *q, uint32_t i)
{
	for (unsigned d = 0; i != NO_NODE && d < MAX_DEPTH; d++) {
		const struct sym_qualify_node *n = node_at(q, i);
		if (n->end != ~(uint64_t)0)
			return n->end;
		i = n->parent;
	}
	return ~(uint64_t)0;
}

/*
 * The innermost node of the block [first, + count) (one unit's, or one
 * subprogram's kids) that encloses key; owner (the block's subprogram, or
 * NO_NODE for a unit) when none does.
 */
static uint32_t innermost(sym_qualify *q, uint32_t first, uint32_t count, uint64_t key,
			  uint32_t owner)
{
	uint32_t lo = first, hi = first + count;
	while (lo < hi) {      /* the last node that starts before key */
		uint32_t mid = lo + (hi - lo) / 2;
		if (node_at(q, mid)->start < key)
			lo = mid + 1;
		else
			hi = mid;
	}
	uint32_t i = lo > first ? lo - 1 : owner;
	for (unsigned d = 0; i != owner && i != NO_NODE && d < MAX_DEPTH; d++) {
		const struct sym_qualify_node *n = node_at(q, i);
		if ((n->start & 1) == (key & 1) && end_of(q, i) > key)
			return i;
		i = n->parent;
	}
	return owner;
}

/*
 * Indexes subprogram node i's body into its kids block, and says whether it
 * holds a scope: a class in it, or a function nested in it (expanded here
 * too: rare) that holds one. -1: out of memory.
 */
static int expand(sym_qualify *q, uint32_t i)
{
	struct sym_qualify_node *n = node_at(q, i);
	Dwarf_Die die = n->die;
	unsigned level = n->level;
	uint32_t first = (uint32_t)q->node_vec.len;
	n->lazy = false;
	if (index_children(q, &die, i, level))
		return -1;
	uint32_t count = (uint32_t)q->node_vec.len - first;
	bool holds = false;
	for (uint32_t k = first; k < first + count; k++) {
		struct sym_qualify_node *kid = node_at(q, k);
		if (kid->tag != DW_TAG_subprogram)
			holds = true;
		else if (kid->parent == i && level < MAX_DEPTH && kid->lazy && expand(q, k))
			return -1;
		holds = holds || node_at(q, k)->holds;
	}
	n = node_at(q, i); /* the vector may have moved */
	n->kids_first = first;
	n->kids_count = count;
	n->holds = holds;
	return 0;
}

/*
 * The innermost recorded scope that encloses die; NO_NODE if none. A
 * subprogram counts only when it holds a scope (a local class): one that
 * holds none is no parent, its own parent is.
 */
static uint32_t parent_of(sym_qualify *q, Dwarf_Die *die, int *nomem)
{
	const struct sym_qualify_unit *u = unit_of(q, die, nomem);
	if (!u || !u->count)
		return NO_NODE;
	uint64_t key = sym_qualify_key(q->dw, die);
	uint32_t at = innermost(q, u->first, u->count, key, NO_NODE);
	for (unsigned d = 0; at != NO_NODE && d < MAX_DEPTH; d++) {
		struct sym_qualify_node *n = node_at(q, at);
		if (n->tag != DW_TAG_subprogram)
			return at;
		if (n->lazy && expand(q, at)) {
			*nomem = 1;
			return NO_NODE;
		}
		n = node_at(q, at);
		if (!n->holds)
			return n->parent; /* a class or a subprogram that holds one, or none */
		uint32_t in = innermost(q, n->kids_first, n->kids_count, key, at);
		if (in == at)
			return at;
		at = in;
	}
	return NO_NODE;
}

/* "a::b" from a and b (either may be NULL: the other alone); NULL when out of memory. */
static char *join(const char *a, const char *b)
{
	if (!a || !*a)
		return strdup(b ? b : "");
	size_t la = strlen(a), lb = strlen(b);
	char *s = malloc(la + lb + 3);
	if (!s)
		return NULL;
	memcpy(s, a, la);
	memcpy(s + la, "::", 2);
	memcpy(s + la + 2, b, lb + 1);
	return s;
}

static const char *scope_qual(sym_qualify *q, uint32_t i, unsigned depth, int *nomem);

/*
 * The qualified name of a subprogram as the scope of a local class: its
 * demangled linkage name, else its name qualified by the parents of the DIE
 * that names it. Malloc'ed; NULL when out of memory.
 */
static char *subprogram_qual(sym_qualify *q, Dwarf_Die *die, unsigned depth, int *nomem)
{
	Dwarf_Die chain[MAX_HOPS + 1];
	Dwarf_Die *cur = die, *name_die = NULL;
	const char *name = NULL;
	for (int n = 0;; n++) {
		Dwarf_Attribute attr;
		const char *link = dwarf_formstring(dwarf_attr(cur, DW_AT_linkage_name, &attr));
		char *d = link ? sym_demangle(link) : NULL;
		if (d)
			return d;
		if (!name && (name = dwarf_formstring(dwarf_attr(cur, DW_AT_name, &attr))))
			name_die = cur;
		Dwarf_Attribute *ref = dwarf_attr(cur, DW_AT_abstract_origin, &attr);
		if (!ref)
			ref = dwarf_attr(cur, DW_AT_specification, &attr);
		if (n >= MAX_HOPS || !ref || !dwarf_formref_die(ref, &chain[n]))
			break;
		cur = &chain[n];
	}
	if (!name_die)
		return strdup("");
	uint32_t parent = parent_of(q, name_die, nomem);
	const char *pq = parent == NO_NODE ? NULL : scope_qual(q, parent, depth + 1, nomem);
	return join(pq, name);
}

static char *own_name(struct sym_qualify_node *n)
{
	const char *name = dwarf_diename(&n->die);
	if (name)
		return strdup(name);
	switch (n->tag) {
	case DW_TAG_namespace:
		return strdup("(anonymous namespace)");
	case DW_TAG_union_type:
		return strdup("(anonymous union)");
	case DW_TAG_structure_type:
		return strdup("(anonymous struct)");
	default:
		return strdup("(anonymous class)");
	}
}

/* The qualified name of scope node i, computed once; NULL on a cycle or out of memory. */
static const char *scope_qual(sym_qualify *q, uint32_t i, unsigned depth, int *nomem)
{
	struct sym_qualify_node *n = node_at(q, i);
	if (n->qual || depth >= MAX_DEPTH)
		return n->qual;
	char *qual;
	if (n->tag == DW_TAG_subprogram) {
		Dwarf_Die die = n->die;
		qual = subprogram_qual(q, &die, depth, nomem);
	} else {
		uint32_t parent = n->parent;
		char *own = own_name(n);
		const char *pq = parent == NO_NODE ? NULL : scope_qual(q, parent, depth + 1, nomem);
		qual = own ? join(pq, own) : NULL;
		free(own);
	}
	if (!qual)
		*nomem = 1;
	/* The vector may have grown (units indexed on the way): look the node up again. */
	node_at(q, i)->qual = qual;
	return qual;
}

const char *sym_qualify_name(sym_qualify *q, Dwarf_Die *die, const char *name)
{
	int nomem = 0;
	uint32_t parent = parent_of(q, die, &nomem);
	const char *pq = parent == NO_NODE ? NULL : scope_qual(q, parent, 0, &nomem);
	if (nomem)
		return NULL;
	if (!pq || !*pq)
		return name;
	size_t need = strlen(pq) + strlen(name) + 3;
	if (!base_buf_ensure(&q->buf, need))
		return NULL;
	snprintf((char *)q->buf.data, need, "%s::%s", pq, name);
	return (const char *)q->buf.data;
}
