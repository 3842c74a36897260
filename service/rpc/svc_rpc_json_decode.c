// SPDX-License-Identifier: Apache-2.0
/*
 * svc_rpc_json_decode: a message's proto3 JSON -> its wire bytes
 * (svc_rpc_json.h), in one pass: the scanner (svc_rpc_json_scan.c) reads the
 * text a token at a time, the descriptors say what each key is, and the
 * wire is written into the capped buffer as the text goes (a value by
 * svc_rpc_json_value.c; a sub-message in place, its length inserted before
 * it once known). No tree. An object of a flat message (a Location) in its
 * plainest form is read by svc_rpc_json_decode_plain.c instead, to the same
 * bytes.
 *
 * It answers as json-c's tree did: a syntax error anywhere wins over a
 * wrong type (a refused value is read past and the text read on); within an
 * object the first refused key, in the order keys first came, is the error;
 * a key given twice keeps its first place and its last value (the wire of
 * the first leaves before the second is written in its place, so the wire
 * cap counts it once), as json-c's object did, while
 * the .proto name and the JSON name of one field are two keys.
 */
#include <limits.h>
#include <stdlib.h>
#include <string.h>

#include "service/rpc/svc_rpc_json_decode_impl.h"

/* ---- errors and the path ---- */

dec_rc dec_bad(dec *d, const char *what)
{
	if (!json_scan_skip(&d->sc))
		return DEC_STOP;
	d->what = what;
	return DEC_BAD;
}

dec_rc dec_wire_full(dec *d)
{
	d->wire_err = d->w->over ? SVC_E_TOO_LARGE : SVC_E_NOMEM;
	return DEC_STOP;
}

/* Puts a segment in front of the path: a field's name or an index. */
static void prepend(dec *d, const char *name, long index)
{
	char seg[80];
	size_t n;
	if (index >= 0) {
		char digits[24];
		size_t k = 0;
		unsigned long v = (unsigned long)index;
		do {
			digits[k++] = (char)('0' + v % 10);
			v /= 10;
		} while (v);
		n = 0;
		seg[n++] = '[';
		while (k)
			seg[n++] = digits[--k];
		seg[n++] = ']';
	} else {
		size_t len = strlen(name);
		len = len < sizeof(seg) - 2 ? len : sizeof(seg) - 2;
		memcpy(seg, name, len);
		n = len;
	}
	/* A name follows with a '.', an index without. */
	if (d->pstart < sizeof(d->path) - 1 && d->path[d->pstart] != '[')
		seg[n++] = '.';
	if (n > d->pstart)
		return;  /* too long: the innermost part is kept */
	d->pstart -= n;
	memcpy(d->path + d->pstart, seg, n);
}

/* ---- the wire ---- */

/* Sets the length of the bytes written since start (dec_open_len's) before
 * them: in the placeholder byte when under 128, else moved to make room. */
bool dec_close_len(dec *d, size_t start)
{
	size_t n = d->w->len - start, k = svc_wire_varint_size(n);
	uint8_t *p = d->w->data + start - 1;
	if (k == 1) {
		*p = (uint8_t)n;
		return true;
	}
	if (!base_buf_reserve(d->w, k - 1))
		return false;
	p = d->w->data + start - 1;
	memmove(p + k, p + 1, n);
	svc_wire_put_varint(p, n);
	d->w->len += k - 1;
	return true;
}

/* ---- keys ---- */

/* The field named key (its JSON name or its .proto name; a NUL ends the
 * key, as in json-c's); *id tells the two names apart. NULL: unknown. */
static const json_field *find(const json_msg *m, const json_str *key, unsigned *id)
{
	size_t n = key->nul ? strlen(key->s) : key->n;
	for (unsigned i = 0; i < m->n_fields; i++) {
		const json_field *f = &m->fields[i];
		if (f->json_name_len == n && !memcmp(f->json_name, key->s, n)) {
			*id = 2 * i;
			return f;
		}
		if (f->name_len == n && !memcmp(f->fd->name, key->s, n)) {
			*id = 2 * i + 1;
			return f;
		}
	}
	return NULL;
}

