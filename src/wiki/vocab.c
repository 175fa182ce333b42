/*
 * vocab.c — the wiki's closed vocabularies (vendor, arch, chip, framework,
 * operator family, kind), their aliases, and spelling folding.
 *
 * Why closed: a filter value that matches nothing because of a typo must be an
 * error with a suggestion, not a silently empty result, and a record scoped to
 * an arch the tools do not know could never be found by a filter. The same
 * tables validate records (record.c) and resolve user filters (query.c).
 */
#include "wiki/wiki_impl.h"

#include <ctype.h>
#include <stdlib.h>
#include <string.h>

/* One vocabulary entry: canonical value, its parent (arch -> vendor, chip ->
 * arch), folded aliases separated by spaces, and extra search words. */
struct vocab_entry {
    const char *name;
    const char *parent;
    const char *aliases;
    const char *words;
};

static const struct vocab_entry vendors[] = {
    {"nvidia", NULL, "nv nvda", "nvidia cuda"},
    {"amd", NULL, "rocm hip instinct", "amd rocm hip"},
    {"cpu", NULL, "x86 x8664 host", "cpu host x86"},
    {"generic", NULL, "any all neutral", "generic"},
    {NULL, NULL, NULL, NULL},
};

static const struct vocab_entry archs[] = {
    {"ampere", "nvidia", "sm80 sm86 sm87 80 86 ga100", "ampere sm80 a100"},
    {"ada", "nvidia", "lovelace adalovelace sm89 89 ad102", "ada lovelace sm89 l20 l40s"},
    {"hopper", "nvidia", "sm90 sm90a 90 gh100", "hopper sm90 sm90a h100 h200"},
    {"blackwell", "nvidia", "sm100 sm100a 100 gb100", "blackwell sm100 sm100a b200"},
    {"blackwell-ultra", "nvidia", "sm103 sm103a 103", "blackwell ultra sm103 b300"},
    {"blackwell-geforce", "nvidia", "sm120 sm120a 120", "blackwell geforce sm120"},
    {"cdna2", "amd", "gfx90a", "cdna2 gfx90a mi250x"},
    {"cdna3", "amd", "gfx942 gfx940 gfx941", "cdna3 gfx942 mi300x mi308x"},
    {"cdna4", "amd", "gfx950", "cdna4 gfx950 mi355x"},
    {"rdna3", "amd", "gfx1100 gfx1101 gfx1102", "rdna3 gfx1100"},
    {"rdna4", "amd", "gfx1200 gfx1201", "rdna4 gfx1201"},
    {"x86-64", "cpu", "x86 x64 amd64 x8664", "x86 x64 cpu"},
    {"any", NULL, "generic all", ""},
    {NULL, NULL, NULL, NULL},
};

static const struct vocab_entry chips[] = {
    {"a100", "ampere", "a100sxm a100sxm4 a100sxm480gb a10080gb", "a100 sxm4"},
    {"h100", "hopper", "h100sxm h100sxm5 h10080gb", "h100 sxm5"},
    {"h200", "hopper", "h200sxm h200141gb", "h200 sxm"},
    {"h20", "hopper", "", "h20"},
    {"h800", "hopper", "", "h800"},
    {"b200", "blackwell", "hgxb200 dgxb200", "b200"},
    {"gb200", "blackwell", "", "gb200"},
    {"b300", "blackwell-ultra", "", "b300"},
    {"l20", "ada", "", "l20"},
    {"l40s", "ada", "", "l40s"},
    {"l40", "ada", "", "l40"},
    {"l4", "ada", "", "l4"},
    {"mi250x", "cdna2", "", "mi250x"},
    {"mi300x", "cdna3", "", "mi300x"},
    {"mi300a", "cdna3", "", "mi300a"},
    {"mi308x", "cdna3", "", "mi308x"},
    {"mi325x", "cdna3", "", "mi325x"},
    {"mi355x", "cdna4", "", "mi355x"},
    {"x86-cpu", "x86-64", "x86cpu genericx86 cpu genericcpu", "x86 cpu"},
    {"any", NULL, "generic all", ""},
    {NULL, NULL, NULL, NULL},
};

/* The frameworks of DESIGN §4.1, folded: "cute-dsl", "cute_dsl", "CuteDSL" all
 * fold to "cutedsl"; the aliases catch the remaining spellings. */
