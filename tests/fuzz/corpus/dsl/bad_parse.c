TEENY_DTYPE(D);
TEENY_KERNEL() void k(ptr(D) p) { i32 y = (p[0] = 1); }
