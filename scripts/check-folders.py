#!/usr/bin/env python3
"""Folders of a module that lean on each other: a folder that uses a type declared in a folder
which uses one of its own back is a cycle, and a newcomer cannot read either alone.

For each module named on the command line (default: BeckonServer), every top-level type,
protocol and alias is given to the folder that declares it (files directly in the module's
folder are the module's top, which may use anything and which no folder may use). A file uses a
name when the name appears in its code outside comments and string literals. Prints the graph
(`--graph`) and fails on a cycle or a use of the top.

With `--doc FILE` it also holds the graphs FILE shows between `<!-- graph -->` and
`<!-- /graph -->` equal to the code's: the package's modules (from `swift package
dump-package`, this package's targets only, tests and tools left out) and the folders of the
modules named. `--write` puts the code's graphs there instead.
"""
import json
import re
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
DECLARATION = re.compile(
    r"^(?:@\w+(?:\([^)]*\))?\s+)*(?:public |package |internal |fileprivate |private )?(?:final )?"
    r"(?:struct|class|enum|protocol|actor|typealias)\s+([A-Z]\w*)", re.M)
IDENTIFIER = re.compile(r"\b[A-Z]\w*\b")


def code_only(text):
    """The text without comments and string literals (roughly: enough for names)."""
    text = re.sub(r'#?"""[\s\S]*?"""#?', '""', text)
    text = re.sub(r"/\*[\s\S]*?\*/", " ", text)
    text = re.sub(r"//[^\n]*", " ", text)
    return re.sub(r'#?"(?:\\.|[^"\\\n])*"#?', '""', text)


def folder_of(module_dir, path):
    relative = path.relative_to(module_dir)
    return relative.parts[0] if len(relative.parts) > 1 else "."


def graph(module):
    module_dir = ROOT / "Sources" / module
    files = sorted(module_dir.rglob("*.swift"))
    texts = {path: code_only(path.read_text()) for path in files}
    owner = {}
    for path, text in texts.items():
        for name in DECLARATION.findall(text):
            owner.setdefault(name, folder_of(module_dir, path))
    edges = {}
    for path, text in texts.items():
        folder = folder_of(module_dir, path)
        for name in set(IDENTIFIER.findall(text)):
            target = owner.get(name)
            if target and target != folder:
                edges.setdefault((folder, target), set()).add(f"{path.relative_to(module_dir)} uses {name}")
    return edges


def cycles(edges):
    uses = {}
    for source, target in edges:
        uses.setdefault(source, set()).add(target)
    found = []

    def reaches(start, goal, seen):
        for step in uses.get(start, ()):
            if step == goal:
                return True
            if step not in seen:
                seen.add(step)
                if reaches(step, goal, seen):
                    return True
        return False

    for source, target in sorted(edges):
        if source != "." and reaches(target, source, set()):
            found.append((source, target))
    return found


def module_graph():
    """`Module -> its package dependencies`, for the library targets."""
    package = json.loads(subprocess.run(
        ["swift", "package", "dump-package"], cwd=ROOT, check=True, capture_output=True, text=True).stdout)
    names = {t["name"] for t in package["targets"] if t["type"] == "regular"}
    lines = []
    for target in sorted(package["targets"], key=lambda t: t["name"]):
        if target["name"] not in names:
            continue
        uses = sorted({d["byName"][0] for d in target["dependencies"] if "byName" in d and d["byName"][0] in names})
        lines.append(f"{target['name']} -> {', '.join(uses) if uses else '(none)'}")
    return lines


def folder_lines(module, edges):
    """Every folder of the module, one that uses none and is used by none too."""
    module_dir = ROOT / "Sources" / module
    folders = {folder_of(module_dir, path) for path in module_dir.rglob("*.swift")}
    lines = []
    for folder in sorted(folders | {s for s, _ in edges} | {t for _, t in edges}):
        targets = sorted(t for s, t in edges if s == folder)
        name = f"{module} (top)" if folder == "." else f"{module}/{folder}"
        lines.append(f"{name} -> {', '.join(targets) if targets else '(none)'}")
    return lines


def check_doc(path, modules, write):
    text = (ROOT / path).read_text()
    begin, end = "<!-- graph -->", "<!-- /graph -->"
    if begin not in text or end not in text:
        print(f"{path}: no {begin} … {end} block")
        return False
    graph_lines = ["Modules (each -> the package's modules it depends on):", ""] + module_graph()
    for module in modules:
        graph_lines += ["", f"{module}'s folders (each -> the folders it uses):", ""] + folder_lines(module, graph(module))
    block = begin + "\n```\n" + "\n".join(graph_lines) + "\n```\n" + end
    current = text[text.index(begin):text.index(end) + len(end)]
    if current == block:
        return True
    if write:
        (ROOT / path).write_text(text.replace(current, block))
        print(f"{path}: graph written")
        return True
    print(f"{path}: its graph differs from the code's (scripts/check-folders.py --doc {path} --write rewrites it)")
    return False


def main():
    arguments = [a for a in sys.argv[1:] if not a.startswith("--") and not a.endswith(".md")]
    doc = next((a for a in sys.argv[1:] if a.endswith(".md")), None)
    failed = False
    for module in arguments or ["BeckonServer"]:
        edges = graph(module)
        if "--graph" in sys.argv:
            print(f"{module}:")
            for folder in sorted({s for s, _ in edges} | {t for _, t in edges}):
                targets = sorted(t for s, t in edges if s == folder)
                if targets:
                    print(f"  {folder} -> {', '.join(targets)}")
        for (source, target), why in sorted(edges.items()):
            if target == "." and source != ".":
                failed = True
                print(f"{module}: {source}/ uses the module's top: {sorted(why)[:3]}")
        for source, target in cycles(edges):
            failed = True
            print(f"{module}: cycle through {source}/ -> {target}/: {sorted(edges[(source, target)])[:3]}")
    if doc and not check_doc(doc, arguments or ["BeckonServer"], "--write" in sys.argv):
        failed = True
    if failed:
        sys.exit(1)
    print(f"folders: {', '.join(arguments or ['BeckonServer'])} without cycles")


if __name__ == "__main__":
    main()
