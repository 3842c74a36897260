/* SPDX-License-Identifier: Apache-2.0 */
/*
 * ctl_full.h: the front `symbolctl` runs a command it does not link by exec'ing
 * `symbolctl-full` with the same arguments (see ctl_full.c).
 */
#ifndef SYMBOLCTL_CTL_FULL_H
#define SYMBOLCTL_CTL_FULL_H

/* Execs symbolctl-full with argv (argv[1] the command). Returns only when it
 * could not: an exit status (CTL_EXIT_IO), the reason printed on stderr. */
int ctl_full_exec(char **argv);

#endif
