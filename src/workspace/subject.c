/*
 * subject.c — the subjects of the six commit kinds of the incumbent branch (DESIGN §4.4;
 * upstream's messages, reference/anchor-campaign.md §9), written and read here only:
 * recovery, the V1 stage and the crash checker recognise each kind by its subject, so a
 * second copy of a format would let the two drift apart.
 */
#include "base/strbuf.h"
#include "workspace/workspace.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define V0_SOURCE      "V0: baseline kernel"
#define V0_MEASUREMENT "V0: record baseline measurement"
#define V1_KERNEL_HEAD "v1: framework baseline ("
#define V1_KERNEL_TAIL ") replacing the V0 baseline kernel"
#define V1_PIN_HEAD    "v1: pin framework baseline "
#define PROMOTION_TAIL ": promote verified candidate"

void aka_ws_subject_format(const struct aka_commit_subject *s, struct strbuf *out)
{
    strbuf_reset(out);
    switch (s->kind) {
    case AKA_COMMIT_V0_SOURCE:
        strbuf_addstr(out, V0_SOURCE);
        break;
    case AKA_COMMIT_V0_MEASUREMENT:
        strbuf_addstr(out, V0_MEASUREMENT);
        break;
    case AKA_COMMIT_V1_KERNEL:
        strbuf_addf(out, V1_KERNEL_HEAD "%s" V1_KERNEL_TAIL, s->framework);
        break;
    case AKA_COMMIT_V1_PIN:
        strbuf_addf(out, V1_PIN_HEAD "%.8s", s->kernel_commit);
        break;
    case AKA_COMMIT_PROMOTION:
        strbuf_addf(out, "episode %ld" PROMOTION_TAIL, s->episode);
        break;
    default:
        strbuf_addf(out, "v%ld: episode %ld %s", s->version, s->episode,
                    aka_memory_status_names[s->status]);
        break;
    }
}

/* A decimal number without sign or leading zero at *p; advances p. */
static bool take_number(const char **p, long *out)
{
    const char *s = *p;
    if (*s < '0' || *s > '9' || (s[0] == '0' && s[1] >= '0' && s[1] <= '9'))
        return false;
    char *end;
    *out = strtol(s, &end, 10);
    *p = end;
    return *out >= 0;
}

static bool parse_v1_kernel(const char *s, struct aka_commit_subject *out)
{
    size_t hl = strlen(V1_KERNEL_HEAD), tl = strlen(V1_KERNEL_TAIL), n = strlen(s);
    if (n <= hl + tl || strncmp(s, V1_KERNEL_HEAD, hl) != 0 || strcmp(s + n - tl, V1_KERNEL_TAIL))
        return false;
    size_t fw = n - hl - tl;
    if (fw >= sizeof(out->framework) || memchr(s + hl, ')', fw))
        return false;
    memcpy(out->framework, s + hl, fw);
    out->framework[fw] = '\0';
    out->kind = AKA_COMMIT_V1_KERNEL;
    return true;
}

static bool parse_v1_pin(const char *s, struct aka_commit_subject *out)
{
    size_t hl = strlen(V1_PIN_HEAD);
    if (strncmp(s, V1_PIN_HEAD, hl) != 0 || strlen(s + hl) != 8 ||
        strspn(s + hl, "0123456789abcdef") != 8)
        return false;
    memcpy(out->kernel_commit, s + hl, 9);
    out->kind = AKA_COMMIT_V1_PIN;
    return true;
}

static bool parse_episode(const char *s, struct aka_commit_subject *out)
{
    const char *p = s;
    if (strncmp(p, "episode ", 8) == 0) {
        p += 8;
        if (!take_number(&p, &out->episode) || strcmp(p, PROMOTION_TAIL) != 0)
            return false;
        out->kind = AKA_COMMIT_PROMOTION;
        return true;
    }
    if (*p++ != 'v' || !take_number(&p, &out->version) || strncmp(p, ": episode ", 10) != 0)
        return false;
    p += 10;
    if (!take_number(&p, &out->episode) || *p++ != ' ')
        return false;
    for (int i = AKA_MEM_REJECTED; i <= AKA_MEM_INTERRUPTED; i++)
        if (strcmp(p, aka_memory_status_names[i]) == 0) {
            out->status = (enum aka_memory_status)i;
            out->kind = AKA_COMMIT_OUTCOME;
            return true;
        }
    return false;
}

bool aka_ws_subject_parse(const char *subject, struct aka_commit_subject *out)
{
    memset(out, 0, sizeof(*out));
    if (strcmp(subject, V0_SOURCE) == 0) {
        out->kind = AKA_COMMIT_V0_SOURCE;
        return true;
    }
    if (strcmp(subject, V0_MEASUREMENT) == 0) {
        out->kind = AKA_COMMIT_V0_MEASUREMENT;
        return true;
    }
    return parse_v1_kernel(subject, out) || parse_v1_pin(subject, out) ||
           parse_episode(subject, out);
}
