#!/usr/bin/env python3
"""JSON goes through one decoding seam and one encoding seam (docs/design.md, "JSON").

Decoding: bytes -> `JSONParser` -> `JSONValue`, read field by field (`JSONObjectReader`, frame
readers) or as a `Decodable` by `JSONValueDecoder`. Encoding: `JSONWriter` writes every byte;
`Encodable` values reach it through `JSONStreamEncoder`, documents through `JSONValue.bytes`.
Foundation's coders appear nowhere in Sources/ but the one bridge from Foundation's object trees,
and a hand-written `JSONWriter()` only where the file says why (a wire format whose bytes are
counted or spliced, or a profiled hot answer).

  scripts/check-json.py
"""
import os, re, sys

os.chdir(os.path.join(os.path.dirname(__file__), ".."))

FOUNDATION = re.compile(r"\b(JSONEncoder|JSONDecoder|JSONSerialization)\s*[.(]")
WRITER = re.compile(r"\bJSONWriter\(\)")
# The files allowed each, with the reason (the file's own comment says it at length).
FOUNDATION_BRIDGES = {
    "Sources/BeckonClient/Support/JSONValue+Foundation.swift": "iOS hands userInfo as Foundation objects",
}
HAND_WRITTEN = {
    "Sources/APNSCore/APNSNotification.swift": "a payload's bytes are counted and truncated to Apple's limit",
    "Sources/BeckonProtocol/SyncServerFrame.swift": "the live path: the stored payload is spliced in raw",
    "Sources/BeckonProtocol/SyncClientFrame.swift": "the sync protocol's frames, the mirror of the server's",
    "Sources/BeckonServer/API/MessageBody.swift": "the answer to every post, 2% of a node's time through Codable",
}

problems = []
for root, _, files in os.walk("Sources"):
    if root.startswith("Sources/BeckonJSON"):
        continue
    for file in files:
        if not file.endswith(".swift"):
            continue
        path = os.path.join(root, file)
        for number, line in enumerate(open(path, encoding="utf-8"), 1):
            code = line.split("//", 1)[0]
            if FOUNDATION.search(code) and path not in FOUNDATION_BRIDGES:
                problems.append(f"{path}:{number}: Foundation's JSON coder; use JSONValueDecoder / JSONStreamEncoder (BeckonJSON)")
            if WRITER.search(code) and path not in HAND_WRITTEN:
                problems.append(f"{path}:{number}: a hand-written JSONWriter; encode an Encodable or a JSONValue, or say why here and in scripts/check-json.py")
for path in list(FOUNDATION_BRIDGES) + list(HAND_WRITTEN):
    if not os.path.exists(path):
        problems.append(f"{path}: allowed in scripts/check-json.py but gone: remove it from the list")
print("\n".join(problems) if problems else
      f"json: one decoding and one encoding seam; {len(HAND_WRITTEN)} hand-written fast paths, {len(FOUNDATION_BRIDGES)} Foundation bridge")
sys.exit(1 if problems else 0)
