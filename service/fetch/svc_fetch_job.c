// SPDX-License-Identifier: Apache-2.0
/*
 * svc_fetch_job: stages SOURCES and CHECK, the fetcher's work on worker
 * threads (svc_fetch_impl.h): find a build ID's file in the sources, in
 * order, or check a provider's file with src_check_file; then put the file
 * in the store. The job comes back to the loop, to the driver
 * (svc_fetch_run.c), which asks svc_job_outcome for the next stage.
 */
#include "service/fetch/svc_fetch_impl.h"
#include "service/core/svc_file_write.h"
#include "service/core/svc_build_id.h"
#include "service/core/svc_identity.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

static svc_fetch_job *job_new(svc_job_type type, stor_kind want)
{
	svc_fetch_job *j = calloc(1, sizeof(*j));
	if (j) {
		j->type = type;
		j->want = want;
		j->fd = -1;
	}
	return j;
}

void svc_job_free(svc_fetch_job *j)
{
	if (!j)
		return;
	free(j->per_source);
	if (j->mapped)
		munmap(j->data, j->size);
	else
		free(j->data);
	if (j->fd >= 0)
		close(j->fd);
	free(j);
}

svc_fetch_job *svc_job_for_sources(svc_fetch_flight *fl)
{
	if (!fl->f->n_sources)
		return NULL;
	svc_fetch_job *j = job_new(SVC_JOB_LOCAL, fl->want);
	if (!j)
		return NULL;
	if (fl->path_hint)
		snprintf(j->path_hint, sizeof(j->path_hint), "%s", fl->path_hint);
	if (fl->want == STOR_KIND_EXECUTABLE)
		svc_walk_exec_meta(fl, &j->meta_in);
	return j;
}

svc_fetch_job *svc_job_for_alt_hint(svc_fetch_flight *fl)
{
	fl->alt_hint_read = true;
	return job_new(SVC_JOB_ALT_HINT, STOR_KIND_DEBUGINFO);
}

svc_fetch_job *svc_job_for_file(svc_fetch_flight *fl, svc_provider_answer *a)
{
	svc_fetch_job *j = job_new(SVC_JOB_STORE, fl->want);
	if (!j)
		return NULL;
	j->data = a->body;
	j->fd = a->fd;
	j->size = a->size;
	a->body = NULL;
	a->fd = -1;
	snprintf(j->source, sizeof(j->source), "%s", fl->f->ups[fl->server].url);
	if (fl->want == STOR_KIND_EXECUTABLE)
		svc_walk_exec_meta(fl, &j->meta_in);
	return j;
}

/* A spooled body: mapped read-only for the check and the store write. */
static bool map_spooled(svc_fetch_job *j)
{
	if (j->fd < 0 || j->size == 0)
		return true;
	void *p = mmap(NULL, j->size, PROT_READ, MAP_PRIVATE, j->fd, 0);
	if (p == MAP_FAILED) {
		snprintf(j->error, sizeof(j->error), "mapping the download: %s", strerror(errno));
		return false;
	}
	j->data = p;
	j->mapped = true;
	return true;
}

static void take_found(svc_fetch_job *j, src_file *file)
{
	j->found = SRC_FOUND;
	j->data = file->data;
	j->size = file->size;
	j->kind = svc_fetch_stor_kind(file->kind);
	j->info = file->info;
	snprintf(j->source, sizeof(j->source), "%s", file->origin);
	snprintf(j->alt_where, sizeof(j->alt_where), "%s", file->alt_where);
}

/* Asks the sources in order; the first good file wins. The error of the last
 * rejected candidate is kept for the walk's text. */
static void find_in_sources(svc_fetch_job *j)
{
	svc_fetcher *f = j->fl->f;
	j->found = SRC_NOT_FOUND;
	j->per_source = calloc(f->n_sources ? f->n_sources : 1, sizeof(*j->per_source));
	for (size_t i = 0; i < f->n_sources; i++) {
		src_file file;
		sym_error err = {0};
		src_status st = src_find(f->sources[i], &j->fl->base.id, svc_fetch_src_kind(j->want),
					 f->cfg.max_debuginfo_size, &file, &err);
		if (err.code != SYM_OK)
			snprintf(j->error, sizeof(j->error), "%s", err.msg);
		j->asked = i + 1;
		if (j->per_source) {
			j->per_source[i].outcome = st == SRC_FOUND       ? SVC_SOURCE_FOUND
						   : st == SRC_TOO_LARGE ? SVC_SOURCE_TOO_LARGE
						   : st == SRC_PENDING   ? SVC_SOURCE_PENDING
									 : SVC_SOURCE_NOT_FOUND;
			snprintf(j->per_source[i].error, sizeof(j->per_source[i].error), "%.150s",
				 err.code != SYM_OK ? err.msg : "");
		}
		if (st == SRC_TOO_LARGE)
			j->found = SRC_TOO_LARGE;
		if (st == SRC_PENDING)
			j->pending = true;
		if (st != SRC_FOUND)
			continue;
		take_found(j, &file);
		return;
	}
	/* A dwz file: where the file that needs it says it is (no .build-id
	 * entry for it in Debian's packages). */
	for (size_t i = 0; j->path_hint[0] && i < f->n_sources; i++) {
		src_file file;
		sym_error err = {0};
		if (src_find_at(f->sources[i], j->path_hint, &j->fl->base.id,
				svc_fetch_src_kind(j->want), f->cfg.max_debuginfo_size, &file,
				&err) == SRC_FOUND) {
			take_found(j, &file);
			return;
		}
		if (err.code != SYM_OK)
			snprintf(j->error, sizeof(j->error), "%s", err.msg);
	}
}

