/* Red team: a syntax error. A failed evaluation whose diagnostics carry the
 * compiler's first error, never an aka error. */
#include "aka_native_abi.h"

int aka_kernel(const aka_tensor *in, int n_in, aka_tensor *out, int n_out, const aka_params *p)
{
    return AKA_OK
}
