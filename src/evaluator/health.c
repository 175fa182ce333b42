/*
 * health.c — is a failed evaluation the candidate's or the machine's? (DESIGN §4.7, §7)
 *
 * The probes: a default GPU probe (allocate, compute, synchronize, check the result:
 * through the job runtime's python3 and torch when it has them, else nvidia-smi or
 * rocm-smi answering a query) and a runtime probe that imports the framework's module
 * in that runtime; on the CPU neither exists and only the transport's disk check runs.
 * --sandbox-health-command replaces both. Neither ever imports candidate code.
 *
 * The classification is a pure function of what came back: a job the transport could
 * not run is the environment's; a command that failed is the environment's only when
 * a health probe run right after it fails too (a full disk when the probe failed and
 * the command's stderr says ENOSPC); anything else stays the candidate's. Text a
 * candidate prints never decides on its own: the probe is aka's.
 */
#include "evaluator/evaluator.h"

#include "contracts/records.h"

#include <stdio.h>
#include <string.h>
#include <strings.h>

static struct aka_env_failure last_failure;

static const char *const class_names[] = {"none", "probe", "transport_down", "health_failed",
                                          "disk_full"};

const char *aka_env_class_name(enum aka_env_class c)
{
    return class_names[c];
}

static bool mentions(const char *text, size_t len, const char *needle)
{
    size_t n = strlen(needle);
    for (size_t i = 0; text && i + n <= len; i++)
        if (memcmp(text + i, needle, n) == 0)
            return true;
    return false;
}

enum aka_env_class aka_env_classify(const struct aka_env_evidence *e)
{
    if (!e->ran)
        return AKA_ENV_TRANSPORT;
    if (e->exit_code == 0 && !e->timed_out)
        return AKA_ENV_NONE;
    if (e->probe < 0)
        return AKA_ENV_PROBE;
    if (e->probe > 0)
        return AKA_ENV_NONE; /* the machine answers: the failure was the command's own */
    if (mentions(e->err_text, e->err_len, "No space left on device") ||
        mentions(e->err_text, e->err_len, "ENOSPC"))
        return AKA_ENV_DISK_FULL;
    /* ssh reports its own failures (connection lost, host down) as 255. */
    if (e->transport && strcmp(e->transport, "ssh") == 0 && e->exit_code == 255)
        return AKA_ENV_TRANSPORT;
    return AKA_ENV_HEALTH;
}

/* Allocate, compute, synchronize, check: a device that answers queries but cannot run a
 * kernel fails. AMD's torch keeps the torch.cuda name. */
#define TORCH_PROBE                                                                                \
    "import torch; assert torch.cuda.is_available(), 'no GPU visible'; "                           \
    "x = torch.ones(4, device='cuda'); y = x * x + 1; torch.cuda.synchronize(); "                  \
    "assert y.cpu().tolist() == [2.0] * 4, 'wrong result'; "                                       \
    "p = torch.cuda.get_device_properties(0); print(p.name)"

static const char *runtime_module(const char *framework)
{
    static const char *const map[][2] = {
        {"Triton", "triton"},        {"Gluon", "triton.experimental.gluon"},
        {"CuteDSL", "cutlass.cute"}, {"TileLang", "tilelang"},
        {"FlyDSL", "flydsl"},        {"PyTorch", "torch"}};
    for (size_t i = 0; framework && i < sizeof(map) / sizeof(map[0]); i++)
        if (strcasecmp(framework, map[i][0]) == 0) /* any spelling aka_eval_framework takes */
            return map[i][1];
    return NULL; /* C and Cuda: the native build reports a missing toolchain itself */
}

void aka_eval_health_command(enum aka_vendor vendor, const char *framework, const char *override,
                             struct strbuf *out)
{
    const char *module = runtime_module(framework);
    strbuf_reset(out);
    if (override && *override) {
        strbuf_addstr(out, override);
        return;
    }
    if (vendor == AKA_VENDOR_CPU)
        return;
    strbuf_addf(out,
                "if python3 -c 'import torch' 2>/dev/null; then python3 -c \"" TORCH_PROBE
                "\"; else %s; fi",
                vendor == AKA_VENDOR_NVIDIA ? "nvidia-smi --query-gpu=name --format=csv,noheader"
                : vendor == AKA_VENDOR_AMD  ? "rocm-smi --showproductname"
                                            : "true");
    if (module)
        strbuf_addf(out, " && python3 -c 'import %s'", module);
}

int aka_eval_health(const struct aka_sandbox_transport *t, const char *platform,
                    const char *framework, bool in_agent_sandbox, struct aka_sandbox_health *h,
                    struct aka_err *err)
{
    struct aka_platform plat;
    struct strbuf cmd = STRBUF_INIT;
    if (aka_platform_parse(platform, NULL, &plat, err) < 0)
        return -1;
    aka_eval_health_command(plat.vendor, framework, t->health_command, &cmd);
    struct aka_sandbox_probe p = {cmd.buf, plat.vendor == AKA_VENDOR_CPU ? 0 : 1, plat.vendor,
                                  in_agent_sandbox};
    aka_sandbox_probe_health(t, &p, h);
    int rc = 0;
    if (!h->ok) {
        aka_env_note_failure(AKA_ENV_HEALTH, cmd.len ? cmd.buf : "(disk check)", h->output);
        rc = aka_err_set(err, AKA_EXIT_ENV,
                         "environment: health_failed: the health probe failed (exit %d): %s",
                         h->exit_code, h->output);
    }
    strbuf_release(&cmd);
    return rc;
}

void aka_env_note_failure(enum aka_env_class c, const char *command, const char *probe_output)
{
    memset(&last_failure, 0, sizeof(last_failure));
    last_failure.set = true;
    last_failure.cls = c;
    snprintf(last_failure.command, sizeof(last_failure.command), "%s", command ? command : "");
    snprintf(last_failure.probe_output, sizeof(last_failure.probe_output), "%s",
             probe_output ? probe_output : "");
    aka_record_now(last_failure.detected_at);
}

const struct aka_env_failure *aka_env_last_failure(void)
{
    return last_failure.set ? &last_failure : NULL;
}
