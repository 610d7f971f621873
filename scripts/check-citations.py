#!/usr/bin/env python3
"""Checks that every citation in the code points at something in docs/.

Source comments say why, briefly, and cite where the reason is written down:

  "rule 4", "rules 3 and 4", "design rule 9"  -> a "### Rule N" heading in docs/design.md
  "apns.md E.3", "apns.md B", "apns.md C.1, G.6", "apns.md A.5–A.7"
                                              -> a "## B." / "### E.3" heading in docs/apns.md
  'apns.md, "410 race"', 'design.md, "Delivery strategies"'
                                              -> that text somewhere in the document
  "seed 003", "seeds 000, 003"                -> a "## Seed 003" heading in docs/seeds.md

Documents outside the repository may not be cited: "DESIGN.md" (upper case) and paths under
"reference/" are reported as errors; cite docs/design.md, docs/apns.md or docs/seeds.md instead.
--allow-design-md tolerates them for now (listed, but not counted as unresolved).

Prints every unresolved citation as path:line, then one summary line, and exits 1 if any
citation is unresolved. Standard library only.

Usage: scripts/check-citations.py [--allow-design-md] [--list] [PATH ...]   (default: Sources Tests)
"""

import argparse
import os
import re
import sys

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
DOCS = os.path.join(ROOT, "docs")
DEFAULT_PATHS = ["Sources", "Tests"]
TEXT_SUFFIXES = (".swift", ".md", ".py", ".sh", ".yaml", ".yml", ".json", ".c", ".h", ".txt")

# A comment marker at the start of a continuation line, so a citation wrapped across two comment
# lines ("... (design\n/// rule 9)") is still read as one.
CONTINUATION_PREFIX = re.compile(r"^\s*(?:///?|#|\*|--)?\s?")

# "rule 4", "Rules 3 and 4", "design rule 10", "rule 4's", "rules 3, 4 and 5", "rules 3–5".
# Not part of a longer word ("FaultRule", "rules[0]"), and a number must follow.
RULE = re.compile(
    r"(?<![\w-])(?:design\s+)?rules?\s+(\d+)((?:\s*(?:,|\band\b|\bor\b|&|/|–|-)\s*\d+)*)(?![\w.]*\d)",
    re.IGNORECASE,
)
# "seed 003", "seeds 000, 003, 004".
SEED = re.compile(
    r"(?<![\w-])seeds?\s+(\d{3})((?:\s*(?:,|\band\b|&|/|–|-)\s*\d{3})*)(?!\d)",
    re.IGNORECASE,
)
# Any mention of apns.md, with the path in front of it if there is one.
APNS_MD = re.compile(r"(?<![\w.-])((?:[\w.-]+/)*)apns\.md\b")
# A section: a capital letter, optionally .N ("E", "E.3"), not followed by more of a word.
SECTION = re.compile(r"([A-Z])(?:\.(\d+))?(?![\w])")
# Between two sections of one citation: "tip" or "row 12e" may qualify the previous one.
QUALIFIER = re.compile(r"\s+(?:tip|row\s+\w+)")
SEPARATOR = re.compile(r"\s*(?:,|–|—|-|\band\b|&)\s*")
QUOTED = re.compile(r",?\s+\"([^\"]+)\"")
# design.md (lower case, ours) with a quoted section name.
DESIGN_QUOTED = re.compile(r"(?<![\w.-])((?:[\w.-]+/)*)design\.md,?\s+\"([^\"]+)\"")
# The old external documents.
DESIGN_UPPER = re.compile(r"(?<![\w.-])DESIGN\.md\b")
EXTERNAL_REFERENCE = re.compile(r"(?<![\w.-])reference/(?:[\w.-]+/)*[\w.-]*")


def read(path):
    with open(path, encoding="utf-8") as handle:
        return handle.read()


