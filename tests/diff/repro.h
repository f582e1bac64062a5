/*
 * tests/diff/repro.h — cases as text: the executor protocol, reproducer
 * files (NAME.c, the kernel; NAME.txt, its bindings, launch, argument
 * fills and tolerances, and the command lines that replay it), and .npy
 * files of input buffers for `teenyc run`.
 */
#ifndef TEENY_TESTS_DIFF_REPRO_H
#define TEENY_TESTS_DIFF_REPRO_H

#include "tests/diff/dfz.h"

/* The case as text (malloc'd).  inline_source: the kernel follows a
 * "source-inline" line; else a "source FILE" line names source_file. */
char *dfz_case_to_text(const dfz_case *c, const char *source_file);
/* Parse text; a "source FILE" line is read relative to dir.  known gets
 * the "known ..." line's value (a known-failing reproducer), if any. */
bool dfz_case_from_text(const char *text, const char *dir, dfz_case *c, char *known,
                        size_t knownsz, char *err, size_t errsz);
/* Read a reproducer NAME.txt (and the kernel file it names). */
bool dfz_repro_read(const char *txt_path, dfz_case *c, char *known, size_t knownsz, char *err,
                    size_t errsz);
/* Write DIR/NAME.c, DIR/NAME.txt and DIR/NAME.ARG.npy for inputs that
 * `teenyc run --fill` cannot make; o says what failed. */
bool dfz_repro_write(const char *dir, const char *name, const dfz_case *c, const dfz_outcome *o,
                     char *err, size_t errsz);
/* A whole file (malloc'd, NUL-terminated), or NULL. */
char *dfz_read_file(const char *path);

#endif /* TEENY_TESTS_DIFF_REPRO_H */
