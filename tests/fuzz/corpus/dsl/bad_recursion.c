i32 f(i32 x) { return g(x); }
i32 g(i32 x) { return f(x); }
