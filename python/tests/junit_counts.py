"""Prints "PASSED FAILED" from a pytest JUnit report (usage: junit_counts.py
FILE); a missing or unreadable report counts as one failure."""

import sys
import xml.etree.ElementTree as ET


def counts(path: str) -> tuple[int, int]:
    try:
        suite = ET.parse(path).getroot().find("testsuite")
        if suite is None:
            return 0, 1
        bad = int(suite.get("failures", "0")) + int(suite.get("errors", "0"))
        return int(suite.get("tests", "0")) - int(suite.get("skipped", "0")) - bad, bad
    except (OSError, ET.ParseError, ValueError):
        return 0, 1


if __name__ == "__main__":
    good, bad = counts(sys.argv[1])
    print(good, bad)
