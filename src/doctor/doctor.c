/*
 * doctor.c — `aka doctor`'s entry point: this host's checks, then the chosen
 * transport's (only ssh has a remote side today).
 */
#include "doctor/doctor.h"

#include <string.h>

void aka_doctor_run(const struct aka_doctor_opts *o, struct aka_doctor_report *r)
{
    memset(r, 0, sizeof(*r));
    aka_doctor_host_checks(o, r);
    if (o->transport->kind == AKA_TRANSPORT_SSH)
        aka_doctor_ssh_checks(o, r);
    else if (o->transport->kind != AKA_TRANSPORT_LOCAL)
        aka_doctor_add(r, "transport", AKA_DOCTOR_FAIL, "run with --sandbox local or --sandbox ssh",
                       "--sandbox %s is not built yet (issue 13)",
                       aka_transport_kind_name(o->transport->kind));
}