static const struct vocab_entry frameworks[] = {
    {"triton", NULL, "tritonlang openaitriton", "triton"},
    {"gluon", NULL, "tritongluon", "gluon triton"},
    {"cutedsl", NULL, "cute cutepython cutlassdsl cutlasspython cutedslpython", "cutedsl cute"},
    {"cuda", NULL, "cudac cudacpp cudacxx cu", "cuda"},
    {"tilelang", NULL, "tl", "tilelang"},
    {"flydsl", NULL, "fly", "flydsl"},
    {"c", NULL, "plainc nativec clang gcc", "c"},
    {"any", NULL, "all generic none", ""},
    {NULL, NULL, NULL, NULL},
};

static const struct vocab_entry families[] = {
    {"elementwise", NULL, "eltwise pointwise activation activations", "elementwise pointwise"},
    {"reduction", NULL, "reduce reductions sum", "reduction reduce"},
    {"norm", NULL, "norms normalization normalisation rmsnorm layernorm groupnorm rmsnormalization",
     "norm rmsnorm layernorm"},
    {"softmax", NULL, "onlinesoftmax logsoftmax", "softmax"},
    {"gemm", NULL, "matmul mm bmm linear gemv matrixmultiply", "gemm matmul"},
    {"attention", NULL, "attn flashattention fa mha gqa mla sdpa fmha", "attention"},
    {"moe", NULL, "mixtureofexperts experts routing moerouting topk", "moe experts routing"},
    {"quantization", NULL, "quant quantize quantisation dequant dequantization fp8 int4 int8",
     "quantization quant dequant"},
    {"rope", NULL, "rotary rotaryembedding rotarypositionembedding", "rope rotary"},
    {"any", NULL, "all generic", ""},
    {NULL, NULL, NULL, NULL},
};

static const struct vocab_entry kinds[] = {
    {"fact", NULL, "facts spec specs hardware", ""},
    {"technique", NULL, "techniques strategy strategies tip tips howto", ""},
    {"pitfall", NULL, "pitfalls antistrategy antipattern mistake mistakes gotcha", ""},
    {"reference", NULL, "references doc docs documentation", ""},
    {NULL, NULL, NULL, NULL},
};

static const struct vocab_entry *table(enum wiki_axis ax)
{
    static const struct vocab_entry *const tables[AX_COUNT] = {vendors,    archs,    chips,
                                                               frameworks, families, kinds};
    return tables[ax];
}

const char *wiki_axis_flag(enum wiki_axis ax)
{
    static const char *const flags[AX_COUNT] = {"--vendor",    "--arch",   "--chip",
                                                "--framework", "--family", "--kind"};
    return flags[ax];
}

const char *wiki_axis_field(enum wiki_axis ax)
{
    return wiki_axis_flag(ax) + 2;
}

void wiki_fold(const char *in, struct strbuf *out)
{
    strbuf_reset(out);
    for (const unsigned char *p = (const unsigned char *)in; *p; p++)
        if (isalnum(*p) && *p < 0x80)
            strbuf_addch(out, tolower(*p));
}

/* Does the space-separated word list contain word? */
static bool has_word(const char *list, const char *word)
{
    size_t n = strlen(word);
    for (const char *p = list; p && *p;) {
        const char *sp = strchr(p, ' ');
        size_t len = sp ? (size_t)(sp - p) : strlen(p);
        if (len == n && n && memcmp(p, word, n) == 0)
            return true;
        p = sp ? sp + 1 : NULL;
    }
    return false;
}

/* Vendor words in product names ("NVIDIA H200", "AMD Instinct MI300X GPU"). */
static const char *strip_product_noise(const char *folded)
{
    static const char *const prefixes[] = {"nvidia", "amd", "instinct", "tesla", NULL};
    for (int again = 1; again;) {
        again = 0;
        for (int i = 0; prefixes[i]; i++) {
            size_t n = strlen(prefixes[i]);
            if (strncmp(folded, prefixes[i], n) == 0 && folded[n]) {
                folded += n;
                again = 1;
            }
        }
    }
    return folded;
}

static const struct vocab_entry *lookup(enum wiki_axis ax, const char *folded)
{
    for (const struct vocab_entry *e = table(ax); e->name; e++) {
        struct strbuf f = STRBUF_INIT;
        wiki_fold(e->name, &f);
        bool hit = strcmp(f.buf, folded) == 0 || has_word(e->aliases, folded);
        strbuf_release(&f);
        if (hit)
            return e;
    }
    return NULL;
}

