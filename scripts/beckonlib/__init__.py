"""What the Python scripts in scripts/ share, one module for each kind of thing:

    node        `beckon serve` on loopback (Node), and a standalone APNs emulator with nodes on
                one database (Deployment); a node's log read for errors and crashes
    httpjson    JSON over HTTP, a free loopback port, the user token a backend signs, waiting
    asynchttp   HTTP/1.1 and sync sessions over asyncio, for thousands of connections at once
    websocket   WebSocket frames; a sync session as an app holds one, and a raw one that may
                break any rule and checks every frame the server sends
    emulator    the APNs emulator's control API: what a device received, faults, counters
    metrics     /metrics (Prometheus text) as numbers
    report      checks and their summary; figures (percentiles, spreads, counts)
    measure     memory and CPU of processes, the machine's load and listen-queue drops
    postgres    psql, and what the database did (its counters) and which processes are its
    overload    the overload cases' common ground: their node, scales, rows and run
    xmpp        an XMPP client and external component, and Prosody (scripts/prosody.sh)
    chromium    one page in headless Chromium over the DevTools protocol (also a command)

A script in scripts/ imports them as `from beckonlib.httpjson import request` (its own directory is
the first entry of sys.path). Everything stays on loopback.
"""
