TEENY_CONST(N);
i32 h() { return N; }
TEENY_KERNEL() void k(ptr(i32) p) { store(p, h()); i32 q = n_elem; }
