/*
 * sym_qualify: qualified names from DIE parents (see sym_qualify.h).
 */
#include "symbolizer/sym_qualify.h"
#include "symbolizer/sym_demangle.h"

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
	uint32_t parent;     /* enclosing namespace, class or subprogram, or NO_NODE */
	int tag;
	char *qual;          /* this scope's qualified name, once computed */
};

void sym_qualify_init(sym_qualify *q, Dwarf *dw)
{
	memset(q, 0, sizeof(*q));
	q->dw = dw;
	sym_qualify_map_init(&q->nodes);
	sym_qualify_map_init(&q->units);
	base_vec_init(&q->node_vec, sizeof(struct sym_qualify_node), (size_t)UINT32_MAX - 1);
}

void sym_qualify_deinit(sym_qualify *q)
{
	for (size_t i = 0; i < q->node_vec.len; i++)
		free(BASE_VEC_AT(&q->node_vec, struct sym_qualify_node, i).qual);
	base_vec_deinit(&q->node_vec);
	sym_qualify_map_deinit(&q->nodes);
	sym_qualify_map_deinit(&q->units);
	free(q->buf);
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

/* Records the scopes under die, each with its nearest recorded parent. */
static int index_children(sym_qualify *q, Dwarf_Die *die, uint32_t parent, unsigned level)
{
	Dwarf_Die child;
	if (level >= MAX_DEPTH || dwarf_child(die, &child) != 0)
		return 0;
	for (;;) {
		int tag = dwarf_tag(&child);
		if (is_scope_tag(tag)) {
			uint32_t id = (uint32_t)q->node_vec.len;
			struct sym_qualify_node *n = base_vec_push(&q->node_vec);
			uint64_t key = sym_qualify_key(q->dw, &child);
			bool added;
			uint32_t *slot = n ? sym_qualify_map_put(&q->nodes, &key, &added) : NULL;
			if (!slot)
				return -1;
			*n = (struct sym_qualify_node){.die = child, .parent = parent, .tag = tag};
			*slot = id + 1;
			if (index_children(q, &child, id, level + 1))
				return -1;
		} else if (tag == DW_TAG_lexical_block) {
			if (index_children(q, &child, parent, level + 1))
				return -1;
		}
		Dwarf_Off here = dwarf_dieoffset(&child);
		if (dwarf_siblingof(&child, &child) != 0 || dwarf_dieoffset(&child) <= here)
			return 0;
	}
}

/* The node of die (indexing its unit first if need be); NO_NODE if none. */
static uint32_t node_of(sym_qualify *q, Dwarf_Die *die, int *nomem)
{
	uint64_t key = sym_qualify_key(q->dw, die);
	uint32_t *v = sym_qualify_map_get(&q->nodes, &key);
	if (v)
		return *v - 1;
	Dwarf_Die cu;
	if (!dwarf_diecu(die, &cu, NULL, NULL))
		return NO_NODE;
	uint64_t ukey = sym_qualify_key(q->dw, &cu);
	if (sym_qualify_map_get(&q->units, &ukey))
		return NO_NODE;
	bool added;
	uint32_t *u = sym_qualify_map_put(&q->units, &ukey, &added);
	if (!u || index_children(q, &cu, NO_NODE, 0)) {
		*nomem = 1;
		return NO_NODE;
	}
	*u = 1;
	v = sym_qualify_map_get(&q->nodes, &key);
	return v ? *v - 1 : NO_NODE;
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
	uint32_t nd = node_of(q, name_die, nomem);
	uint32_t parent = nd == NO_NODE ? NO_NODE : node_at(q, nd)->parent;
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
	uint32_t i = node_of(q, die, &nomem);
	uint32_t parent = i == NO_NODE ? NO_NODE : node_at(q, i)->parent;
	const char *pq = parent == NO_NODE ? NULL : scope_qual(q, parent, 0, &nomem);
	if (nomem)
		return NULL;
	if (!pq || !*pq)
		return name;
	size_t need = strlen(pq) + strlen(name) + 3;
	if (need > q->cap) {
		char *b = realloc(q->buf, need);
		if (!b)
			return NULL;
		q->buf = b;
		q->cap = need;
	}
	snprintf(q->buf, need, "%s::%s", pq, name);
	return q->buf;
}
