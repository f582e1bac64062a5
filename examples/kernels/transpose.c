/* transpose: Y = X^T for X [M, N], Y [N, M] (any row strides), one
 * BLOCK_M x BLOCK_N tile per program.  The tile is read along X's rows and
 * written along Y's rows, i.e. along its columns: the code generator moves
 * it between the two layouts through shared memory.
 * Grid: cdiv(M, BLOCK_M) * cdiv(N, BLOCK_N) programs on axis 0. */
#include <teeny/dsl.h>

TEENY_DTYPE(D);
TEENY_CONST(BLOCK_M);
TEENY_CONST(BLOCK_N);

TEENY_KERNEL(D, BLOCK_M, BLOCK_N)
void transpose(ptr(D) x_ptr, ptr(D) y_ptr, i32 M, i32 N, i32 stride_xm, i32 stride_yn)
{
    i32 pid = program_id(0);
    i32 num_pid_n = cdiv(N, BLOCK_N);
    i32 pid_m = pid / num_pid_n;
    i32 pid_n = pid % num_pid_n;
    tile(i32) rm = pid_m * BLOCK_M + arange(0, BLOCK_M);
    tile(i32) rn = pid_n * BLOCK_N + arange(0, BLOCK_N);
    tile(bool) mask = (col(rm) < M) & (row(rn) < N);
    tile(D) x = load(x_ptr + col(rm) * stride_xm + row(rn), mask, 0);
    store(y_ptr + row(rm) + col(rn) * stride_yn, trans(x), trans(mask));
}