def load_docs():
    """The citable targets: rule numbers, APNs sections, seed numbers, and each document's text."""
    targets = {"rules": set(), "sections": set(), "seeds": set(), "text": {}}
    for name in ("design.md", "apns.md", "seeds.md"):
        path = os.path.join(DOCS, name)
        targets["text"][name] = read(path).lower() if os.path.exists(path) else None
        if targets["text"][name] is None:
            continue
        for line in read(path).splitlines():
            if name == "design.md":
                match = re.match(r"^#{2,4}\s+Rule\s+(\d+)\b", line)
                if match:
                    targets["rules"].add(int(match.group(1)))
            elif name == "apns.md":
                match = re.match(r"^#{2,4}\s+([A-Z])(?:\.(\d+))?[.\s]", line)
                if match:
                    letter, number = match.groups()
                    targets["sections"].add(letter if number is None else f"{letter}.{int(number)}")
            else:
                match = re.match(r"^#{2,4}\s+Seed\s+(\d{3})\b", line)
                if match:
                    targets["seeds"].add(match.group(1))
    return targets


def files_under(paths):
    for path in paths:
        full = os.path.join(ROOT, path)
        if os.path.isfile(full):
            yield full
            continue
        for directory, subdirectories, names in os.walk(full):
            subdirectories[:] = sorted(d for d in subdirectories if not d.startswith("."))
            for name in sorted(names):
                if name.endswith(TEXT_SUFFIXES):
                    yield os.path.join(directory, name)


def apns_sections(text, start):
    """Sections cited right after `apns.md` at `start`: 'E.3', 'C.1, G.6', 'A.5–A.7', 'A.7 tip, C.4'."""
    sections = []
    match = re.compile(r"\s+").match(text, start)
    if not match:
        return sections, start
    position = match.end()
    end = start
    while True:
        section = SECTION.match(text, position)
        if not section:
            break
        letter, number = section.groups()
        sections.append(letter if number is None else f"{letter}.{int(number)}")
        position = end = section.end()
        qualifier = QUALIFIER.match(text, position)
        if qualifier:
            position = qualifier.end()
        separator = SEPARATOR.match(text, position)
        if not separator or not SECTION.match(text, separator.end()):
            break
        position = separator.end()
    return sections, end


def citations(line, continuation, skip=0):
    """Yields (kind, value, text, end) for every citation that starts on `line` at or after `skip`.

    `end` is where the citation ends in `line + " " + continuation`, so the caller knows how much
    of the next line it took.
    """
    text = line + " " + continuation
    limit = len(line)

    def on_line(match):
        return skip <= match.start() < limit

    for match in RULE.finditer(text):
        if on_line(match):
            for number in [match.group(1)] + re.findall(r"\d+", match.group(2)):
                yield "rule", int(number), match.group(0).strip(), match.end()

    for match in SEED.finditer(text):
        if on_line(match):
            for number in [match.group(1)] + re.findall(r"\d{3}", match.group(2)):
                yield "seed", number, match.group(0).strip(), match.end()

    for match in APNS_MD.finditer(text):
        if not on_line(match):
            continue
        prefix = match.group(1)
        if prefix.startswith("reference/") or "/reference/" in prefix:
            continue  # reported as an external reference below
        sections, end = apns_sections(text, match.end())
        quoted = QUOTED.match(text, match.end())
        if sections:
            for section in sections:
                yield "section", section, f"apns.md {section}", end
        elif quoted:
            yield "apns-text", quoted.group(1), f'apns.md, "{quoted.group(1)}"', quoted.end()
        else:
            yield "apns-file", None, "apns.md", match.end()

    for match in DESIGN_QUOTED.finditer(text):
        if on_line(match) and "reference/" not in match.group(1):
            yield "design-text", match.group(2), f'design.md, "{match.group(2)}"', match.end()

    for match in DESIGN_UPPER.finditer(text):
        if on_line(match):
            yield "external", "DESIGN.md", "DESIGN.md", match.end()

    for match in EXTERNAL_REFERENCE.finditer(text):
        if on_line(match):
            yield "external", match.group(0), match.group(0), match.end()


