#define N 4
void f() { i32 x = "s"; }
