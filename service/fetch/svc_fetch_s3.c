// SPDX-License-Identifier: Apache-2.0
/*
 * svc_fetch_s3: the fetcher's side of the shared S3 tier (svc_s3.h): the
 * client made at start (its bucket and credentials checked once: wrong
 * credentials or a missing bucket stop the start with the server's error
 * code; an unreachable S3 is logged and the fetcher starts, S3's breaker
 * then speaks for it), and the write-behind of what the fetcher stored from
 * an upstream (a file that came from S3 is not written back).
 */
#include "service/fetch/svc_fetch_impl.h"
#include "service/fetch/svc_s3.h"

#include <string.h>

bool svc_fetch_s3_start(svc_fetcher *f, svc_error *err)
{
	if (!(f->s3 = svc_s3_create(&f->cfg.s3, f->user_agent, err)) ||
	    !svc_s3_attach(f->s3, f->base, f->http, f->log, f->log_arg, err))
		return false;
	svc_error cerr = {0};
	svc_errc rc = svc_s3_check(f->s3, &cerr);
	if (rc == SVC_E_UNAUTHENTICATED || rc == SVC_E_INVALID) {
		svc_error_set(err, rc, "%s (check --s3-bucket and the credentials)", cerr.msg);
		return false;
	}
	if (rc != SVC_OK)
		svc_fetch_log(f, "%s: not reachable at start (%s); uploads answer 503 until it is",
			      svc_s3_name(f->s3), cerr.msg);
	return true;
}

void svc_fetch_s3_behind(svc_fetcher *f, const sym_build_id *id, stor_kind kind,
			 const char *source, const uint8_t *data, size_t size)
{
	if (!f->s3 || !strcmp(source, svc_s3_name(f->s3)))
		return;
	char hex[SYM_BUILD_ID_HEX_MAX], key[SVC_S3_KEY_MAX];
	const char *idk = sym_id_kind_name(id->kind);
	sym_build_id_to_hex(id, hex);
	if (idk && svc_s3_key(f->s3, idk, hex,
			      kind == STOR_KIND_DEBUGINFO ? "debuginfo" : "executable", key,
			      sizeof(key)))
		svc_s3_behind(f->s3, key, data, size);
}

struct svc_s3 *svc_fetcher_s3(const svc_fetcher *f)
{
	return f->s3;
}
