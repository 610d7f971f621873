"""PostgreSQL through psql: statements, a database's URL, what the database did (its counters,
for the benchmarks' per-message figures) and which processes are the server's."""
import subprocess, urllib.parse

from beckonlib.measure import children, parent


def psql(url, sql):
    """One statement through psql; its output, unaligned and tuples only."""
    return subprocess.run(["psql", url, "-Atq", "-v", "ON_ERROR_STOP=1", "-c", sql], check=True,
                          capture_output=True, text=True).stdout.strip()


def with_database(url, name):
    """`url` with its database replaced by `name`."""
    return urllib.parse.urlunparse(urllib.parse.urlparse(url)._replace(path="/" + name))


def pg_counters(url):
    """What the database did so far (cumulative): its transactions and rows from
    pg_stat_database, rows by table from pg_stat_user_tables, and the cluster's WAL from
    pg_stat_wal (the bench cluster serves nothing else). Take it after the nodes stopped:
    a backend reports its counts when it goes idle for a while or exits."""
    counters = {}
    database = psql(url, "SELECT xact_commit, xact_rollback, tup_inserted, tup_updated, tup_deleted "
                         "FROM pg_stat_database WHERE datname = current_database()").split("|")
    for name, value in zip(("commits", "rollbacks", "inserted", "updated", "deleted"), database):
        counters[name] = int(value)
    wal = psql(url, "SELECT wal_records, wal_bytes, wal_sync FROM pg_stat_wal").split("|")
    for name, value in zip(("wal_records", "wal_bytes", "wal_syncs"), wal):
        counters[name] = int(value)
    for line in psql(url, "SELECT relname, n_tup_ins, n_tup_upd, n_tup_del FROM pg_stat_user_tables").splitlines():
        table, inserted, updated, deleted = line.split("|")
        counters[f"table:{table}"] = (int(inserted), int(updated), int(deleted))
    return counters


def pg_work(before, after, per, unit, units=None):
    """Lines saying what the database did between two `pg_counters`, per `per` units."""
    if not per:
        return []
    def delta(name):
        return after.get(name, 0) - before.get(name, 0)
    lines = [f"database work per {unit} ({per} {units or unit + 's'}): "
             f"{delta('commits') / per:.2f} commits (read-only ones too), {delta('rollbacks') / per:.3f} rollbacks, "
             f"rows {delta('inserted') / per:.2f} inserted, {delta('updated') / per:.2f} updated, "
             f"{delta('deleted') / per:.2f} deleted; WAL {delta('wal_records') / per:.1f} records, "
             f"{delta('wal_bytes') / per:,.0f} bytes, {delta('wal_syncs') / per:.3f} fsyncs"]
    tables = []
    for key in sorted(k for k in after if k.startswith("table:")):
        was = before.get(key, (0, 0, 0))
        changes = [a - b for a, b in zip(after[key], was)]
        if any(changes):
            tables.append(f"{key[6:]} +{changes[0] / per:.2f}/~{changes[1] / per:.2f}/-{changes[2] / per:.2f}")
    if tables:
        lines.append(f"rows by table per {unit} (inserted/updated/deleted): " + ", ".join(tables))
    return lines


def postgres_pids(url):
    """The PostgreSQL server's processes: the postmaster (the checkpointer's parent) and its children."""
    try:
        postmaster = parent(int(psql(url, "SELECT pid FROM pg_stat_activity WHERE backend_type = 'checkpointer'")))
    except (OSError, ValueError):
        return []
    return [postmaster] + children(postmaster)
