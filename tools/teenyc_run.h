/*
 * tools/teenyc_run.h — `teenyc run` (tools/teenyc_run.c), the subcommand
 * that runs one launch of a kernel on the CPU.
 */
#ifndef TEENY_TOOLS_TEENYC_RUN_H
#define TEENY_TOOLS_TEENYC_RUN_H

/* argv[0] is "run"; returns the exit status. */
int teenyc_run_main(int argc, char **argv);

#endif /* TEENY_TOOLS_TEENYC_RUN_H */
