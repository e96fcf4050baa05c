#!/bin/sh
# install.sh [BUILD] - checks what `make install` put into BUILD/install-test
# (DESTDIR, PREFIX=/usr; `make install-test` makes it, and `make test` runs
# that first) as a user of it would use it:
#   - every file is there, and the shared library has the soname;
#   - a C program built with `pkg-config --cflags --libs stepcast` against
#     the shared library, and one linked with the static library and
#     `pkg-config --static --libs`, print what the installed CLI prints
#     (`replay --json` of the bundled example, through sc_buffer);
#   - the installed Python module, with PYTHONPATH and LD_LIBRARY_PATH set as
#     the README says, loads the installed library and prints the CLI's
#     step["simulated_us"] for the shared Megatron traces;
#   - `make uninstall` left nothing in BUILD/uninstall-test.
# Prints one line per check; exits non-zero at the first that fails.
# tests/python/test_install.py runs it. Takes about 2 s.
set -eu
build=${1:-build}
cd "$(dirname "$0")/.."
root=$(cd "$build" && pwd)/install-test
prefix=/usr
shared=${STEPCAST_SHARED:-../shared}
megatron=$shared/traces/megatron-tp8-a100
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
unset STEPCAST_LIB
fail() { echo "install: FAILED: $*" >&2; exit 1; }
ok() { echo "install: ok: $*"; }

[ -d "$root" ] || fail "no $root (make install-test makes it)"
version=$(sed -n 's/^#define SC_VERSION_STRING "\(.*\)"$/\1/p' include/stepcast.h)
soname=$(readelf -d "$root$prefix/lib/libstepcast.so.$version" | sed -n 's/.*(SONAME).*\[\(.*\)\]/\1/p')
for f in bin/stepcast lib/libstepcast.a "lib/libstepcast.so.$version" "lib/$soname" lib/libstepcast.so \
         include/stepcast.h lib/pkgconfig/stepcast.pc share/man/man1/stepcast.1 \
         share/bash-completion/completions/stepcast lib/python3/dist-packages/stepcast/__init__.py \
         lib/python3/dist-packages/stepcast/_lib.py; do
    [ -e "$root$prefix/$f" ] || fail "$prefix/$f is not installed"
done
case $soname in libstepcast.so.0.*|libstepcast.so.[1-9]*) ;; *) fail "soname '$soname'" ;; esac
ok "files installed, soname $soname"

# pkg-config sees the installed tree through its sysroot, as a packager's would.
export PKG_CONFIG_PATH="$root$prefix/lib/pkgconfig" PKG_CONFIG_SYSROOT_DIR="$root"
[ "$(pkg-config --modversion stepcast)" = "$version" ] || fail "pkg-config --modversion stepcast"
cat >"$tmp/probe.c" <<'EOF'
/* Replays the traces named on the command line; prints what
 * `stepcast replay --json` prints, taken through an sc_buffer. */
#include <stdio.h>
#include <stepcast.h>

int main(int argc, char **argv) {
    sc_traceset *set;
    sc_replay *r;
    sc_buffer *b;
    sc_error err;
    char *json, msg[1024];
    if (sc_traceset_load((const char *const *)argv + 1, (size_t)argc - 1, NULL, &set, &err) != SC_OK) goto bad;
    sc_replay_options o = SC_REPLAY_OPTIONS_INIT;
    o.graph.release_traces = 1;
    sc_status st = sc_replay_run(set, &o, &r, &err);
    sc_traceset_free(set);
    if (st != SC_OK || sc_buffer_open(&b, &err) != SC_OK) goto bad;
    if (sc_replay_write(r, sc_buffer_file(b), 1, &err) != SC_OK || sc_buffer_take(b, &json, NULL, &err) != SC_OK) goto bad;
    fputs(json, stdout);
    sc_free(json);
    sc_replay_free(r);
    return 0;
bad:
    fprintf(stderr, "probe: %s\n", sc_error_format(&err, msg, sizeof msg));
    return 1;
}
EOF
cc=${CC:-cc}
# shellcheck disable=SC2046 # pkg-config's output is words
$cc -std=c17 -Wall -Wextra -Werror -o "$tmp/probe" "$tmp/probe.c" $(pkg-config --cflags --libs stepcast)
readelf -d "$tmp/probe" | grep -q "NEEDED.*\[$soname\]" || fail "the program does not need $soname"
"$root$prefix/bin/stepcast" replay --json examples/megatron-tp8 >"$tmp/cli.json" 2>/dev/null
LD_LIBRARY_PATH="$root$prefix/lib" "$tmp/probe" examples/megatron-tp8 >"$tmp/probe.json"
cmp -s "$tmp/cli.json" "$tmp/probe.json" || fail "the pkg-config program (shared) does not print the CLI's replay"
ok "pkg-config --cflags --libs stepcast: a program on $soname prints the CLI's replay --json"
static_libs=$(pkg-config --static --libs-only-l --libs-only-other stepcast | sed 's/-lstepcast//')
# shellcheck disable=SC2046,SC2086
$cc -std=c17 -o "$tmp/probe-static" "$tmp/probe.c" $(pkg-config --cflags stepcast) "$root$prefix/lib/libstepcast.a" $static_libs
if readelf -d "$tmp/probe-static" | grep -q "NEEDED.*libstepcast"; then fail "the static program needs libstepcast.so"; fi
"$tmp/probe-static" examples/megatron-tp8 >"$tmp/probe.json"
cmp -s "$tmp/cli.json" "$tmp/probe.json" || fail "the static program does not print the CLI's replay"
ok "pkg-config --static --libs stepcast: a program on libstepcast.a prints the same"

# The README's Python lines, run from a folder with no checkout above it.
want=$("$root$prefix/bin/stepcast" replay --json "$megatron" 2>/dev/null |
       python3 -c 'import json, sys; print(json.load(sys.stdin)["step"]["simulated_us"])')
megatron_abs=$(cd "$megatron" && pwd)
got=$(cd "$tmp" && PYTHONPATH="$root$prefix/lib/python3/dist-packages" LD_LIBRARY_PATH="$root$prefix/lib" \
      python3 -c 'import stepcast; print(stepcast.replay("'"$megatron_abs"'")["step"]["simulated_us"])')
[ -n "$want" ] && [ "$got" = "$want" ] || fail "Python printed '$got', the CLI's replay --json says '$want'"
loaded=$(cd "$tmp" && PYTHONPATH="$root$prefix/lib/python3/dist-packages" LD_LIBRARY_PATH="$root$prefix/lib" \
         python3 -c 'import stepcast, os; print(os.path.realpath(stepcast.__file__)); print(next(l.split()[-1] for l in open("/proc/self/maps") if "libstepcast" in l))')
case $loaded in "$root$prefix/lib/python3/dist-packages/stepcast/__init__.py
$root$prefix/lib/libstepcast.so.$version") ;;
*) fail "Python used another module or library: $loaded" ;; esac
ok "python3: stepcast.replay(...)[\"step\"][\"simulated_us\"] = $got, the CLI's, from the installed module and library"

left=$(find "$(cd "$build" && pwd)/uninstall-test" ! -type d)
[ -z "$left" ] || fail "make uninstall left: $left"
ok "make uninstall removes every file"
