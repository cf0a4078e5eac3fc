// The smallest app a launch benchmark can time: it sends one byte on the broker connection
// (descriptor 3) and exits, so the sandbox's own cost is not hidden behind a runtime's start-up.
#include <sys/socket.h>
#include <unistd.h>

int main(void) {
    char byte = 0;
    return send(3, &byte, 1, MSG_NOSIGNAL) == 1 ? 0 : 1;
}