/* ALT_HINT: the link's path, when absolute (a relative one needs the file's
 * original directory, which the store does not keep). */
static void read_alt_hint(svc_fetch_job *j)
{
	stor_blob b;
	sym_elf_info info;
	sym_error err;
	if (stor_get_file(j->fl->f->store, SVC_STORE_KEY(&j->fl->base.id), &b, NULL, NULL) != STOR_OK)
		return;
	if (sym_elf_probe(b.data, b.size, &info, &err) == SYM_OK && info.has_alt &&
	    info.alt_path[0] == '/')
		snprintf(j->alt_where, sizeof(j->alt_where), "%s", info.alt_path);
	stor_blob_release(&b);
}

static void job_work(void *arg)
{
	svc_fetch_job *j = arg;
	svc_fetcher *f = j->fl->f;
	if (j->type == SVC_JOB_ALT_HINT)
		return read_alt_hint(j);
	if (j->type == SVC_JOB_LOCAL) {
		find_in_sources(j);
		if (j->found != SRC_FOUND)
			return;
		/* Checked by the source already (src_check_file). */
		j->check = SYM_OK;
	} else {
		sym_error err = {0};
		src_kind kind = SRC_KIND_EXECUTABLE;
		if (!map_spooled(j)) {
			j->check = SYM_E_IO;
			return;
		}
		j->check = src_check_file(j->data, j->size, &j->fl->base.id, &kind, &j->info, &err);
		j->kind = svc_fetch_stor_kind(kind);
		if (j->check != SYM_OK) {
			snprintf(j->error, sizeof(j->error), "%s", err.msg);
			return;
		}
	}
	stor_meta m = j->meta_in;
	m.kind = j->kind;
	snprintf(m.source, sizeof(m.source), "%s", j->source);
	if (j->kind == STOR_KIND_DEBUGINFO) {
		m.neg_expiry = 0;
		m.last_error[0] = '\0';
	}
	if (j->info.has_alt && j->info.alt_build_id.len) {
		m.alt_len = j->info.alt_build_id.len;
		memcpy(m.alt_id, j->info.alt_build_id.bytes, m.alt_len);
	}
	/* The ranked write: a file as good or better held already (an upload
	 * made while this one was fetched) stays, and is the answer. */
	stor_error serr = {0};
	svc_file_outcome o;
	svc_file_write(f->store, &j->fl->base.id, &m, j->data, j->size, &j->info, false, NULL, NULL,
		       &o, &serr);
	j->stored = o.verdict == SVC_FILE_WRITTEN ? STOR_OK
		    : o.verdict == SVC_FILE_FAILED ? o.stored
						   : STOR_E_EXISTS;
	if (j->stored != STOR_OK)
		snprintf(j->error, sizeof(j->error), "%s",
			 o.verdict == SVC_FILE_FAILED ? serr.msg : "a file as good is held already");
	else {
		/* its Go build ID and file hash find it too */
		svc_identity_record(f->store, j->data, j->size, &j->fl->base.id);
		if (j->type == SVC_JOB_STORE)
			svc_fetch_s3_behind(f, &j->fl->base.id, j->kind, j->source, j->data,
					    j->size);
	}
}

/* Nothing in the sources: on to the upstreams. */
static svc_fetch_stage local_missed(svc_fetch_flight *fl, svc_fetch_job *j)
{
	if (j->found == SRC_TOO_LARGE)
		fl->too_large = true;
	if (j->pending)
		fl->any_pending = true;
	if (j->error[0])
		svc_walk_note(fl, "%s", j->error);
	fl->server = 0;
	fl->attempt = 0;
	return SVC_STAGE_PROVIDERS;
}

