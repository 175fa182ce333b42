/* main.c — the aka binary: everything happens in core (see core/core.h). */
#include "core/core.h"

int main(int argc, char **argv)
{
    return aka_main(argc, argv);
}
