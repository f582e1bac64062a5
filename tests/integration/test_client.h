/*
 * tests/integration/test_client.h — what client_itest's files share:
 * a client of libteenyc-client for a test, and the tests each file adds
 * to test_client.c's table.
 */
#ifndef TEENY_TESTS_TEST_CLIENT_H
#define TEENY_TESTS_TEST_CLIENT_H

#include "teeny/client.h"

/* A client in mode on socket (NULL: discovery) and store cache_dir (NULL:
 * the environment's), no memo; NULL (the reason printed) if open fails. */
teeny_client *it_client_open(teeny_client_mode mode, const char *socket,
                             const char *cache_dir);

int it_client_thin_maps(void);      /* test_client_modes.c */
int it_client_discovery(void);
int it_client_socket_group(void);
int it_client_auto_notice(void);
int it_client_embedded_root(void);  /* test_client_store.c */
int it_client_damaged_store(void);
int it_client_tune_single_flight(void); /* test_client_tune.c */
int it_client_tune_restart(void);
int it_client_tune_tuner_dies(void);
int it_client_cubin_arch(void);

#endif /* TEENY_TESTS_TEST_CLIENT_H */
