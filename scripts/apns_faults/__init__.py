"""The APNs fault soak's parts (scripts/apns-fault-soak.py runs it):

    phases   the faults injected, one phase each and combined
    figures  the outbox joined to what the emulator accepted, the memory plateau, the table
"""
