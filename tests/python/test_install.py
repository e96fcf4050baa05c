"""test_install.py - `make install` as its users see it: tests/install.sh
over the tree that `make install-test` (run by `make test`) installs into
BUILD/install-test, with PREFIX=/usr: the files, a program built with
pkg-config (shared and static), the Python module printing the CLI's
simulated step with PYTHONPATH and LD_LIBRARY_PATH as the README sets them,
and `make uninstall`.
"""

import os
import subprocess
import unittest

from support import BUILD, ROOT


class Install(unittest.TestCase):
    def test_install_sh(self):
        if not os.path.isdir(os.path.join(BUILD, "install-test")):
            self.skipTest("no %s/install-test: `make install-test` (make test runs it) installs there" % BUILD)
        p = subprocess.run(["sh", os.path.join(ROOT, "tests", "install.sh"), BUILD], capture_output=True, text=True)
        print(p.stdout, end="")
        self.assertEqual(p.returncode, 0, p.stdout + p.stderr)
        self.assertEqual(p.stdout.count("install: ok: "), 5)


if __name__ == "__main__":
    unittest.main()
