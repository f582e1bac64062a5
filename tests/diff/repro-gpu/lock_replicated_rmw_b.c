/* difffuzz seed 18021: 1d exact w4 cast shape reduce loop atomic_shared gather lock sem */
#include <teeny/dsl.h>

TEENY_DTYPE(D);
TEENY_CONST(B);
TEENY_CONST(E);

TEENY_KERNEL(D, B, E)
void kern(i32 n, ptr(i64) hist5, ptr(i32) lock11, ptr(f32) shared12, ptr(f32) in14)
{
    i32 pid = program_id(0);
    atomic_min(hist5, ((i64) 5.0f), sem_acq_rel);
    while ((atomic_cas(lock11, 0, 1, scope_sys, sem_acquire) == 1)) {
    }
    store((shared12 + (((pid % 3) * 16) + arange(0, E))), (load((shared12 + (((pid % 3) * 16) + arange(0, E)))) + load((in14 + (((((tile(i32)) min(broadcast_to(((D) n), B, E), 0)) % 230) + 230) % 230)))));
    atomic_xchg(lock11, 0, sem_acq_rel);
}

