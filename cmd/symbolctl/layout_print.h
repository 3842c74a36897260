/* SPDX-License-Identifier: Apache-2.0 */
/*
 * layout_print: prints type layouts from a loaded layout blob as pahole does
 * (so `diff` against `pahole -C TYPE FILE` is meaningful) or as JSON, for
 * `symbolctl layout`.
 */
#ifndef SYMBOLCTL_LAYOUT_PRINT_H
#define SYMBOLCTL_LAYOUT_PRINT_H

#include <stdio.h>

#include "symbolizer/sym_layout.h"

void layout_print_pahole(FILE *out, const sym_layout *l, uint32_t t);
/* One JSON object for type t (no trailing newline). */
void layout_print_json(FILE *out, const sym_layout *l, uint32_t t);
void layout_print_json_string(FILE *out, const char *s);

#endif
