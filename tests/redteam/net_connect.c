/*
 * net_connect.c — red-team candidate: tries to reach the network from inside the
 * sandbox. argv: HOST PORT. Opens a TCP connection to HOST:PORT (the test runs a
 * listener there on the host's loopback) and prints "CONNECTED" on success or
 * "connect failed: REASON" otherwise; then lists the network interfaces it can
 * see. Exit 0 only when the connection succeeded (an escape).
 */
#include <arpa/inet.h>
#include <errno.h>
#include <net/if.h>
#include <netinet/in.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

static void list_interfaces(void)
{
    struct if_nameindex *ifs = if_nameindex();
    printf("interfaces:");
    for (struct if_nameindex *i = ifs; i && i->if_index; i++)
        printf(" %s", i->if_name);
    printf("\n");
    if (ifs)
        if_freenameindex(ifs);
}

int main(int argc, char **argv)
{
    struct sockaddr_in addr;
    if (argc != 3) {
        fprintf(stderr, "usage: net_connect HOST PORT\n");
        return 2;
    }
    memset(&addr, 0, sizeof(addr));
    addr.sin_family = AF_INET;
    addr.sin_port = htons((unsigned short)atoi(argv[2]));
    if (inet_pton(AF_INET, argv[1], &addr.sin_addr) != 1) {
        fprintf(stderr, "bad address %s\n", argv[1]);
        return 2;
    }
    int fd = socket(AF_INET, SOCK_STREAM, 0);
    if (fd < 0) {
        printf("connect failed: socket: %s\n", strerror(errno));
        list_interfaces();
        return 1;
    }
    int rc = connect(fd, (struct sockaddr *)&addr, sizeof(addr));
    if (rc == 0)
        printf("CONNECTED to %s:%s\n", argv[1], argv[2]);
    else
        printf("connect failed: %s\n", strerror(errno));
    close(fd);
    list_interfaces();
    return rc == 0 ? 0 : 1;
}
