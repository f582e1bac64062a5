/* dsl/interp.c — see dsl/compiler.h; being written. */