def problem(kind, value, targets):
    """Why a citation does not resolve, or None when it does."""
    text = targets["text"]
    if kind == "rule":
        if text["design.md"] is None:
            return "docs/design.md is missing"
        if value not in targets["rules"]:
            return f'no "### Rule {value}" heading in docs/design.md'
    elif kind == "seed":
        if text["seeds.md"] is None:
            return "docs/seeds.md is missing"
        if value not in targets["seeds"]:
            return f'no "## Seed {value}" heading in docs/seeds.md'
    elif kind == "section":
        if text["apns.md"] is None:
            return "docs/apns.md is missing"
        if value not in targets["sections"]:
            return f'no "{value}" section heading in docs/apns.md'
    elif kind == "apns-file":
        if text["apns.md"] is None:
            return "docs/apns.md is missing"
    elif kind == "apns-text":
        if text["apns.md"] is None or value.lower() not in text["apns.md"]:
            return f'"{value}" does not occur in docs/apns.md; cite a section (apns.md X.N)'
    elif kind == "design-text":
        if text["design.md"] is None or value.lower() not in text["design.md"]:
            return f'"{value}" does not occur in docs/design.md'
    elif kind == "external" and value == "DESIGN.md":
        return "DESIGN.md is not in the repository; cite docs/design.md instead (a rule number, or a section name)"
    elif kind == "external":
        return ("reference/ is not in the repository; cite docs/apns.md (a section, apns.md X.N), "
                "docs/seeds.md (seed 00N) or docs/design.md instead")
    return None


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("paths", nargs="*", default=DEFAULT_PATHS,
                        help="files or folders to scan, relative to the repository (default: Sources Tests)")
    parser.add_argument("--list", action="store_true", help="also print every citation found")
    parser.add_argument("--allow-design-md", action="store_true",
                        help="tolerate citations of DESIGN.md and reference/ for now (listed, not failed)")
    arguments = parser.parse_args()

    targets = load_docs()
    checked = 0
    unresolved = []
    tolerated = []
    for path in files_under(arguments.paths):
        if os.path.abspath(path) == os.path.abspath(__file__):
            continue  # its own examples are not citations
        try:
            lines = read(path).splitlines()
        except UnicodeDecodeError:
            continue
        relative = os.path.relpath(path, ROOT)
        skip = 0  # characters of this line that a citation wrapped from the previous line took
        for index, line in enumerate(lines):
            following = lines[index + 1] if index + 1 < len(lines) else ""
            continuation = CONTINUATION_PREFIX.sub("", following, count=1)
            prefix_length = len(following) - len(continuation)
            next_skip = 0
            for kind, value, cited, end in citations(line, continuation, skip):
                if end > len(line) + 1:
                    next_skip = max(next_skip, prefix_length + end - len(line) - 1)
                checked += 1
                why = problem(kind, value, targets)
                if arguments.list:
                    print(f"{relative}:{index + 1}: {kind} {value!r} ({cited}){'' if why is None else ' UNRESOLVED'}")
                if why is None:
                    continue
                entry = f"{relative}:{index + 1}: {cited}: {why}"
                if kind == "external" and arguments.allow_design_md:
                    tolerated.append(entry)
                else:
                    unresolved.append(entry)
            skip = next_skip

    for entry in unresolved:
        print(entry)
    if tolerated:
        print("tolerated by --allow-design-md, to be fixed:")
        for entry in tolerated:
            print(f"  {entry}")
    summary = f"citations: {checked} checked, {len(unresolved)} unresolved"
    if tolerated:
        summary += f", {len(tolerated)} tolerated (--allow-design-md)"
    print(summary)
    return 1 if unresolved else 0


if __name__ == "__main__":
    sys.exit(main())
