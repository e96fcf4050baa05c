#!/usr/bin/env bash
# interop.sh BUILD - stepcast's Chakra exports run on ASTRA-sim, the simulator
# that reads them (`make interop`; CI runs it).
#
# ASTRA-sim's analytical backend is built once from ../shared/tools/astra-sim
# into BUILD/astra-sim (about 3 minutes on 2 cores; kept while src.tgz is the
# same). Then both 8-rank sets of ../shared/traces (Megatron TP8 on A100, DLRM
# on V100) are exported in each mode (default, --no-cpu, --gpu-only) and run
# through the shared run.sh on its default network: the ASTRA-sim examples'
# 8-NPU ring, 50 GB/s and 500 ns per link, system Ring_4chunks.json. The
# GPU-only export runs once more on a ring as fast as the trace's own
# collectives were (their bus bandwidth: bytes a rank moves over the
# measured transfer time, as `stepcast comm` measures it). ASTRA-sim exits 0
# even when a rank stalls, so what counts is run.sh's check that every rank
# reported "finished". One row per run: ASTRA-sim's ranks' finish times
# against stepcast's replay of the same .et files.
#
# Exit: 0 when every export ran to the end (or when the packages ASTRA-sim
# builds with are missing: a skip, said on stderr), 1 when one did not or
# the build failed, 2 on bad usage. Env: STEPCAST_SHARED (default ../shared).
set -uo pipefail
[[ $# -eq 1 ]] || { echo "usage: interop.sh BUILD" >&2; exit 2; }
build=$(cd "$1" && pwd) || exit 2
shared=${STEPCAST_SHARED:-../shared}
tools=$shared/tools/astra-sim
stepcast=$build/stepcast
[[ -x $stepcast ]] || { echo "interop: no $stepcast (make all first)" >&2; exit 2; }
[[ -f $tools/src.tgz ]] || { echo "interop: no $tools/src.tgz (set STEPCAST_SHARED)" >&2; exit 1; }

# The Debian packages ASTRA-sim builds with (scripts/install-deps.sh interop).
missing=""
for p in cmake g++ make protobuf-compiler libprotobuf-dev libyaml-cpp-dev; do
    dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing="$missing $p"
done
if [[ -n $missing ]]; then
    echo "interop: skipped: ASTRA-sim builds with Debian packages that are missing:$missing" >&2
    echo "interop: install them (sudo apt-get install -y$missing) and run make interop again" >&2
    exit 0
fi

# Build once per src.tgz: the stamp holds its checksum. build.sh is given an
# absolute folder (its smoke test runs from inside it).
astra=$build/astra-sim
bin=$astra/build/astra_analytical/build/bin/AstraSim_Analytical_Congestion_Unaware
sum=$(sha256sum "$tools/src.tgz" | cut -d' ' -f1)
if [[ -x $bin && "$(cat "$astra/.stepcast-stamp" 2>/dev/null)" == "$sum" ]]; then
    echo "interop: ASTRA-sim already built in $astra"
else
    echo "interop: building ASTRA-sim into $astra (about 3 minutes on 2 cores)"
    start=$SECONDS
    "$tools/build.sh" "$astra" >/dev/null || { echo "interop: ASTRA-sim did not build" >&2; exit 1; }
    echo "$sum" >"$astra/.stepcast-stamp"
    echo "interop: built in $((SECONDS - start)) s"
fi
export ASTRA_DIR=$astra
out=$build/interop
rm -rf "$out"
mkdir -p "$out"
failed=0 ran=0

# export TAG MODE FLAG DIR: PREFIX.<rank>.et of the set in DIR; prints the
# prefix, or nothing when the export failed (said on stderr).
export_set() {
    local pfx=$out/$1-$2
    # The PyTorch ETs beside the Megatron traces are skipped with a warning
    # each: the log keeps them.
    if "$stepcast" export --chakra "$pfx" $3 "$4" 2>"$pfx.export.log"; then
        echo "$pfx"
    else
        echo "interop: $1 $2: export failed:" >&2
        tail -3 "$pfx.export.log" >&2
    fi
}

# run_astra TAG MODE PREFIX NETWORK LOG: one row of the table, or a
# failure; its logs are LOG.*.
run_astra() {
    local tag=$1 mode=$2 pfx=$3 net=$4 log=$5
    if ! "$tools/run.sh" -t 300 ${net:+-n "$net"} -g "$pfx.comm_group.json" -l "$log.log" "$pfx" \
        >"$log.ranks" 2>"$log.run.log"; then
        echo "interop: $tag $mode: ASTRA-sim did not finish every rank:" >&2
        cat "$log.ranks" "$log.run.log" | tail -12 >&2
        failed=$((failed + 1))
        return
    fi
    ran=$((ran + 1))
    local nodes lo hi replay
    nodes=$(sed -nE 's/.*: ([0-9]+) nodes \(of.*/\1/p' "$pfx.export.log")
    lo=$(sed -nE 's/^rank [0-9]+: ([0-9]+) ns.*/\1/p' "$log.ranks" | sort -n | head -1)
    hi=$(sed -nE 's/^rank [0-9]+: ([0-9]+) ns.*/\1/p' "$log.ranks" | sort -n | tail -1)
    replay=$("$stepcast" replay "$pfx".*.et 2>/dev/null | sed -nE 's/^step \(slowest rank\): .*simulated ([0-9.]+) ms.*/\1/p')
    awk -v s="$tag" -v m="$mode" -v n="$nodes" -v lo="$lo" -v hi="$hi" -v r="$replay" 'BEGIN {
        ratio = r > 0 ? hi / 1e6 / r : 0
        printf "%-18s %-18s %7d %10.3f %10.3f %10.3f %6.2f\n", s, m, n, lo / 1e6, hi / 1e6, r, ratio }'
}

# traced_busbw DIR: GB/s a rank moved over the measured transfer times of the
# set's collectives (nccl-tests' bus bandwidth of them all together).
traced_busbw() {
    "$stepcast" comm "$1" 2>/dev/null | awk '
        $1 == "all_reduce" || $1 == "all_gather" || $1 == "reduce_scatter" || $1 == "all_to_all" {
            f = ($2 - 1) / $2; if ($1 == "all_reduce") f *= 2
            bus += f * $3 * $4; us += $5 * $4 }
        END { if (us > 0) printf "%.1f", bus / us / 1e3 }'
}

echo "interop: ASTRA-sim on an 8-NPU ring, 500 ns per link: 50 GB/s (its examples' Ring_8npus.yml) unless"
echo "interop: the mode says @N GB/s; system Ring_4chunks.json; replay = stepcast replay of the same .et files"
printf '%-18s %-18s %7s %10s %10s %10s %6s\n' set mode nodes "astra lo" "astra hi" "replay ms" ratio
for s in "megatron-tp8-a100:megatron-tp8-a100" "param-dlrm-8rank/kineto:dlrm"; do
    dir=$shared/traces/${s%%:*} tag=${s##*:}
    for m in "default:" "no-cpu:--no-cpu" "gpu-only:--gpu-only"; do
        pfx=$(export_set "$tag" "${m%%:*}" "${m##*:}" "$dir")
        if [[ -z $pfx ]]; then
            failed=$((failed + 1))
            continue
        fi
        run_astra "$tag" "${m%%:*}" "$pfx" "" "$pfx.astra"
    done
    bw=$(traced_busbw "$dir")
    if [[ -n $bw && -n ${pfx:-} ]]; then
        net=$out/$tag-ring.yml
        printf 'topology: [ Ring ]\nnpus_count: [ 8 ]\nbandwidth: [ %s ]  # GB/s\nlatency: [ 500.0 ]  # ns\n' "$bw" >"$net"
        run_astra "$tag" "gpu-only@${bw}GB/s" "$pfx" "$net" "$pfx.astra-traced-bw"
    fi
done
echo "interop: $ran of $((ran + failed)) runs of ASTRA-sim finished every rank (logs in $out)"
[[ $failed -eq 0 ]]
