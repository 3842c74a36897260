// SPDX-License-Identifier: Apache-2.0
/*
 * base_version: the version strings (base_version.h), from the generated header.
 */
#include "base/base_version.h"

#include "base_version_gen.h"

const char *base_version(void)
{
	return SYMBOLIZER_VERSION;
}

const char *base_revision(void)
{
	return SYMBOLIZER_REVISION;
}
