/* dsl/resolve.c — see dsl/compiler.h; being written. */
