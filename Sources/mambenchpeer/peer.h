// The far ends of `mamlaunch bench-broker`'s comparisons, one process each.
#ifndef MAM_BENCH_PEER_H
#define MAM_BENCH_PEER_H

/// Echoes every packet on the SOCK_SEQPACKET socket at descriptor 0 back to its sender, until
/// the other end closes; `answering`: keeps the first packet and sends it back for every later
/// one instead (the broker's answer, so both ends of the bare ping-pong move the bytes the
/// broker's do). Returns the exit status.
int peer_seqpacket_echo(int answering);

/// Joins the bus at `address`, owns org.mamlab.BenchEcho and answers Echo(ay) -> ay with its
/// argument, until the bus goes away. Prints "ready" once the name is owned. Returns the exit status.
int peer_dbus_echo(const char *address);

#endif
