"""The results in `labkit grade --json` files, for the tools that summarize them
(grade-summary.py, repeat-summary.py): each file holds one result or {"results": [...]}."""
import json


def grade_results(paths):
    """Yields (path, result) for every result of every file; a file that is not JSON is reported
    on standard output and skipped."""
    for path in paths:
        try:
            with open(path, encoding="utf-8") as f:
                doc = json.load(f)
        except (OSError, json.JSONDecodeError) as e:
            print(f"{path}: no JSON ({e})")
            continue
        for r in doc.get("results", [doc]):
            yield path, r
