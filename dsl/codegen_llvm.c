/* dsl/codegen_llvm.c — tile IR -> LLVM IR -> PTX; being written. */
