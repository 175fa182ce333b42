/*
 * error.h — how every aka module reports failure.
 *
 * A failing function fills a `struct aka_err` with an exit code from DESIGN §4.9
 * and a one-line message, and returns -1 (or NULL). The message is meant for the
 * kernel engineer at the terminal, so it always names the file and field that are
 * wrong and what was expected, e.g.
 *
 *     ops/rope/definition.json: inputs.x.dtype: expected one of float32, ...; got "f33"
 *
 * Callers up the stack may prefix context with aka_err_prefix() but never
 * replace a more specific message with a vaguer one.
 */
#ifndef AKA_BASE_ERROR_H
#define AKA_BASE_ERROR_H

#include <stdarg.h>
#include <stddef.h>

enum aka_exit {
    AKA_EXIT_OK = 0,
    AKA_EXIT_FAILED = 1,       /* the campaign or operation failed */
    AKA_EXIT_USAGE = 2,        /* usage error or bad input */
    AKA_EXIT_ENV = 75,         /* environment unavailable; recovery may take over */
    AKA_EXIT_TIMEOUT = 124,    /* a wall-clock limit was hit */
    AKA_EXIT_INTERRUPTED = 130 /* SIGINT / SIGTERM */
};

#define AKA_ERR_MSG_MAX 2048

struct aka_err {
    int code; /* one of enum aka_exit; 0 while no error is set */
    char msg[AKA_ERR_MSG_MAX];
};

#define AKA_ERR_INIT                                                                               \
    {                                                                                              \
        0,                                                                                         \
        {                                                                                          \
            0                                                                                      \
        }                                                                                          \
    }

/* Set the error (code, printf-style message). Always returns -1. */
int aka_err_set(struct aka_err *err, int code, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));
int aka_err_vset(struct aka_err *err, int code, const char *fmt, va_list ap);

/* Put "prefix: " in front of the current message. Always returns -1. */
int aka_err_prefix(struct aka_err *err, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

void aka_err_clear(struct aka_err *err);

/* Print "aka: <msg>" to stderr and return the error's exit code. */
int aka_err_report(const struct aka_err *err);

/* Abort with a message on allocation failure; used by every allocating helper. */
void *aka_xmalloc(size_t n);
void *aka_xcalloc(size_t n, size_t size);
void *aka_xrealloc(void *p, size_t n);
char *aka_xstrdup(const char *s);
char *aka_xstrndup(const char *s, size_t n);

#endif
