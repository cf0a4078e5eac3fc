// The far ends of `mamlaunch bench-broker`'s comparisons, one process each.
#ifndef MAM_BENCH_PEER_H
#define MAM_BENCH_PEER_H

/// Echoes every packet on the SOCK_SEQPACKET socket at descriptor 0 back to its sender, until
/// the other end closes. Returns the exit status.
int peer_seqpacket_echo(void);

/// Joins the bus at `address`, owns org.mamlab.BenchEcho and answers Echo(ay) -> ay with its
/// argument, until the bus goes away. Prints "ready" once the name is owned. Returns the exit status.
int peer_dbus_echo(const char *address);

#endif
