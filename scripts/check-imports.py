#!/usr/bin/env python3
"""Every target imports only the package's targets it depends on (issue 37).

SwiftPM on Linux builds a target that imports an undeclared sibling whenever the sibling happens
to be built first; an Xcode app that links one product gets only the targets that product
declares (and what those depend on), and fails. This reads `swift package dump-package` and each
target's sources, and lists every `import X` of a package target X that the importing target does
not depend on, directly or through its dependencies. The check of
`swift build --explicit-target-dependency-import-check error`, without a second full build.

  scripts/check-imports.py
"""
import json, os, re, subprocess, sys

os.chdir(os.path.join(os.path.dirname(__file__), ".."))
package = json.loads(subprocess.run(["swift", "package", "dump-package"], check=True, capture_output=True, text=True).stdout)
targets = {t["name"]: t for t in package["targets"]}
IMPORT = re.compile(r"^\s*(?:@\w+(?:\([^)]*\))?\s+)*import\s+(?:(?:struct|class|enum|protocol|func|var|let|typealias)\s+)?(\w+)", re.M)


def direct(name):
    deps = targets[name]["dependencies"]
    return {d["byName"][0] for d in deps if "byName" in d} | {d["target"][0] for d in deps if "target" in d}


def closure(name):
    seen, todo = set(), [name]
    while todo:
        for dep in direct(todo.pop()):
            if dep in targets and dep not in seen:
                seen.add(dep)
                todo.append(dep)
    return seen


problems = []
for name, target in targets.items():
    declared = closure(name)
    folder = target.get("path") or os.path.join("Tests" if target["type"] == "test" else "Sources", name)
    for root, _, files in os.walk(folder):
        for file in files:
            if not file.endswith(".swift"):
                continue
            path = os.path.join(root, file)
            for module in IMPORT.findall(open(path, encoding="utf-8").read()):
                if module in targets and module != name and module not in declared:
                    problems.append(f"{path}: imports {module}, which target {name} does not depend on (Package.swift)")
print("\n".join(problems) if problems else f"imports: {len(targets)} targets, each imports only package targets it depends on")
sys.exit(1 if problems else 0)