/* A refusal kept aside (the path since the key's object), or none. */
static bool keep_refusal(dec *d, dec_key *k, dec_rc rc)
{
	free(k->path);
	k->path = NULL;
	k->what = NULL;
	if (rc != DEC_BAD)
		return true;
	size_t n = sizeof(d->path) - 1 - d->pstart;
	if (!(k->path = malloc(n + 1)))
		return false;
	memcpy(k->path, d->path + d->pstart, n);
	k->path[n] = '\0';
	k->what = d->what;
	d->pstart = sizeof(d->path) - 1;
	return true;
}

/* The value of the key at keys[at], given again and written at [start,
 * len): it takes the first value's place in the wire; the keys after it
 * (in the wire in the order they came) move. */
static bool replace(dec *d, size_t at, size_t start)
{
	dec_key *keys = dec_key_vec_data(&d->keys), *k = &keys[at];
	size_t a = k->end - k->start, c = d->w->len - start, b = start - k->end;
	if (a == 0 && c == 0)
		return true;  /* nothing for nothing (the wire may have no buffer yet) */
	uint8_t *w = d->w->data, *tmp = NULL;
	if (c && !(tmp = malloc(c)))
		return false;
	if (c)
		memcpy(tmp, w + start, c);
	memmove(w + k->start + c, w + k->end, b);
	if (c)
		memcpy(w + k->start, tmp, c);
	free(tmp);
	d->w->len = k->start + c + b;
	for (size_t i = at + 1; i < dec_key_vec_len(&d->keys); i++) {
		keys[i].start = keys[i].start + c - a;
		keys[i].end = keys[i].end + c - a;
	}
	k->end = k->start + c;
	return true;
}

/* A key given again: its first value leaves the wire before the new one is
 * written, so a repeated key never holds room twice (the wire cap is met by
 * what the message will be, as json-c's last-value-wins tree wrote it). */
static void forget_value(dec *d, size_t first, unsigned id)
{
	dec_key *keys = dec_key_vec_data(&d->keys);
	size_t n = dec_key_vec_len(&d->keys), at = first;
	while (at < n && keys[at].key != id)
		at++;
	if (at == n || keys[at].end == keys[at].start)
		return;
	dec_key *k = &keys[at];
	size_t a = k->end - k->start;
	memmove(d->w->data + k->start, d->w->data + k->end, d->w->len - k->end);
	d->w->len -= a;
	for (size_t i = at + 1; i < n; i++) {
		keys[i].start -= a;
		keys[i].end -= a;
	}
	k->end = k->start;
}

/* Notes key id's value, written at [start, len) (first: the object's first key). */
static dec_rc note_key(dec *d, size_t first, unsigned id, size_t start, dec_rc rc)
{
	dec_key *keys = dec_key_vec_data(&d->keys);
	for (size_t i = first; i < dec_key_vec_len(&d->keys); i++)
		if (keys[i].key == id)
			return replace(d, i, start) && keep_refusal(d, &keys[i], rc)
				       ? DEC_OK : dec_wire_full(d);
	dec_key *k = dec_key_vec_push(&d->keys);
	if (!k)
		return dec_wire_full(d);
	*k = (dec_key){.key = id, .start = start, .end = d->w->len};
	return rc == DEC_OK || keep_refusal(d, k, rc) ? DEC_OK : dec_wire_full(d);
}

/* Leaves an object: its first refusal still standing, if any, is the error. */
static dec_rc leave_object(dec *d, size_t first, dec_rc rc)
{
	dec_key *keys = dec_key_vec_data(&d->keys);
	for (size_t i = first; i < dec_key_vec_len(&d->keys); i++) {
		if (rc == DEC_OK && keys[i].what) {
			size_t n = strlen(keys[i].path);
			d->pstart = sizeof(d->path) - 1 - n;
			memcpy(d->path + d->pstart, keys[i].path, n);
			d->what = keys[i].what;
			rc = DEC_BAD;
		}
		if (keys[i].path)
			free(keys[i].path);
	}
	d->keys.v.len = first;
	return rc;
}

/* ---- messages and lists ---- */