/* A file that is not what we asked for: nothing stored, next source. */
static svc_fetch_stage body_rejected(svc_fetch_flight *fl, svc_fetch_job *j)
{
	svc_fetcher *f = fl->f;
	svc_upstream *u = &f->ups[fl->server];
	u->st.rejected++;
	svc_fetch_log(f, "upstream %s: %s: rejected: %s", u->url, fl->hex, j->error);
	svc_walk_note(fl, "upstream %s: %s", u->url, j->error);
	fl->any_error = true;
	svc_walk_advance(fl);
	return SVC_STAGE_PROVIDERS;
}

/* Debuginfo arrived meanwhile (an upload): that is the answer. */
static void take_existing(svc_fetch_flight *fl, svc_fetch_job *j)
{
	stor_meta m;
	if (stor_get_meta(fl->f->store, SVC_STORE_KEY(&fl->base.id), &m, NULL) == STOR_OK) {
		j->kind = m.kind;
		j->size = m.size;
		snprintf(j->source, sizeof(j->source), "%s", m.source);
		memset(&j->info, 0, sizeof(j->info));
		j->info.has_alt = m.alt_len > 0;
		j->info.alt_build_id.len = m.alt_len;
		memcpy(j->info.alt_build_id.bytes, m.alt_id, m.alt_len);
	}
	j->stored = STOR_OK;
}

static svc_fetch_stage store_failed(svc_fetch_flight *fl, svc_fetch_job *j)
{
	svc_fetcher *f = fl->f;
	fl->res.status = j->stored == STOR_E_TOO_LARGE ? SVC_FETCH_TOO_LARGE : SVC_FETCH_ERROR;
	snprintf(fl->res.error, sizeof(fl->res.error), "%s", j->error);
	if (fl->res.status == SVC_FETCH_TOO_LARGE)
		f->st.too_large++;
	else
		f->st.errors++;
	svc_fetch_log(f, "%s: %s", fl->hex, j->error);
	return SVC_STAGE_DONE;
}

/* Each source's outcome for the status page (svc_fetch_trace.c). */
static void trace_job(svc_fetch_flight *fl, const svc_fetch_job *j)
{
	if (j->type == SVC_JOB_LOCAL) {
		for (size_t i = 0; j->per_source && i < j->asked; i++)
			svc_trace_note(fl, i, j->per_source[i].outcome, j->per_source[i].error);
		return;
	}
	size_t slot = fl->f->n_sources + fl->server;
	if (j->check != SYM_OK)
		svc_trace_note(fl, slot, SVC_SOURCE_REJECTED, j->error);
	else if (j->stored != STOR_OK && j->stored != STOR_E_EXISTS)
		svc_trace_note(fl, slot, SVC_SOURCE_ERROR, j->error);
	else
		svc_trace_note(fl, slot, SVC_SOURCE_FOUND, NULL);
}

/* The file is in the store. */
static svc_fetch_stage stored(svc_fetch_flight *fl, svc_fetch_job *j)
{
	if (j->type == SVC_JOB_STORE)
		fl->f->st.upstream_hits++;
	else
		fl->f->st.local_hits++;
	free(fl->alt_where);
	fl->alt_where = j->alt_where[0] ? strdup(j->alt_where) : NULL;
	return svc_walk_succeed(fl, j->kind, j->size, j->source, &j->info);
}

static svc_fetch_stage outcome(svc_fetch_flight *fl, svc_fetch_job *j)
{
	trace_job(fl, j);
	if (j->type == SVC_JOB_LOCAL && j->found != SRC_FOUND)
		return local_missed(fl, j);
	if (j->check != SYM_OK)
		return body_rejected(fl, j);
	if (j->stored == STOR_E_EXISTS)
		take_existing(fl, j);
	return j->stored != STOR_OK ? store_failed(fl, j) : stored(fl, j);
}

svc_fetch_stage svc_job_outcome(svc_fetch_flight *fl, svc_fetch_job *j)
{
	if (j->type == SVC_JOB_ALT_HINT) {
		if (j->alt_where[0] && !fl->alt_where)
			fl->alt_where = strdup(j->alt_where);
		svc_job_free(j);
		return SVC_STAGE_ALT;  /* again, with the path when there is one */
	}
	svc_fetch_stage next = outcome(fl, j);
	svc_job_free(j);
	return next;
}

svc_fetch_stage svc_job_not_submitted(svc_fetch_flight *fl, svc_job_type type)
{
	if (type == SVC_JOB_LOCAL)
		return SVC_STAGE_PROVIDERS;  /* the sources unasked: the upstreams */
	fl->any_error = true;
	svc_walk_note(fl, "out of memory");
	svc_walk_advance(fl);
	return SVC_STAGE_PROVIDERS;
}

bool svc_job_submit(svc_fetch_flight *fl, svc_fetch_job *j, void (*done)(void *, bool))
{
	j->fl = fl;
	fl->job_running = true;
	if (!svc_pool_submit(fl->f->pool, j, job_work, done)) {
		fl->job_running = false;
		svc_job_free(j);
		return false;
	}
	return true;
}
