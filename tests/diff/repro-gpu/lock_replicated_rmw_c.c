/* difffuzz seed 18029: 1d exact w4 cast shape reduce loop atomic_shared gather lock sem */
#include <teeny/dsl.h>

TEENY_CONST(B);
TEENY_CONST(E);

TEENY_KERNEL(B, E)
void kern(ptr(i64) hist3, ptr(i32) lock9, ptr(f32) shared10, ptr(f32) in12)
{
    i32 pid = program_id(0);
    atomic_min(hist3, ((i64) 5.0f), sem_acq_rel);
    while ((atomic_cas(lock9, 0, 1, scope_sys, sem_acquire) == 1)) {
    }
    store((shared10 + (((pid % 3) * 4) + arange(0, E))), (load((shared10 + (((pid % 3) * 4) + arange(0, E)))) + load((in12 + (((((tile(i32)) min(broadcast_to(((u32) pid), B, E), 0)) % 230) + 230) % 230)))));
    atomic_xchg(lock9, 0, sem_acq_rel);
}

