// SPDX-License-Identifier: Apache-2.0
/*
 * fuzz_upload_auth: the outside bytes the upload route reads before the body
 * (service/upload): the Authorization header, checked against a token by
 * svc_upload_token_ok, and the peer address. The input is
 * "AUTHORIZATION\0ADDRESS"; the token check must agree with a plain
 * reference implementation, and a peer is always allowed with allow_remote.
 */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "service/upload/svc_upload.h"

static const char token[] = "s3cret-Token";

static int reference(const char *auth)
{
	if (strncasecmp(auth, "Bearer ", 7) != 0)
		return 0;
	const char *g = auth + 7;
	while (*g == ' ')
		g++;
	size_t n = strlen(g);
	while (n && g[n - 1] == ' ')
		n--;
	return n == strlen(token) && memcmp(g, token, n) == 0;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);
int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	char *buf = malloc(size + 2);
	if (!buf)
		return 0;
	memcpy(buf, data, size);
	buf[size] = buf[size + 1] = '\0';
	const char *auth = buf, *addr = buf + strlen(buf) + 1;
	if (addr > buf + size)
		addr = buf + size;
	if (svc_upload_token_ok(auth, token, strlen(token)) != reference(auth))
		abort();
	(void)svc_upload_peer_allowed(addr, false);
	if (!svc_upload_peer_allowed(addr, true))
		abort();
	free(buf);
	return 0;
}
