#include "peer.h"

#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <systemd/sd-bus.h>

#define ECHO_NAME "org.mamlab.BenchEcho"
#define ECHO_PATH "/org/mamlab/BenchEcho"

// Echo(ay) -> ay: the least work a service can do per call, so the figure is the bus's cost.
static int echo(sd_bus_message *call, void *userdata, sd_bus_error *error) {
    (void)userdata; (void)error;
    const void *bytes = NULL;
    size_t size = 0;
    int r = sd_bus_message_read_array(call, 'y', &bytes, &size);
    if (r < 0) return r;
    sd_bus_message *reply = NULL;
    r = sd_bus_message_new_method_return(call, &reply);
    if (r >= 0) r = sd_bus_message_append_array(reply, 'y', bytes, size);
    if (r >= 0) r = sd_bus_send(NULL, reply, NULL);
    sd_bus_message_unref(reply);
    return r < 0 ? r : 1;
}

static const sd_bus_vtable echo_vtable[] = {
    SD_BUS_VTABLE_START(0),
    SD_BUS_METHOD("Echo", "ay", "ay", echo, SD_BUS_VTABLE_UNPRIVILEGED),
    SD_BUS_VTABLE_END,
};

static int fail(const char *step, int r) {
    fprintf(stderr, "mambenchpeer dbus-echo: %s: %s\n", step, strerror(-r));
    return 1;
}

int peer_dbus_echo(const char *address) {
    sd_bus *bus = NULL;
    int r = sd_bus_new(&bus);
    if (r < 0) return fail("sd_bus_new", r);
    // A private bus at an address we were given, as a client of its dbus-daemon (Hello, names).
    if ((r = sd_bus_set_address(bus, address)) < 0) return fail("address", r);
    if ((r = sd_bus_set_bus_client(bus, 1)) < 0) return fail("bus client", r);
    if ((r = sd_bus_start(bus)) < 0) return fail("connecting to the bus", r);
    if ((r = sd_bus_add_object_vtable(bus, NULL, ECHO_PATH, ECHO_NAME, echo_vtable, NULL)) < 0)
        return fail("adding the object", r);
    if ((r = sd_bus_request_name(bus, ECHO_NAME, 0)) < 0) return fail("owning " ECHO_NAME, r);
    puts("ready");
    fflush(stdout);
    for (;;) {
        r = sd_bus_process(bus, NULL);
        if (r > 0) continue;
        if (r == 0) r = sd_bus_wait(bus, UINT64_MAX);
        if (r < 0) break; // the bus is gone: the bench is over
    }
    sd_bus_flush_close_unref(bus);
    return 0;
}
