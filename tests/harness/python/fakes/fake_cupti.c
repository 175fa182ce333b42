/*
 * fake_cupti.c — a stand-in for libcupti's activity API, for test_kernel_span.py on a
 * machine without a GPU. It implements the six functions kernel_span.py calls. Time is a
 * counter that advances 100 ns per cuptiGetTimestamp; a flush delivers, through the
 * client's buffer callbacks, one call's worth of records laid out at the offsets of
 * cupti_activity.h: a runtime API record that started 50 ns before the latest timestamp
 * (inside the client's window) launching a memset and a kernel, and an older launch with
 * its kernel (outside it). FAKE_CUPTI_FAIL=enable makes cuptiActivityEnable fail;
 * FAKE_CUPTI_EMPTY=1 makes flushes deliver nothing.
 */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

typedef void (*request_fn)(uint8_t **buffer, size_t *size, size_t *max_records);
typedef void (*complete_fn)(void *ctx, uint32_t stream, uint8_t *buffer, size_t size, size_t valid);

enum { RECORD = 128, SUCCESS = 0, MAX_LIMIT_REACHED = 12, FAILED = 1 };

static request_fn on_request;
static complete_fn on_complete;
static uint64_t clock_ns;

int cuptiActivityRegisterCallbacks(request_fn request, complete_fn complete)
{
    on_request = request;
    on_complete = complete;
    return SUCCESS;
}

int cuptiActivityEnable(int kind)
{
    const char *fail = getenv("FAKE_CUPTI_FAIL");
    (void)kind;
    return fail && strcmp(fail, "enable") == 0 ? FAILED : SUCCESS;
}

int cuptiGetTimestamp(uint64_t *stamp)
{
    clock_ns += 100;
    *stamp = clock_ns;
    return SUCCESS;
}

static void put32(uint8_t *r, size_t at, uint32_t v)
{
    memcpy(r + at, &v, sizeof v);
}
static void put64(uint8_t *r, size_t at, uint64_t v)
{
    memcpy(r + at, &v, sizeof v);
}

/* kind 5 (runtime API): start @8, end @16, correlationId @32. */
static void api(uint8_t *r, uint64_t start, uint32_t corr)
{
    put32(r, 0, 5);
    put64(r, 8, start);
    put64(r, 16, start + 10);
    put32(r, 32, corr);
}

/* kind 10 (kernel): start @16, end @24, correlationId @92; kind 2 (memset): corr @44. */
static void gpu(uint8_t *r, uint32_t kind, uint64_t start, uint64_t end, uint32_t corr)
{
    put32(r, 0, kind);
    put64(r, 16, start);
    put64(r, 24, end);
    put32(r, kind == 10 ? 92 : 44, corr);
}

int cuptiActivityFlushAll(uint32_t flag)
{
    uint8_t *buf = NULL;
    size_t size = 0, max = 0, n = 0;
    (void)flag;
    if (!on_request || !on_complete || getenv("FAKE_CUPTI_EMPTY"))
        return SUCCESS;
    on_request(&buf, &size, &max);
    if (!buf || size < 6 * RECORD)
        return FAILED;
    memset(buf, 0, 6 * RECORD);
    api(buf + RECORD * n++, clock_ns - 50, 7);
    gpu(buf + RECORD * n++, 2, 1000000 + clock_ns, 1000000 + clock_ns + 300, 7);
    gpu(buf + RECORD * n++, 10, 1000000 + clock_ns + 400, 1000000 + clock_ns + 2400, 7);
    api(buf + RECORD * n++, clock_ns - 5000, 6);
    gpu(buf + RECORD * n++, 10, 1, 900000, 6);
    put32(buf + RECORD * n++, 0, 11); /* a kind the client skips */
    on_complete(NULL, 0, buf, size, RECORD * n);
    return SUCCESS;
}

int cuptiActivityGetNextRecord(uint8_t *buffer, size_t valid, uint8_t **record)
{
    uint8_t *next = *record ? *record + RECORD : buffer;
    if (next + RECORD > buffer + valid)
        return MAX_LIMIT_REACHED;
    *record = next;
    return SUCCESS;
}
