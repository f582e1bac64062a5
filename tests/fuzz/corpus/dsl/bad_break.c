void f(i32 x) { while (x) { break; } }
