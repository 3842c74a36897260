/* SPDX-License-Identifier: Apache-2.0 */
/*
 * svc_packages_impl: the package source's object, shared by its scanner
 * (svc_packages_scan.c) and its source and metrics (svc_packages.c).
 */
#ifndef SVC_PACKAGES_IMPL_H
#define SVC_PACKAGES_IMPL_H

#include <pthread.h>
#include <stdatomic.h>

#include "base/base_vec.h"
#include "service/resolve/svc_packages.h"

typedef struct svc_packages_src {
	src_source base;         /* first: it is a src_source */
	struct svc_packages *p;
} svc_packages_src;

struct svc_packages {
	svc_packages_options o;
	char **dirs;
	svc_packages_src src;
	pthread_t thread;
	bool running;
	int wake[2];             /* pipe: stop */
	int inotify;             /* -1 when not watching */
	atomic_bool stopping;     /* set by destroy, read by the scanner */
	pthread_mutex_t mu;      /* stats, origins */
	svc_packages_stats st;
	base_vec origins;        /* char *: package paths handed out as src_file.origin */
	/* The catalogue is in step with the disk: false before the first pass
	 * ends, while a package is scanned, and from a change inotify reports to
	 * the end of the pass it starts. A miss meanwhile is SRC_PENDING. */
	atomic_bool settled;
	atomic_uint_fast64_t generation;  /* catalogue additions (svc_packages_generation) */
};

/* svc_packages_scan.c: the thread's body. */
void *svc_packages_run(void *arg);

#endif
