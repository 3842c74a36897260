/* SPDX-License-Identifier: Apache-2.0 */
/*
 * exit_codes.h: the exit status of every symbolctl command, one scheme for all
 * of them (documented in each command's --help, docs/symbolctl.md and man/symbolctl.1).
 */
#ifndef SYMBOLCTL_EXIT_CODES_H
#define SYMBOLCTL_EXIT_CODES_H

enum ctl_exit {
	CTL_EXIT_OK = 0,         /* everything asked for was done */
	CTL_EXIT_NOT_FOUND = 1,  /* some build ID or address was not found (or not OK) */
	CTL_EXIT_USAGE = 2,      /* bad flags or arguments */
	CTL_EXIT_SERVER = 3,     /* the server failed or could not be reached */
	CTL_EXIT_IO = 4,         /* a local file or the store could not be read or written */
};

/* The text each command's --help ends with. */
#define CTL_EXIT_HELP \
	"Exit status: 0 ok, 1 some build ID or address not found (or not OK),\n" \
	"2 usage error, 3 server or transport error, 4 local I/O or store error.\n"

#endif
