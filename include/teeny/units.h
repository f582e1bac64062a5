/*
 * include/teeny/units.h — the one parser for sizes and durations, shared
 * by teenycd (its flags and config file) and teenyctl (purge --to-size,
 * --older-than), so "5GB", "1.5G", "512MiB", "90min", "1d", "30s" and
 * "250ms" mean the same everywhere.  Implemented in common/units.c;
 * libteenyc-client exports it.
 *
 * Sizes: a decimal number (digits, optionally '.' and more digits), optional
 * blanks, then an optional unit, case-insensitive: B; K, KB, KiB; M, MB,
 * MiB; G, GB, GiB; T, TB, TiB; P, PB, PiB.  Every unit is a power of 1024
 * (5GB = 5G = 5GiB = 5 x 2^30 bytes); no unit means bytes.
 * Durations: the same number, then ms; s, sec, second(s); m, min,
 * minute(s); h, hr, hour(s); d, day(s); w, week(s).  No unit means seconds.
 * The result is rounded to the nearest byte or millisecond.  No sign, no
 * exponent, no hex; overflow of 64 bits is an error.
 */
#ifndef TEENY_UNITS_H
#define TEENY_UNITS_H

#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

/* text -> *bytes.  Returns 0, or TEENY_E_INVAL with a one-line message in
 * err[errlen] (err may be NULL) naming the text and what is accepted;
 * *bytes is untouched then. */
int teeny_size_parse(const char *text, uint64_t *bytes, char *err, size_t errlen);

/* text -> *ms (milliseconds).  Same contract as teeny_size_parse. */
int teeny_duration_parse(const char *text, uint64_t *ms, char *err, size_t errlen);

#ifdef __cplusplus
}
#endif

#endif /* TEENY_UNITS_H */
