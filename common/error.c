/*
 * common/error.c — names and messages of the teeny_err codes, generated
 * from the one table in include/teeny/error.h.
 */
#include "common/common.h"

const char *teeny_strerror(int err) {
  switch (err) {
#define TEENY__ERR_MSG(name, num, msg)                                         \
  case num:                                                                    \
    return msg;
    TEENY_ERRNO_MAP(TEENY__ERR_MSG)
#undef TEENY__ERR_MSG
  }
  return "unknown error";
}

const char *teeny_err_name(int err) {
  switch (err) {
#define TEENY__ERR_NAME(name, num, msg)                                        \
  case num:                                                                    \
    return #name;
    TEENY_ERRNO_MAP(TEENY__ERR_NAME)
#undef TEENY__ERR_NAME
  }
  return "UNKNOWN";
}
