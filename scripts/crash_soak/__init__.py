"""The crash soak's parts (scripts/crash-soak.py runs it):

    load    writers and synced devices, and the ledger of what was acknowledged
"""