static const struct vocab_entry *resolve(enum wiki_axis ax, const char *value)
{
    struct strbuf f = STRBUF_INIT;
    wiki_fold(value, &f);
    const struct vocab_entry *e = lookup(ax, f.buf);
    if (!e && (ax == AX_CHIP || ax == AX_ARCH)) {
        const char *core = strip_product_noise(f.buf);
        size_t n = strlen(core);
        /* "H200 GPU", "MI300X accelerator" */
        struct strbuf c = STRBUF_INIT;
        strbuf_addstr(&c, core);
        if (n > 3 && strcmp(core + n - 3, "gpu") == 0)
            strbuf_setlen(&c, n - 3);
        e = lookup(AX_CHIP, c.buf);
        if (e && ax == AX_ARCH) /* a product names its architecture */
            e = e->parent ? lookup(AX_ARCH, e->parent) : NULL;
        strbuf_release(&c);
    }
    strbuf_release(&f);
    return e;
}

const char *wiki_canon(enum wiki_axis ax, const char *value)
{
    const struct vocab_entry *e = value ? resolve(ax, value) : NULL;
    return e ? e->name : NULL;
}

bool wiki_is_canon(enum wiki_axis ax, const char *value)
{
    for (const struct vocab_entry *e = table(ax); e->name; e++)
        if (strcmp(e->name, value) == 0)
            return true;
    return false;
}

size_t wiki_edit_distance(const char *a, const char *b)
{
    size_t la = strlen(a), lb = strlen(b);
    size_t *row = aka_xcalloc(lb + 1, sizeof(size_t));
    for (size_t j = 0; j <= lb; j++)
        row[j] = j;
    for (size_t i = 1; i <= la; i++) {
        size_t diag = row[0];
        row[0] = i;
        for (size_t j = 1; j <= lb; j++) {
            size_t up = row[j];
            size_t best = diag + (a[i - 1] != b[j - 1]);
            if (up + 1 < best)
                best = up + 1;
            if (row[j - 1] + 1 < best)
                best = row[j - 1] + 1;
            row[j] = best;
            diag = up;
        }
    }
    size_t d = row[lb];
    free(row);
    return d;
}

/* Smallest distance from folded to the entry's name or one of its aliases. */
static size_t entry_distance(const struct vocab_entry *e, const char *folded)
{
    struct strbuf f = STRBUF_INIT;
    wiki_fold(e->name, &f);
    size_t best = wiki_edit_distance(folded, f.buf);
    for (const char *p = e->aliases; p && *p;) {
        const char *sp = strchr(p, ' ');
        size_t len = sp ? (size_t)(sp - p) : strlen(p);
        char *alias = aka_xstrndup(p, len);
        size_t d = wiki_edit_distance(folded, alias);
        free(alias);
        if (d < best)
            best = d;
        p = sp ? sp + 1 : NULL;
    }
    strbuf_release(&f);
    return best;
}

const char *wiki_suggest(enum wiki_axis ax, const char *value)
{
    struct strbuf f = STRBUF_INIT;
    wiki_fold(value, &f);
    const char *best = NULL;
    size_t best_d = (size_t)-1;
    for (const struct vocab_entry *e = table(ax); e->name; e++) {
        size_t d = entry_distance(e, f.buf);
        if (d < best_d) {
            best_d = d;
            best = e->name;
        }
    }
    strbuf_release(&f);
    return best;
}

void wiki_axis_list(enum wiki_axis ax, struct strbuf *out)
{
    for (const struct vocab_entry *e = table(ax); e->name; e++)
        strbuf_addf(out, "%s%s", e == table(ax) ? "" : ", ", e->name);
}

static const char *parent_of(enum wiki_axis ax, const char *name)
{
    for (const struct vocab_entry *e = table(ax); e->name; e++)
        if (strcmp(e->name, name) == 0)
            return e->parent;
    return NULL;
}

const char *wiki_arch_vendor(const char *arch)
{
    return parent_of(AX_ARCH, arch);
}

const char *wiki_chip_arch(const char *chip)
{
    return parent_of(AX_CHIP, chip);
}

const char *wiki_scope_words(enum wiki_axis ax, const char *value)
{
    for (const struct vocab_entry *e = table(ax); e->name; e++)
        if (strcmp(e->name, value) == 0)
            return e->words;
    return "";
}

/* Which frameworks a vendor's records may be scoped to (DESIGN §4.1 plus Gluon
 * on AMD, which Triton's Gluon supports). "generic" records may name any. */
bool wiki_framework_fits(const char *vendor, const char *framework)
{
    static const char *const allowed[][2] = {
        {"nvidia", "triton gluon cutedsl cuda tilelang any"},
        {"amd", "triton gluon flydsl tilelang any"},
        {"cpu", "c any"},
    };
    for (size_t i = 0; i < sizeof(allowed) / sizeof(allowed[0]); i++)
        if (strcmp(vendor, allowed[i][0]) == 0)
            return has_word(allowed[i][1], framework);
    return true;
}
