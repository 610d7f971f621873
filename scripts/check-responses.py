#!/usr/bin/env python3
"""Checks every HTTP answer the Swift tests saw against openapi.yaml (issue 15, item 8).

    scripts/check-responses.py RESPONSES.jsonl [--openapi openapi.yaml] [--min-responses N]
    scripts/check-responses.py --self-test

The tests' clients write one JSON line per answer when BECKON_TEST_RESPONSES_FILE is set
(Tests/TestCapture/ResponseCapture.swift; scripts/test.sh sets it). For each answer to a
documented operation: its status must be documented (exactly, as `4XX`, or as `default`), its
content type must be one the document gives for that status, and a JSON body must match the
schema; every error (4xx, 5xx) must also be in the documented form, schema `Error`. Answers to
paths the document does not have (a test probing an unknown route) are counted, not judged.
Needs PyYAML and jsonschema (pip install pyyaml jsonschema).
"""
import argparse, collections, json, os, re, sys

import yaml
from jsonschema import Draft202012Validator

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))


class Document:
    def __init__(self, spec):
        self.spec = spec
        self.operations = []  # (method, regex, template, operation)
        for template, item in spec["paths"].items():
            pattern = "^" + re.sub(r"\{[^}]+\}", "[^/]+", re.escape(template).replace(r"\{", "{").replace(r"\}", "}")) + "$"
            for method, operation in item.items():
                if method in ("get", "put", "post", "delete", "patch", "head", "options"):
                    self.operations.append((method.upper(), re.compile(pattern), template, operation))

    def resolve(self, node):
        while isinstance(node, dict) and "$ref" in node and node["$ref"].startswith("#/"):
            target = self.spec
            for part in node["$ref"][2:].split("/"):
                target = target[part]
            node = target
        return node

    def validator(self, schema):
        # The components sit beside the schema so its "#/components/..." references resolve.
        return Draft202012Validator({**schema, "components": self.spec.get("components", {})})

    def operation(self, method, path):
        for op_method, pattern, template, operation in self.operations:
            if op_method == method and pattern.match(path):
                return template, operation
        return None, None

    def check(self, record):
        """The problems with one answer (empty if it conforms), and the operation's name."""
        path = record["uri"].split("?", 1)[0]
        template, operation = self.operation(record["method"], path)
        if operation is None:
            return None, []
        name = f'{record["method"]} {template}'
        status = str(record["status"])
        responses = operation.get("responses", {})
        response = responses.get(status) or responses.get(status[0] + "XX") or responses.get("default")
        if response is None:
            return name, [f"status {status} is not documented (documented: {', '.join(sorted(responses))})"]
        response = self.resolve(response)
        problems = []
        content = response.get("content") or {}
        media = (record.get("contentType") or "").split(";")[0].strip().lower()
        body = record.get("body", "")
        if not content:
            if body:
                problems.append(f"status {status} documents no body, got {body[:80]!r}")
            return name, problems
        if media not in content:
            return name, [f"content type {media or 'none'!r} is not documented for {status} ({', '.join(content)})"]
        schema = self.resolve(content[media].get("schema") or {})
        if media == "application/json":
            try:
                value = json.loads(body)
            except ValueError:
                return name, [f"the body is not JSON: {body[:80]!r}"]
            for error in self.validator(schema).iter_errors(value):
                problems.append(f"body: {error.message} at {'/'.join(map(str, error.absolute_path)) or '(root)'}")
            # The drop-ins answer errors in their own protocol's form (`x-error-form`).
            if record["status"] >= 400 and not operation.get("x-error-form"):
                error_schema = self.spec["components"]["schemas"]["Error"]
                for error in self.validator(error_schema).iter_errors(value):
                    problems.append(f"not in the documented error form: {error.message}")
        return name, problems


def self_test(document):
    """The checker rejects what it must: an undocumented status, a wrong body, a bare error."""
    cases = [
        ({"method": "GET", "uri": "/health", "status": 200, "contentType": "application/json", "body": '{"status":"ok"}'}, True),
        ({"method": "GET", "uri": "/health", "status": 200, "contentType": "application/json", "body": '{"status":1}'}, False),
        ({"method": "GET", "uri": "/health", "status": 299, "contentType": "application/json", "body": "{}"}, False),
        ({"method": "POST", "uri": "/v1/messages", "status": 401, "contentType": "application/json",
          "body": '{"error":{"code":"unauthorized","message":"no key"}}'}, True),
        ({"method": "POST", "uri": "/v1/messages", "status": 401, "contentType": "application/json",
          "body": '{"message":"no key"}'}, False),
        ({"method": "GET", "uri": "/health", "status": 200, "contentType": "text/html", "body": "<p>ok</p>"}, False),
    ]
    wrong = [(record, ok) for record, ok in cases if (not document.check(record)[1]) != ok]
    for record, ok in wrong:
        print(f"check-responses self-test: misjudged ({'should pass' if ok else 'should fail'}): {record}", file=sys.stderr)
    return not wrong


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("responses", nargs="?")
    parser.add_argument("--openapi", default=os.path.join(ROOT, "openapi.yaml"))
    parser.add_argument("--min-responses", type=int, default=1)
    parser.add_argument("--self-test", action="store_true")
    args = parser.parse_args()
    with open(args.openapi) as file:
        document = Document(yaml.safe_load(file))
    if not self_test(document):
        sys.exit("check-responses: the checker fails its own self-test")
    if args.self_test:
        print("check-responses self-test: ok")
        return
    per_operation = collections.Counter()
    failures = collections.defaultdict(list)
    unmatched = collections.Counter()
    total = 0
    with open(args.responses) as file:
        for line in file:
            record = json.loads(line)
            total += 1
            name, problems = document.check(record)
            if name is None:
                unmatched[f'{record["method"]} {record["uri"].split("?")[0]} -> {record["status"]}'] += 1
                continue
            per_operation[name] += 1
            for problem in problems:
                failures[(name, record["status"], problem)].append(record)
    for name, count in sorted(per_operation.items()):
        print(f"  {count:6d}  {name}")
    if unmatched:
        print(f"  {sum(unmatched.values()):6d}  answers to paths or methods openapi.yaml does not have "
              f"({len(unmatched)} distinct, e.g. {next(iter(unmatched))})")
    for (name, status, problem), records in sorted(failures.items()):
        print(f"FAIL {name} -> {status}: {problem} ({len(records)}x; e.g. {records[0]['body'][:120]!r})")
    print(f"check-responses: {total} answers, {sum(per_operation.values())} to documented operations, "
          f"{sum(len(r) for r in failures.values())} not as documented")
    if total < args.min_responses:
        sys.exit(f"check-responses: only {total} answers recorded (at least {args.min_responses} expected)")
    sys.exit(1 if failures else 0)


if __name__ == "__main__":
    main()
