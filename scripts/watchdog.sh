# The test run's watchdog: runs a command with a deadline and, when the deadline passes, says
# which tests were running and what the processes were, then kills everything the command started.
# Sourced by scripts/test, not run.
#
# Why a watchdog outside the suite: swift-testing's `.timeLimit` cannot interrupt a test blocked
# in a synchronous read, so a hung child hangs the run until CI's own limit ends it with no
# word on where. Why a walk of /proc and not a process group: sandboxed apps run in their own
# sessions and pid namespaces (and as other uids), out of reach of `kill -- -PGID`, but they stay
# descendants of the launcher the suite started.

# Every pid below $1 (not $1 itself), parents before children.
mamlab_descendants() {
    local all children pid
    all="$(ps -e -o pid=,ppid= 2>/dev/null)"
    children=("$1")
    while [ ${#children[@]} -gt 0 ]; do
        local next=()
        for pid in "${children[@]}"; do
            while read -r child; do
                [ -n "$child" ] || continue
                echo "$child"
                next+=("$child")
            done < <(awk -v p="$pid" '$2 == p { print $1 }' <<<"$all")
        done
        children=("${next[@]+"${next[@]}"}")
    done
}

# Stops $1 and all its descendants first (a stopped process neither forks nor leaves orphans that
# go to init), then kills them; walks again until nothing is left, since a process caught between
# fork and the walk is found the next time round.
mamlab_kill_tree() {
    local root="$1" round pids
    for round in 1 2 3 4 5; do
        pids=("$root" $(mamlab_descendants "$root"))
        pids=($(for p in "${pids[@]}"; do [ -d "/proc/$p" ] && echo "$p"; done))
        [ ${#pids[@]} -gt 0 ] || return 0
        kill -STOP "${pids[@]}" 2>/dev/null || true
        kill -KILL "${pids[@]}" 2>/dev/null || true
        sleep 0.2
    done
}

# Tests that the swift-testing console output in $1 shows started and not yet ended, in the
# order they started (swift-testing starts many at once; the first ones still running are the
# likeliest to be stuck), with how many still run when one name runs several times.
mamlab_running_tests() {
    awk '
        # A parameterised test prints a line per case started, and ends as the test.
        /^[^ A-Za-z]+ Test (case passing |run started)/ { next }
        /^[^ A-Za-z]+ Test .* started\.$/ {
            name = $0; sub(/^[^ A-Za-z]+ Test /, "", name); sub(/ started\.$/, "", name)
            if (!(name in seen)) { seen[name] = 1; order[++count] = name }
            running[name]++; next
        }
        /^[^ A-Za-z]+ Test .* ((passed|failed) after|skipped)/ {
            name = $0; sub(/^[^ A-Za-z]+ Test /, "", name); sub(/ ((passed|failed) after|skipped).*$/, "", name)
            sub(/ with [0-9]+ test cases?$/, "", name)
            if (running[name] > 0) running[name]--
        }
        END {
            for (i = 1; i <= count; i++) if (running[order[i]] > 0) still++
            print "  " still + 0 " of " count " started tests had not ended, first started first:"
            for (i = 1; i <= count; i++) {
                n = order[i]
                if (running[n] > 0) print "  " n (running[n] > 1 ? " (x" running[n] ")" : "")
            }
        }
    ' "$1"
}

# Runs "$@" with its output copied to the terminal and to $MAMLAB_WATCHDOG_LOG, for at most
# $MAMLAB_WATCHDOG_SECONDS. Returns the command's status, or 124 when the deadline passed.
mamlab_run_with_deadline() {
    local seconds="$MAMLAB_WATCHDOG_SECONDS" log="$MAMLAB_WATCHDOG_LOG" pid status waited=0
    : >"$log"
    # Its own session, so a terminal's ^C reaches the watchdog's trap rather than racing it.
    setsid "$@" >"$log" 2>&1 &
    pid=$!
    # The trap covers CI cancelling the job: what the suite started goes with it.
    trap 'mamlab_kill_tree '"$pid"'; exit 130' INT TERM
    tail -n +1 -f --pid="$pid" "$log" &
    local tailer=$!
    while kill -0 "$pid" 2>/dev/null && [ "$waited" -lt "$seconds" ]; do
        sleep 1
        waited=$((waited + 1))
    done
    if kill -0 "$pid" 2>/dev/null; then
        {
            echo
            echo "mamlab: the test run passed its deadline of ${seconds}s (MAMLAB_TEST_TIMEOUT); tests still running:"
            mamlab_running_tests "$log"
            echo "mamlab: processes the run started:"
            ps -o pid,ppid,user,stat,etime,wchan:20,args --forest -p "$pid" $(mamlab_descendants "$pid") 2>/dev/null || true
            echo "mamlab: killing them"
        } >&2
        mamlab_kill_tree "$pid"
        wait "$pid" 2>/dev/null || true
        wait "$tailer" 2>/dev/null || true
        trap - INT TERM
        return 124
    fi
    status=0
    wait "$pid" || status=$?
    wait "$tailer" 2>/dev/null || true
    trap - INT TERM
    return "$status"
}
