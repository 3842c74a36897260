// SPDX-License-Identifier: Apache-2.0
/*
 * upload_put: one upload of symbolctl upload (see upload_put.h), with libcurl.
 */
#include "cmd/symbolctl/upload_put.h"

#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <strings.h>
#include <sys/stat.h>

#include <curl/curl.h>

struct sink {
	upload_put_result *res;
	size_t len;
};

static size_t on_body(char *data, size_t size, size_t n, void *arg)
{
	struct sink *s = arg;
	size_t len = size * n, room = sizeof(s->res->why) - 1 - s->len;
	size_t take = len < room ? len : room;
	memcpy(s->res->why + s->len, data, take);
	s->len += take;
	s->res->why[s->len] = '\0';
	return len;
}

/* Copies a header's value (trimmed) when it is name. */
static void header_value(const char *line, size_t len, const char *name, char *out, size_t size)
{
	size_t n = strlen(name);
	if (len <= n + 1 || strncasecmp(line, name, n) != 0 || line[n] != ':')
		return;
	const char *v = line + n + 1;
	size_t vl = len - n - 1;
	while (vl && (*v == ' ' || *v == '\t'))
		v++, vl--;
	while (vl && (v[vl - 1] == '\r' || v[vl - 1] == '\n' || v[vl - 1] == ' '))
		vl--;
	snprintf(out, size, "%.*s", (int)vl, v);
}

static size_t on_header(char *data, size_t size, size_t n, void *arg)
{
	upload_put_result *res = arg;
	char alt[16] = "";
	header_value(data, size * n, "X-Symbolizer-Upload", res->result, sizeof(res->result));
	header_value(data, size * n, "X-Symbolizer-Alt", alt, sizeof(alt));
	if (!strcmp(alt, "missing"))
		res->alt_missing = true;
	return size * n;
}

static int on_progress(void *arg, curl_off_t dltotal, curl_off_t dlnow, curl_off_t ultotal,
		       curl_off_t ulnow)
{
	(void)dltotal, (void)dlnow, (void)ultotal;
	const upload_put *p = arg;
	if (p->progress)
		p->progress(p->arg, (uint64_t)ulnow);
	return 0;
}

bool upload_put_run(const upload_put *p, upload_put_result *res)
{
	memset(res, 0, sizeof(*res));
	FILE *f = fopen(p->path, "rb");
	struct stat st;
	if (!f || fstat(fileno(f), &st) != 0) {
		snprintf(res->why, sizeof(res->why), "%s: %s", p->path, strerror(errno));
		if (f)
			fclose(f);
		return false;
	}
	char url[4096], auth[4200];
	size_t sl = strlen(p->server);
	snprintf(url, sizeof(url), "%.*s/buildid/%s/%s%s",
		 (int)(sl && p->server[sl - 1] == '/' ? sl - 1 : sl), p->server, p->hex, p->kind,
		 p->force ? "?force=1" : "");
	snprintf(auth, sizeof(auth), "Authorization: Bearer %s", p->token);
	CURL *c = curl_easy_init();
	struct curl_slist *h = curl_slist_append(NULL, auth);
	struct curl_slist *h2 = h ? curl_slist_append(h, "Expect:") : NULL;
	if (!c || !h2) {
		snprintf(res->why, sizeof(res->why), "out of memory");
		curl_slist_free_all(h);
		if (c)
			curl_easy_cleanup(c);
		fclose(f);
		return true;
	}
	struct sink s = {res, 0};
	curl_easy_setopt(c, CURLOPT_URL, url);
	curl_easy_setopt(c, CURLOPT_UPLOAD, 1L);
	curl_easy_setopt(c, CURLOPT_READDATA, f);
	curl_easy_setopt(c, CURLOPT_INFILESIZE_LARGE, (curl_off_t)st.st_size);
	curl_easy_setopt(c, CURLOPT_HTTPHEADER, h2);
	curl_easy_setopt(c, CURLOPT_WRITEFUNCTION, on_body);
	curl_easy_setopt(c, CURLOPT_WRITEDATA, &s);
	curl_easy_setopt(c, CURLOPT_HEADERFUNCTION, on_header);
	curl_easy_setopt(c, CURLOPT_HEADERDATA, res);
	curl_easy_setopt(c, CURLOPT_NOPROGRESS, 0L);
	curl_easy_setopt(c, CURLOPT_XFERINFOFUNCTION, on_progress);
	curl_easy_setopt(c, CURLOPT_XFERINFODATA, (void *)p);
	curl_easy_setopt(c, CURLOPT_NOSIGNAL, 1L);
	CURLcode rc = curl_easy_perform(c);
	if (rc != CURLE_OK)
		snprintf(res->why, sizeof(res->why), "%.300s: %s", url, curl_easy_strerror(rc));
	else
		curl_easy_getinfo(c, CURLINFO_RESPONSE_CODE, &res->http_status);
	size_t wl = strlen(res->why);
	while (wl && (res->why[wl - 1] == '\n' || res->why[wl - 1] == '\r'))
		res->why[--wl] = '\0';
	curl_slist_free_all(h2);
	curl_easy_cleanup(c);
	fclose(f);
	return true;
}
