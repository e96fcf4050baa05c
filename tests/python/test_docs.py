"""test_docs.py - the man page (doc/stepcast.1) and the bash completion
(scripts/stepcast-completion.bash) against the CLI they describe.

The man page must have a section for every command `stepcast help` lists
and none for a command it does not, name every option of a command's usage
in that command's section, and name every option the CLI's sources define;
it must render without groff warnings. The completion must complete
commands, options and their values as the CLI lists them.
"""

import glob
import os
import re
import shutil
import subprocess
import unittest

from support import CLI, ROOT, cli

MAN = os.path.join(ROOT, "doc", "stepcast.1")
COMPLETION = os.path.join(ROOT, "scripts", "stepcast-completion.bash")


def help_commands():
    _, out, _ = cli("help")
    body = out.split("\ncommands:\n", 1)[1].split("\n\n", 1)[0]
    return [line.split()[0] for line in body.splitlines() if line.startswith("  ")]


def usage_options(command):
    _, out, _ = cli("help", command)
    return set(re.findall(r"(?<![\w-])(--?[a-z][a-z0-9-]*)", out.splitlines()[0]))


def man_sections():
    """The text of each command's .SS section under COMMANDS, roff's \\- as -."""
    with open(MAN) as f:
        text = f.read().replace("\\-", "-")
    commands = text.split("\n.SH COMMANDS\n", 1)[1].split("\n.SH ", 1)[0]
    parts = re.split(r"^\.SS (\S+)\n", commands, flags=re.M)
    return dict(zip(parts[1::2], parts[2::2])), text


class ManPage(unittest.TestCase):
    def test_every_command(self):
        sections, _ = man_sections()
        commands = help_commands()
        self.assertGreaterEqual(len(commands), 10)
        self.assertEqual([c for c in commands if c not in sections], [], "commands missing from the man page")
        self.assertEqual([c for c in sections if c not in commands], [], "man page sections of no command")

    def test_every_option_of_a_usage(self):
        sections, _ = man_sections()
        for command in help_commands():
            missing = [o for o in sorted(usage_options(command)) if not re.search(re.escape(o) + r"(?![\w-])",
                                                                                     sections[command])]
            self.assertEqual(missing, [], "options of `stepcast %s` missing from its man page section" % command)

    def test_every_option_of_the_sources(self):
        _, text = man_sections()
        options = set()
        for path in glob.glob(os.path.join(ROOT, "cli", "*.c")):
            with open(path) as f:
                options.update(re.findall(r'\.(?:name|alias) = "(-[^"]+)"', f.read()))
        self.assertGreater(len(options), 30)
        missing = [o for o in sorted(options) if not re.search(re.escape(o) + r"(?![\w-])", text)]
        self.assertEqual(missing, [], "options of the CLI missing from the man page")

    def test_exit_codes(self):
        _, text = man_sections()
        codes = text.split("\n.SH EXIT STATUS\n", 1)[1].split("\n.SH ", 1)[0]
        self.assertEqual(re.findall(r"^\.B (\d)$", codes, flags=re.M), ["0", "1", "2", "3"])

    def test_renders_without_warnings(self):
        if not shutil.which("groff"):
            self.skipTest("no groff (Debian: groff-base)")
        p = subprocess.run(["groff", "-man", "-Tutf8", "-ww", "-z", MAN], capture_output=True, text=True)
        self.assertEqual((p.returncode, p.stderr), (0, ""))


class Usage(unittest.TestCase):
    def test_predict_edits_in_report(self):
        """predict and report share predict's edit options (sc_cli_predict_opts):
        both usages list every one of them."""
        with open(os.path.join(ROOT, "cli", "cmd_predict.c")) as f:
            body = f.read().split("void sc_cli_predict_opts(", 1)[1].split("\n}\n", 1)[0]
        shared = set(re.findall(r'\.name = "(-[^"]+)"', body))
        self.assertGreaterEqual(len(shared), 18)
        for command in ("predict", "report"):
            self.assertEqual(sorted(shared - usage_options(command)), [], "missing from `stepcast help %s`" % command)


class Completion(unittest.TestCase):
    def complete(self, *words):
        script = ('source "$1"; shift; COMP_WORDS=("$@"); COMP_CWORD=$((${#COMP_WORDS[@]} - 1)); _stepcast; '
                  'printf "%s\\n" "${COMPREPLY[@]}"')
        p = subprocess.run(["bash", "-c", script, "bash", COMPLETION, CLI] + list(words),
                           capture_output=True, text=True, cwd=ROOT)
        self.assertEqual(p.returncode, 0, p.stderr)
        return [w for w in p.stdout.splitlines() if w]

    def setUp(self):
        if not shutil.which("bash"):
            self.skipTest("no bash")

    def test_commands(self):
        self.assertEqual(self.complete(""), help_commands() + ["--help", "--version"])
        self.assertEqual(self.complete("rep"), ["replay", "report"])
        self.assertEqual(self.complete("repl"), ["replay"])
        self.assertEqual(self.complete("help", "pr"), ["predict"])

    def test_options(self):
        for command in help_commands():
            if command in ("help", "version"):
                continue
            got = set(self.complete(command, "-"))
            self.assertEqual(usage_options(command) - got, set(), command)
            self.assertTrue({"--max-memory", "--jobs", "-j", "--verbose", "-v", "--quiet", "-q", "--progress"} <= got,
                            command)
        self.assertEqual(self.complete("replay", "--no-s"), ["--no-sensitivity"])

    def test_values(self):
        self.assertEqual(self.complete("replay", "--comm", ""), ["coupled", "traced", "model"])
        self.assertEqual(self.complete("predict", "--breakdown", "h"), ["hta"])
        self.assertEqual(self.complete("predict", "--gpu", "h1"), ["h100"])
        self.assertEqual(self.complete("replay", "--scale", "ge"), ["gemm="])
        self.assertEqual(self.complete("comm", "--op", "all_r"), ["all_reduce"])
        self.assertEqual(self.complete("replay", "--chrome", "doc/stepcast."), ["doc/stepcast.1"])
        self.assertEqual(self.complete("synth", "-o", "pyth"), ["python"])
        self.assertEqual(self.complete("replay", "--iteration", ""), [])
        self.assertEqual(self.complete("info", "doc/stepcast."), ["doc/stepcast.1"])


if __name__ == "__main__":
    unittest.main()
