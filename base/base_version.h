/* SPDX-License-Identifier: Apache-2.0 */
/*
 * base_version: the program's version (CMake's project(VERSION)) and the git
 * revision it was built from (`git describe --always --dirty`, "unknown" when
 * built outside git). Both strings hold only [A-Za-z0-9._+-]. The values come
 * from a header generated in the build tree (cmake/version.cmake), which only
 * base_version.c includes, so a new revision recompiles one file.
 */
#ifndef BASE_VERSION_H
#define BASE_VERSION_H

const char *base_version(void);
const char *base_revision(void);

#endif
