// SPDX-License-Identifier: Apache-2.0
/*
 * fuzz_forwarded: the outside bytes of --trusted-proxies and X-Forwarded-For
 * (service/upload/svc_upload_proxy.c). The input is "PROXIES\0PEER\0HEADER":
 * a parse either fails with a message or gives at most SVC_PROXIES_MAX
 * entries; a client address found is NUL-terminated within its buffer, and
 * with no trusted proxy it is always the peer itself.
 */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "service/upload/svc_upload.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);
int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	char *buf = malloc(size + 3);
	if (!buf)
		return 0;
	memcpy(buf, data, size);
	buf[size] = buf[size + 1] = buf[size + 2] = '\0';
	const char *list = buf, *peer = list + strlen(list) + 1;
	const char *xff = peer + strlen(peer) + 1;
	svc_proxies p, none;
	svc_error err = {0};
	char out[64], out2[64];
	if (!svc_proxies_parse(&p, list, &err) && !err.msg[0])
		abort();
	if (p.n > SVC_PROXIES_MAX)
		abort();
	if (svc_proxies_client(&p, peer, xff, out, sizeof(out)) && strnlen(out, 64) == 64)
		abort();
	svc_proxies_parse(&none, "", &err);
	if (svc_proxies_client(&none, peer, xff, out2, sizeof(out2)) && strcmp(out2, peer) != 0 &&
	    strchr(peer, ' ') == NULL && strchr(peer, '\t') == NULL)
		abort();
	free(buf);
	return 0;
}
