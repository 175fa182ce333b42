/*
 * vec.h — typed growable arrays.
 *
 *     struct { struct shape *v; size_t n, alloc; } shapes = {0};
 *     VEC_PUSH(shapes, s);
 *
 * Any struct with members `v`, `n` and `alloc` works. Growth is geometric and
 * aborts on allocation failure (see aka_xrealloc).
 */
#ifndef AKA_BASE_VEC_H
#define AKA_BASE_VEC_H

#include "base/error.h"
#include <stddef.h>

#define VEC(type)                                                                                  \
    struct {                                                                                       \
        type *v;                                                                                   \
        size_t n, alloc;                                                                           \
    }

#define VEC_GROW(vec, want)                                                                        \
    do {                                                                                           \
        if ((want) > (vec).alloc) {                                                                \
            size_t vec_new_ = (vec).alloc ? (vec).alloc * 2 : 8;                                   \
            while (vec_new_ < (want))                                                              \
                vec_new_ *= 2;                                                                     \
            (vec).v = aka_xrealloc((vec).v, vec_new_ * sizeof(*(vec).v));                          \
            (vec).alloc = vec_new_;                                                                \
        }                                                                                          \
    } while (0)

#define VEC_PUSH(vec, item)                                                                        \
    do {                                                                                           \
        VEC_GROW(vec, (vec).n + 1);                                                                \
        (vec).v[(vec).n++] = (item);                                                               \
    } while (0)

/* Free the storage (not the elements) and reset to empty. */
#define VEC_FREE(vec)                                                                              \
    do {                                                                                           \
        free((vec).v);                                                                             \
        (vec).v = NULL;                                                                            \
        (vec).n = (vec).alloc = 0;                                                                 \
    } while (0)

/* A NULL-terminated list of owned strings, e.g. an argv. */
struct strvec {
    char **v;
    size_t n, alloc;
};
#define STRVEC_INIT                                                                                \
    {                                                                                              \
        NULL, 0, 0                                                                                 \
    }

void strvec_push(struct strvec *sv, const char *s);
void strvec_pushf(struct strvec *sv, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
void strvec_pushv(struct strvec *sv, const char *const *items);
void strvec_clear(struct strvec *sv);
/* Index of s in sv, or -1. */
long strvec_find(const struct strvec *sv, const char *s);

#endif
