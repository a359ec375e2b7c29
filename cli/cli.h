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
int rs_cmd_compare(int argc, char **argv);
int rs_cmd_validate(int argc, char **argv); /* cmd_validate.c */
int rs_cmd_trace(int argc, char **argv);   /* cmd_trace.c */
int rs_cmd_cost(int argc, char **argv);    /* cmd_cost.c */
int rs_cmd_report(int argc, char **argv);  /* cmd_report.c */
int rs_cmd_plot(int argc, char **argv);    /* cmd_report.c */
int rs_cmd_export(int argc, char **argv);  /* cmd_export.c */
int rs_cmd_faults(int argc, char **argv);  /* cmd_faults.c: faults sweep */

/* Write the PNGs of DIR/plots/ with analysis/plots.py under /usr/bin/python3,
 * listing them on stdout unless quiet; returns an exit code (cmd_report.c). */
int rs_cli_plot(const char *dir, int quiet);

#endif
