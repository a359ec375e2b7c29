/*
 * cli.h - what the railsim subcommands share: the exit codes and the
 * one-sentence error printer. Each subcommand lives in its own cmd_*.c and
 * is dispatched by main.c.
 */
#ifndef RS_CLI_H
#define RS_CLI_H

enum { RS_EXIT_OK = 0, RS_EXIT_RUN_FAILED = 1, RS_EXIT_BAD_INPUT = 2 };

/* Print "railsim: " + fmt (with one %s argument a) to stderr; returns
 * RS_EXIT_BAD_INPUT. */
int rs_cli_bad_input(const char *fmt, const char *a);

/* Subcommands: argv[0] is the first argument after the command name. */
int rs_cmd_run(int argc, char **argv);

#endif
