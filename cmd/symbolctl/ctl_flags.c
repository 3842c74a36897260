// SPDX-License-Identifier: Apache-2.0
/*
 * ctl_flags: the one command-line reader of symbolctl's subcommands, on
 * base_flag_parse_args (ctl_flags.h).
 */
#include "cmd/symbolctl/ctl_flags.h"

#include <stdlib.h>
#include <string.h>

#include "cmd/symbolctl/exit_codes.h"

const char *ctl_default_server(void)
{
	const char *env = getenv("SYMBOLIZER_URL");
	return env && *env ? env : CTL_DEFAULT_SERVER;
}

void ctl_lower_build_id(const char *hex)
{
	/* argv's strings are the program's to change (C11 5.1.2.2.1) */
	for (char *p = (char *)hex; p && *p; p++)
		if (*p >= 'A' && *p <= 'F')
			*p = (char)(*p - 'A' + 'a');
}

bool ctl_parse_server(void *settings, const char *value, char *err, size_t err_size)
{
	if (!*value) {
		snprintf(err, err_size, "an empty URL");
		return false;
	}
	((struct ctl_remote *)settings)->server = value;
	return true;
}

bool ctl_parse_timeout(void *settings, const char *value, char *err, size_t err_size)
{
	int64_t ms;
	if (!base_parse_duration_ms(value, &ms) || ms <= 0) {
		snprintf(err, err_size, "'%.100s' is not a duration above 0 (e.g. 500ms, 10s)",
			 value);
		return false;
	}
	((struct ctl_remote *)settings)->timeout_ms = ms;
	return true;
}

int ctl_flags_parse(const char *cmd, const base_flag_group *groups, size_t n_groups,
		    unsigned how, int argc, char **argv, char ***pos, int *n_pos,
		    void (*usage)(FILE *out))
{
	*pos = NULL;
	*n_pos = 0;
	if (how & CTL_FLAGS_HELP_FIRST) {
		for (int i = 1; i < argc && strcmp(argv[i], "--"); i++) {
			if (!strcmp(argv[i], "-h") || !strcmp(argv[i], "--help")) {
				usage(stdout);
				return CTL_EXIT_OK;
			}
		}
	}
	*pos = calloc((size_t)argc + 1, sizeof(char *));
	if (!*pos) {
		fprintf(stderr, "symbolctl %s: out of memory\n", cmd);
		return CTL_EXIT_IO;
	}
	char why[BASE_FLAG_ERR_MAX];
	int bad = 0;
	switch (base_flag_parse_args(groups, n_groups, how & ~CTL_FLAGS_HELP_FIRST, argc, argv,
				     *pos, n_pos, &bad, why, sizeof(why))) {
	case BASE_FLAG_ARGS_OK:
		return -1;
	case BASE_FLAG_ARGS_HELP:
		usage(stdout);
		free(*pos);
		*pos = NULL;
		return CTL_EXIT_OK;
	case BASE_FLAG_ARGS_UNKNOWN:
	case BASE_FLAG_ARGS_BAD:
		break;
	}
	fprintf(stderr, "symbolctl %s: %s\n", cmd, why);
	usage(stderr);
	free(*pos);
	*pos = NULL;
	return CTL_EXIT_USAGE;
}
