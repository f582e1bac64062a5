/*
 * tools/npy.h — NumPy's .npy files (format versions 1.0, 2.0 and 3.0):
 * C-order arrays of one little-endian scalar dtype, as `teenyc run` reads
 * and writes kernel buffers.  bf16 has no NumPy dtype: it travels as its
 * 16-bit patterns ('<u2').
 */
#ifndef TEENY_TOOLS_NPY_H
#define TEENY_TOOLS_NPY_H

#include <stddef.h>
#include <stdint.h>

#include "teeny/compile.h"

#define NPY_MAX_DIMS 8

typedef struct npy_array {
  char descr[8];             /* "<f4", "|b1", ... */
  int ndim;
  size_t shape[NPY_MAX_DIMS];
  size_t count;              /* product of the shape */
  size_t itemsize;           /* bytes per element */
  void *data;                /* count * itemsize bytes (malloc'd) */
} npy_array;

/* The descr of dtype dt ("<f4"; bf16 "<u2"), or NULL. */
const char *npy_descr(teeny_dtype dt);
/* Read path into *a.  Returns 0, or -1 with a message in err. */
int npy_read(const char *path, npy_array *a, char *err, size_t errsz);
/* Write count elements of dtype dt at data to path as a 1-D array, or
 * with shape[0..ndim) when ndim > 0.  Returns 0 or -1 with a message. */
int npy_write(const char *path, teeny_dtype dt, const void *data, size_t count, int ndim,
              const size_t *shape, char *err, size_t errsz);
void npy_free(npy_array *a);

#endif /* TEENY_TOOLS_NPY_H */
