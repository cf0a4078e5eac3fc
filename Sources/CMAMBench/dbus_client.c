#include "mam_bench.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <systemd/sd-bus.h>

struct mam_bench_dbus { sd_bus *bus; };

static void explain(char *why, size_t size, const char *step, int r, const sd_bus_error *error) {
    if (error && sd_bus_error_is_set(error))
        snprintf(why, size, "%s: %s", step, error->message ? error->message : error->name);
    else
        snprintf(why, size, "%s: %s", step, strerror(r < 0 ? -r : r));
}

mam_bench_dbus *mam_bench_dbus_open(const char *address, char *why, size_t why_size) {
    sd_bus *bus = NULL;
    int r = sd_bus_new(&bus);
    if (r >= 0) r = sd_bus_set_address(bus, address);
    if (r >= 0) r = sd_bus_set_bus_client(bus, 1);
    if (r >= 0) r = sd_bus_start(bus);
    if (r < 0) {
        explain(why, why_size, "connecting to the bus", r, NULL);
        sd_bus_unref(bus);
        return NULL;
    }
    mam_bench_dbus *client = malloc(sizeof *client);
    if (!client) { sd_bus_unref(bus); snprintf(why, why_size, "out of memory"); return NULL; }
    client->bus = bus;
    return client;
}

int mam_bench_dbus_echo(mam_bench_dbus *client, const uint8_t *bytes, size_t size, char *why, size_t why_size) {
    // Built and sent the way any sd-bus client calls a portal: a new message each call.
    sd_bus_message *call = NULL, *reply = NULL;
    sd_bus_error error = SD_BUS_ERROR_NULL;
    const void *echoed = NULL;
    size_t echoed_size = 0;
    int r = sd_bus_message_new_method_call(client->bus, &call, "org.mamlab.BenchEcho",
                                           "/org/mamlab/BenchEcho", "org.mamlab.BenchEcho", "Echo");
    if (r >= 0) r = sd_bus_message_append_array(call, 'y', bytes, size);
    if (r >= 0) r = sd_bus_call(client->bus, call, 0, &error, &reply);
    if (r >= 0) r = sd_bus_message_read_array(reply, 'y', &echoed, &echoed_size);
    if (r < 0) explain(why, why_size, "Echo", r, &error);
    else if (echoed_size != size) {
        snprintf(why, why_size, "Echo: sent %zu bytes, %zu came back", size, echoed_size);
        r = -1;
    }
    sd_bus_error_free(&error);
    sd_bus_message_unref(reply);
    sd_bus_message_unref(call);
    return r < 0 ? -1 : 0;
}

void mam_bench_dbus_close(mam_bench_dbus *client) {
    if (!client) return;
    sd_bus_flush_close_unref(client->bus);
    free(client);
}
