/* dsl/lex.c — see dsl/compiler.h; being written. */
