#include "peer.h"

#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <sys/socket.h>

// As large as the broker's largest frame, so no packet the bench sends is cut.
static unsigned char buffer[64 * 1024 + 1];
static unsigned char answer[64 * 1024 + 1];

int peer_seqpacket_echo(int answering) {
    ssize_t answerLength = -1;
    for (;;) {
        ssize_t n = recv(0, buffer, sizeof buffer, 0);
        if (n == 0) return 0;
        if (n < 0) {
            if (errno == EINTR) continue;
            perror("mambenchpeer: recv");
            return 1;
        }
        const unsigned char *reply = buffer;
        ssize_t length = n;
        if (answering) {
            // The first packet is the answer to every later one, and is not itself answered.
            if (answerLength < 0) {
                memcpy(answer, buffer, (size_t)n);
                answerLength = n;
                continue;
            }
            reply = answer;
            length = answerLength;
        }
        if (send(0, reply, (size_t)length, MSG_NOSIGNAL) != length) {
            if (errno == EPIPE || errno == ECONNRESET) return 0;
            perror("mambenchpeer: send");
            return 1;
        }
    }
}
