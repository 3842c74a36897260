/* SPDX-License-Identifier: Apache-2.0 */
/*
 * commands.h: the subcommands of symbolctl. Each lives in its own file in this
 * folder and is listed in the table in main.c.
 */
#ifndef SYMBOLCTL_COMMANDS_H
#define SYMBOLCTL_COMMANDS_H

int cmd_addr2line(int argc, char **argv);
int cmd_fetch(int argc, char **argv);
int cmd_layout(int argc, char **argv);
int cmd_pprof(int argc, char **argv);
int cmd_otlp(int argc, char **argv);
int cmd_status(int argc, char **argv);
int cmd_symbolize(int argc, char **argv);
int cmd_upload(int argc, char **argv);
int cmd_version(int argc, char **argv);

#endif
