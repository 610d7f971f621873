"""What processes use and what the machine is doing, from /proc (Linux): memory, CPU time,
descriptors, the load average, and connections the kernel dropped at a full accept queue."""
import os, time


def memory_kib(pid, field="VmRSS"):
    """One field of /proc/PID/status in KiB (None if the process is gone). `RssAnon` leaves out
    file pages (SQLite's memory-mapped database among them)."""
    try:
        with open(f"/proc/{pid}/status") as status:
            for line in status:
                if line.startswith(field + ":"):
                    return int(line.split()[1])
    except (OSError, ValueError, IndexError):
        pass
    return None


def rss_kib(pids, field="VmRSS"):
    """Resident memory of these processes together, KiB; missing ones count 0."""
    return sum(memory_kib(pid, field) or 0 for pid in pids)


def descriptors(pid):
    try:
        return len(os.listdir(f"/proc/{pid}/fd"))
    except OSError:
        return None


def listen_drops():
    """TcpExt ListenOverflows of this machine (/proc/net/netstat): connections the kernel dropped
    because a listener's accept queue (its backlog) was full."""
    try:
        with open("/proc/net/netstat") as netstat:
            lines = [line.split() for line in netstat if line.startswith("TcpExt:")]
        return int(dict(zip(lines[0][1:], lines[1][1:]))["ListenOverflows"])
    except (OSError, KeyError, IndexError, ValueError):
        return 0


def wait_for_quiet(max_load, patience, log=print):
    """Waits until the 1-minute load average is below `max_load` (other work on the machine
    would skew a measurement), at most `patience` seconds. Returns the load measured at."""
    started, said = time.time(), False
    while True:
        load = os.getloadavg()[0]
        if load < max_load:
            return load
        if time.time() - started > patience:
            log(f"load average still {load:.2f} after {patience:.0f} s; measuring anyway (noted)")
            return load
        if not said:
            log(f"waiting for the 1-minute load average to fall below {max_load} (now {load:.2f})")
            said = True
        time.sleep(5)


# CPU time by process group: where a benchmark's time goes.

def cpu_seconds(pid):
    try:
        with open(f"/proc/{pid}/stat") as stat:
            fields = stat.read().rsplit(")", 1)[1].split()
        return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")
    except (OSError, IndexError, ValueError):
        return None


def parent(pid):
    with open(f"/proc/{pid}/stat") as stat:
        return int(stat.read().rsplit(")", 1)[1].split()[1])


def children(pid):
    """The direct children of a process."""
    found = []
    for entry in os.listdir("/proc"):
        if entry.isdigit():
            try:
                if parent(int(entry)) == pid:
                    found.append(int(entry))
            except (OSError, ValueError, IndexError):
                pass
    return found


def cpu_snapshot(groups):
    """{(group, pid): CPU seconds} for {group: [pid]}."""
    return {(group, pid): cpu_seconds(pid) for group, pids in groups.items() for pid in pids}


def cpu_delta(before, after):
    """CPU seconds by group between two snapshots; processes born in between count from zero
    (a process that ended in between is missed)."""
    used = {}
    for (group, pid), value in after.items():
        if value is not None:
            used[group] = used.get(group, 0) + value - (before.get((group, pid)) or 0)
    return used
