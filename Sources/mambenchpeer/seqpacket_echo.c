#include "peer.h"

#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <sys/socket.h>

int peer_seqpacket_echo(void) {
    // As large as the broker's largest frame, so no packet the bench sends is cut.
    static unsigned char buffer[64 * 1024 + 1];
    for (;;) {
        ssize_t n = recv(0, buffer, sizeof buffer, 0);
        if (n == 0) return 0;
        if (n < 0) {
            if (errno == EINTR) continue;
            perror("mambenchpeer: recv");
            return 1;
        }
        if (send(0, buffer, (size_t)n, MSG_NOSIGNAL) != n) {
            if (errno == EPIPE || errno == ECONNRESET) return 0;
            perror("mambenchpeer: send");
            return 1;
        }
    }
}
