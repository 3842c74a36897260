// SPDX-License-Identifier: Apache-2.0
/*
 * svc_nofile: the process's open-files limit, raised from its soft value to
 * its hard one at start (svc_server_impl.h); svc_conns.c derives the default
 * connection cap from it.
 */
#include <stdint.h>

#include <sys/resource.h>

#include "base/base_log.h"
#include "service/http/svc_server_impl.h"

uint64_t svc_nofile_raise(void)
{
	struct rlimit rl;
	if (getrlimit(RLIMIT_NOFILE, &rl) != 0)
		return 1024;
	rlim_t want = rl.rlim_max == RLIM_INFINITY ? (rlim_t)1 << 20 : rl.rlim_max;
	if (rl.rlim_cur != RLIM_INFINITY && rl.rlim_cur < want) {
		rlim_t was = rl.rlim_cur;
		rl.rlim_cur = want;
		if (setrlimit(RLIMIT_NOFILE, &rl) == 0)
			base_logf(BASE_LOG_INFO, "raised the open-files limit", "from=%llu to=%llu",
				  (unsigned long long)was, (unsigned long long)want);
		else
			rl.rlim_cur = was;
	}
	return rl.rlim_cur == RLIM_INFINITY ? (uint64_t)1 << 20 : (uint64_t)rl.rlim_cur;
}