static dec_rc decode_msg(dec *d, const json_msg *m);

static dec_rc put_message(dec *d, const json_field *f)
{
	size_t start;
	if (!dec_put_varint(d, SVC_WIRE_TAG(f->fd->id, SVC_WIRE_LEN)) || !(start = dec_open_len(d)))
		return dec_wire_full(d);
	dec_rc rc = decode_msg(d, f->msg);
	if (rc == DEC_OK && !dec_close_len(d, start))
		return dec_wire_full(d);
	return rc;
}

/* One element of a list of f: null is refused. */
static dec_rc put_element(dec *d, const json_field *f)
{
	if (json_scan_peek(&d->sc) == 'n')
		return dec_bad(d, "null in a list");
	if (f->packed) {
		uint64_t bits;
		int wt;
		dec_rc rc = dec_scalar_bits(d, f, &bits, &wt);
		if (rc == DEC_OK && !dec_put_bits(d, wt, bits))
			return dec_wire_full(d);
		return rc;
	}
	return f->type == PROTOBUF_C_TYPE_MESSAGE ? put_message(d, f) : dec_put_value(d, f);
}

static dec_rc put_array(dec *d, const json_field *f)
{
	if (json_scan_peek(&d->sc) != '[')
		return dec_bad(d, "expected an array");
	if (!json_scan_open(&d->sc))
		return DEC_STOP;
	int more = json_scan_element(&d->sc, true);
	if (more <= 0)
		return more == 0 ? DEC_OK : DEC_STOP;  /* [] writes nothing */
	size_t start = 0;
	if (f->packed &&
	    (!dec_put_varint(d, SVC_WIRE_TAG(f->fd->id, SVC_WIRE_LEN)) || !(start = dec_open_len(d))))
		return dec_wire_full(d);
	bool plain = f->type == PROTOBUF_C_TYPE_MESSAGE && f->msg->flat;
	for (long i = 0; more > 0; i++) {
		dec_rc rc = plain && dec_plain_element(d, f) ? DEC_OK : put_element(d, f);
		if (rc == DEC_STOP)
			return rc;
		if (rc == DEC_BAD) {  /* the rest is read past */
			prepend(d, NULL, i);
			while ((more = json_scan_element(&d->sc, false)) > 0)
				if (!json_scan_skip(&d->sc))
					return DEC_STOP;
			return more == 0 ? DEC_BAD : DEC_STOP;
		}
		more = json_scan_element(&d->sc, false);
	}
	if (more < 0)
		return DEC_STOP;
	return f->packed && !dec_close_len(d, start) ? dec_wire_full(d) : DEC_OK;
}

static dec_rc decode_msg(dec *d, const json_msg *m)
{
	if (json_scan_peek(&d->sc) != '{')
		return dec_bad(d, "expected an object");
	if (m->flat && dec_plain_object(d, m))
		return DEC_OK;
	if (!json_scan_open(&d->sc))
		return DEC_STOP;
	size_t first = dec_key_vec_len(&d->keys);
	json_str key;
	int more;
	dec_rc rc = DEC_OK;
	for (bool first_key = true; (more = json_scan_member(&d->sc, first_key, &key)) > 0;
	     first_key = false) {
		unsigned id;
		const json_field *f = find(m, &key, &id);
		if (!f) {  /* unknown fields are ignored (Connect-Go's way), still read */
			if (!json_scan_skip(&d->sc)) {
				rc = DEC_STOP;
				break;
			}
			continue;
		}
		forget_value(d, first, id);
		size_t start = d->w->len;
		bool null;
		if (json_scan_peek(&d->sc) == 'n')  /* null: the default */
			rc = json_scan_literal(&d->sc, &null) ? DEC_OK : DEC_STOP;
		else if (f->repeated)
			rc = put_array(d, f);
		else if (f->type == PROTOBUF_C_TYPE_MESSAGE)
			rc = put_message(d, f);
		else
			rc = dec_put_value(d, f);
		if (rc == DEC_BAD)
			prepend(d, f->json_name, -1);
		if (rc == DEC_STOP || (rc = note_key(d, first, id, start, rc)) == DEC_STOP)
			break;
	}
	if (more < 0)
		rc = DEC_STOP;
	return leave_object(d, first, rc);
}

