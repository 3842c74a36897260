// SPDX-License-Identifier: Apache-2.0
/*
 * svc_upload_auth: who may upload (svc_upload.h): the bearer token, read from
 * --upload-token-file and compared in constant time, and the peer's address
 * (loopback only unless --upload-allow-remote: there is no TLS).
 *
 * The token file is refused, as sshd's StrictModes refuses a key file, when
 * its group or others may read or write it, and the token when it is shorter
 * than SVC_UPLOAD_TOKEN_MIN bytes: a secret anyone on the host can read, or
 * guess, is no secret.
 */
#include "service/upload/svc_upload_impl.h"

#include <arpa/inet.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

bool svc_upload_read_token(svc_upload *u, const char *path, svc_error *err)
{
	FILE *f = fopen(path, "r");
	if (!f) {
		svc_error_set(err, SVC_E_IO, "--upload-token-file %s: %s", path, strerror(errno));
		return false;
	}
	struct stat st;
	if (fstat(fileno(f), &st) == 0 && (st.st_mode & (S_IRWXG | S_IRWXO))) {
		fclose(f);
		svc_error_set(err, SVC_E_INVALID,
			      "--upload-token-file %s is open to its group or others (mode %04o): "
			      "chmod 600 it", path, (unsigned)(st.st_mode & 07777));
		return false;
	}
	char *buf = malloc(SVC_UPLOAD_TOKEN_MAX + 1);
	if (!buf) {
		fclose(f);
		svc_error_set(err, SVC_E_NOMEM, "out of memory");
		return false;
	}
	size_t n = fread(buf, 1, SVC_UPLOAD_TOKEN_MAX + 1, f);
	bool bad = ferror(f);
	fclose(f);
	while (n > 0 && (buf[n - 1] == '\n' || buf[n - 1] == '\r' || buf[n - 1] == ' ' ||
			 buf[n - 1] == '\t'))
		n--;
	const char *why = bad ? "cannot be read" : n == 0 ? "is empty"
			  : n > SVC_UPLOAD_TOKEN_MAX ? "holds a token over 4096 bytes"
			  : n < SVC_UPLOAD_TOKEN_MIN ? "holds a token under 16 bytes" : NULL;
	for (size_t i = 0; !why && i < n; i++)
		if ((unsigned char)buf[i] <= ' ' || (unsigned char)buf[i] >= 0x7f)
			why = "holds a space or a control character inside the token";
	if (why) {
		free(buf);
		svc_error_set(err, SVC_E_INVALID, "--upload-token-file %s %s", path, why);
		return false;
	}
	buf[n] = '\0';
	u->token = buf;
	u->token_len = n;
	return true;
}

bool svc_upload_token_ok(const char *authorization, const char *token, size_t token_len)
{
	if (!authorization || !token || token_len == 0)
		return false;
	/* "Bearer" is case-insensitive (RFC 6750, RFC 9110's auth-scheme) */
	if (strncasecmp(authorization, "Bearer ", 7) != 0)
		return false;
	const char *given = authorization + 7;
	while (*given == ' ')
		given++;
	size_t given_len = strlen(given);
	while (given_len > 0 && given[given_len - 1] == ' ')
		given_len--;
	/* Every byte of the token is looked at whatever the answer: the time
	 * depends on token_len only, not on where the first difference is. */
	volatile unsigned char diff = given_len != token_len;
	for (size_t i = 0; i < token_len; i++) {
		unsigned char g = i < given_len ? (unsigned char)given[i] : 0;
		diff |= g ^ (unsigned char)token[i];
	}
	return diff == 0;
}

bool svc_upload_peer_allowed(const char *address, bool allow_remote)
{
	if (allow_remote)
		return true;
	if (!address)
		return false;
	struct in_addr a4;
	struct in6_addr a6;
	if (inet_pton(AF_INET, address, &a4) == 1)
		return (ntohl(a4.s_addr) >> 24) == 127;
	if (inet_pton(AF_INET6, address, &a6) != 1)
		return false;
	if (IN6_IS_ADDR_LOOPBACK(&a6))
		return true;
	/* ::ffff:127.x.y.z, an IPv4 loopback peer on a dual-stack socket */
	return IN6_IS_ADDR_V4MAPPED(&a6) && a6.s6_addr[12] == 127;
}
