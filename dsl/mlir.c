/* dsl/mlir.c — see dsl/compiler.h; being written. */
