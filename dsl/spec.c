/* dsl/spec.c — see dsl/compiler.h; being written. */