/* ---- the text ---- */

/* The error of a stop or refusal. */
static svc_errc named(dec *d, dec_rc rc, const char *text, size_t len, size_t max_containers)
{
	/* What json-c's tree could not see, checked on the whole text first, as before. */
	bool single_quote = false, huge_int = false;
	size_t containers = svc_rpc_json_prescan(text, len, &single_quote, &huge_int);
	if (single_quote)
		return svc_error_set(d->err, SVC_E_INVALID,
				     "invalid JSON request: a single-quoted string (JSON quotes with \")");
	if (huge_int)
		return svc_error_set(d->err, SVC_E_INVALID,
				     "invalid JSON request: an integer past 64 bits (no field holds it)");
	if (containers > max_containers)
		return svc_error_set(d->err, SVC_E_TOO_LARGE,
				     "JSON request of %zu objects and arrays is over the limit of %zu",
				     containers, max_containers);
	if (rc == DEC_STOP && d->wire_err != SVC_OK && !d->sc.error) {
		/* The wire filled: a syntax error further on is the answer if there is one. */
		json_scan_deinit(&d->sc);
		json_scan_init(&d->sc, text, len, SIZE_MAX);
		if (json_scan_skip(&d->sc) && json_scan_peek(&d->sc) >= 0)
			json_scan_fail(&d->sc, "unexpected character");
		if (!d->sc.error)
			return d->wire_err == SVC_E_TOO_LARGE
				       ? svc_error_set(d->err, SVC_E_TOO_LARGE,
						       "request over the size limit once decoded from JSON")
				       : svc_error_set(d->err, SVC_E_NOMEM, "out of memory");
	}
	if (rc == DEC_STOP) {
		if (d->sc.error_code == SVC_E_NOMEM)
			return svc_error_set(d->err, SVC_E_NOMEM, "out of memory");
		if (d->sc.truncated)
			return svc_error_set(d->err, SVC_E_INVALID,
					     "invalid JSON request: the JSON text ends early");
		return svc_error_set(d->err, d->sc.error_code, "invalid JSON request: %s at byte %zu",
				     d->sc.error, d->sc.error_at);
	}
	d->path[sizeof(d->path) - 1] = '\0';
	if (d->pstart == sizeof(d->path) - 1)
		return svc_error_set(d->err, SVC_E_INVALID, "invalid JSON request: %s", d->what);
	return svc_error_set(d->err, SVC_E_INVALID, "invalid JSON request: field %s: %s",
			     d->path + d->pstart, d->what);
}

svc_errc svc_rpc_json_decode(const svc_rpc_json *j, const char *text, size_t len,
			     size_t max_containers, base_buf *wire, svc_error *err)
{
	if (len == 0)
		return svc_error_set(err, SVC_E_INVALID,
				     "invalid JSON request: an empty body is not a JSON object");
	if (len > INT_MAX)
		return svc_error_set(err, SVC_E_TOO_LARGE, "JSON request too large");
	dec d = {.w = wire, .err = err, .pstart = sizeof(d.path) - 1};
	size_t wire_start = wire->len;
	json_scan_init(&d.sc, text, len, max_containers);
	dec_key_vec_init(&d.keys, SIZE_MAX / sizeof(dec_key));
	dec_rc rc = decode_msg(&d, &j->msgs[0]);
	if (rc != DEC_STOP && json_scan_peek(&d.sc) >= 0) {
		json_scan_fail(&d.sc, "unexpected character");  /* bytes after the value */
		rc = DEC_STOP;
	}
	svc_errc out = rc == DEC_OK ? SVC_OK : named(&d, rc, text, len, max_containers);
	if (out != SVC_OK)
		wire->len = wire_start;  /* nothing of a refused request */
	for (size_t i = 0; i < dec_key_vec_len(&d.keys); i++)
		free(dec_key_vec_data(&d.keys)[i].path);
	dec_key_vec_deinit(&d.keys);
	json_scan_deinit(&d.sc);
	return out;
}
