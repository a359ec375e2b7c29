/*
 * cli.c - what every subcommand of the railsim command shares (cli.h):
 * the one-sentence error of bad input.
 */
#include "cli.h"

#include <stdio.h>

int rs_cli_bad_input(const char *fmt, const char *a)
{
    fprintf(stderr, "railsim: ");
    fprintf(stderr, fmt, a);
    fputc('\n', stderr);
    return RS_EXIT_BAD_INPUT;
}
