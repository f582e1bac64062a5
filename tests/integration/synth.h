/*
 * tests/integration/synth.h — synthetic index rows, for the tests and
 * benches of a big store (paged lists, 10^4 .. 10^6 entries): rows written
 * straight into a stopped daemon's index.db with SQLite, many orders of
 * magnitude faster than compiling.  Their files do not exist (list, show,
 * stats and purge do not read them; verify and disk hits would find them
 * missing), except for synth_rows_files' rows.
 */
#ifndef TEENY_TESTS_SYNTH_H
#define TEENY_TESTS_SYNTH_H

/* Insert n rows named name (a C identifier), ids name__0 .. name__{n-1}
 * (padded with "__1024" to id_len bytes; 0: not padded), keys derived from
 * name and the number, varied sizes, hits and last-used times (within the
 * last day), into cache/index.db, in one transaction.  The index must
 * exist (a daemon ran on cache) and no daemon may run.  0 or -1 (a
 * message on stderr). */
int synth_rows(const char *cache, const char *name, long n, int id_len);
/* The same with the three files of each row written too (2 KiB, 512 and
 * 1 KiB of filler, their sizes and SHA-256 in the row), so that verify
 * reads and hashes them like real entries.  Slower: three files a row. */
int synth_rows_files(const char *cache, const char *name, long n);
/* The key synth_rows gives row i of name (65 bytes with the NUL). */
void synth_key(const char *name, long i, char out[65]);

#endif /* TEENY_TESTS_SYNTH_H */
