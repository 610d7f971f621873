"""API fuzzing with schemathesis against openapi.yaml (scripts/fuzz-api.py runs it):

    world   what the run knows of the server's state, and the credential each case goes with
    checks  the checks added to schemathesis's own, and the hooks that feed them
"""
