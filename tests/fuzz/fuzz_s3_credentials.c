// SPDX-License-Identifier: Apache-2.0
/*
 * fuzz_s3_credentials: the outside bytes of --s3-credentials-file, parsed by
 * svc_s3_credentials_parse (service/fetch/svc_s3.h): whatever the input, a
 * success gives two non-empty NUL-terminated values within their buffers,
 * and a failure's message never quotes them.
 */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "service/fetch/svc_s3.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);
int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	char key[32], secret[48];
	svc_error err = {0};
	bool ok = svc_s3_credentials_parse((const char *)data, size, key, sizeof(key), secret,
					   sizeof(secret), &err);
	if (ok && (!key[0] || !secret[0] || strlen(key) >= sizeof(key) ||
		   strlen(secret) >= sizeof(secret)))
		abort();
	if (!ok && !err.msg[0])
		abort();
	return 0;
}
