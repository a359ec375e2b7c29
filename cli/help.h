/*
 * help.h - the subcommands' help, from one table (help.c): general usage,
 * one command's help, the man page and the bash completion script.
 */
#ifndef RS_HELP_H
#define RS_HELP_H

#include <stdio.h>

/* Every command's synopsis and one-line summary. */
void rs_help_usage(FILE *f);
/* Command name's usage, options and example; -1 when there is no such
 * command (nothing printed). */
int rs_help_command(FILE *f, const char *name);
/* The railsim(1) man page, in roff. */
void rs_help_man(FILE *f);
/* A bash completion script: commands, their subcommands, scenario keys
 * after --set and --sweep. -1 when out of memory. */
int rs_help_completion(FILE *f);
/* Is --help or -h among argv[0..argc)? */
int rs_help_wanted(int argc, char **argv);

#endif
