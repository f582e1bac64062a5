/* dsl/api.c — see dsl/compiler.h; being written. */
