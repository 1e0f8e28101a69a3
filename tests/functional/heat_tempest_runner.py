"""Run heat-tempest-plugin tests by name with the peer virtualenv's python
and print each one's outcome as JSON (tests/functional/test_heat_api_tempest.py).

Not a pytest module: ``python heat_tempest_runner.py NAME...`` in the peer
virtualenv, which has tempest and heat-tempest-plugin (nestedflow's does not).
"""

import json
import re
import sys
import unittest


class _Outcomes(unittest.TestResult):
    def __init__(self):
        super().__init__()
        self.outcomes = {}

    @staticmethod
    def _name(test):
        # tempest ids carry "[id-<uuid>,...]" after the method name.
        return re.sub(r"\[.*\]$", "", test.id()).rsplit(".", 2)[-2:]

    def _set(self, test, outcome, detail=""):
        self.outcomes[".".join(self._name(test))] = [outcome, detail[-3000:]]

    def addSuccess(self, test):  # noqa: N802 (unittest's names)
        self._set(test, "passed")

    def addFailure(self, test, err):  # noqa: N802
        self._set(test, "failed", self._exc_info_to_string(err, test))

    def addError(self, test, err):  # noqa: N802
        self._set(test, "error", self._exc_info_to_string(err, test))

    def addSkip(self, test, reason):  # noqa: N802
        self._set(test, "skipped", reason)


def main(names):
    suite = unittest.TestSuite()
    for name in names:
        suite.addTests(unittest.TestLoader().loadTestsFromName(name))
    result = _Outcomes()
    suite.run(result)
    print("HEAT-TEMPEST-OUTCOMES " + json.dumps(result.outcomes, sort_keys=True))


if __name__ == "__main__":
    main(sys.argv[1:])
