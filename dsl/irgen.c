/* dsl/irgen.c — see dsl/compiler.h; being written. */
