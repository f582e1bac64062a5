/* dsl/parse.c — see dsl/compiler.h; being written. */
