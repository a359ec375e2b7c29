#!/bin/sh
# railsim under mpirun (cli/jobs.c): compare --sweep and faults sweep spread
# their runs over the ranks and write the same bytes as the serial command
# at -np 1, 2 and 4 (oversubscribed on 2 cores); a run that cannot be split
# (mpi_part.sh splits the others) runs on rank 0 and says why; bad input is
# said once and exits 2.
RS=$1; E2E=$2; MPIRUN=$3
. "$E2E/lib.sh"
MPI="$MPIRUN --allow-run-as-root --oversubscribe"

SMALL="--set topology.gpus=32 --set topology.hb_size=4 --set topology.radix=16 --set traffic.kind=collective \
--set traffic.op=allreduce --set traffic.bytes=8388608"
"$RS" compare $SMALL --sweep topology.nic_gbps=200,400 -o "$TMP/cs" >"$TMP/cs.out" 2>"$TMP/cs.err" \
    || fail "serial compare failed ($(cat "$TMP/cs.err"))"
"$RS" faults sweep $SMALL --class any-network-link --count 0,1,2 --trials 3 -o "$TMP/fs" >"$TMP/fs.out" 2>"$TMP/fs.err" \
    || fail "serial faults sweep failed ($(cat "$TMP/fs.err"))"
for np in 1 2 4; do
    $MPI -np $np "$RS" compare $SMALL --sweep topology.nic_gbps=200,400 -o "$TMP/c$np" >"$TMP/c$np.out" \
        2>"$TMP/c$np.err" || fail "mpirun -np $np compare failed ($(cat "$TMP/c$np.err"))"
    same=1
    same_runs "$TMP/cs" "$TMP/c$np" case0/rail-only case0/fat-tree case1/rail-only case1/fat-tree || same=0
    cmp -s "$TMP/cs/compare.json" "$TMP/c$np/compare.json" && [ $same = 1 ] \
        && ok "mpirun -np $np compare --sweep: compare.json and every run's summary and timeline are the serial run's" \
        || fail "mpirun -np $np compare: outputs differ from the serial run's"
    $MPI -np $np "$RS" faults sweep $SMALL --class any-network-link --count 0,1,2 --trials 3 -o "$TMP/f$np" \
        >"$TMP/f$np.out" 2>"$TMP/f$np.err" || fail "mpirun -np $np faults sweep failed ($(cat "$TMP/f$np.err"))"
    cmp -s "$TMP/fs/sweep.json" "$TMP/f$np/sweep.json" && cmp -s "$TMP/fs/sweep.md" "$TMP/f$np/sweep.md" &&
        cmp -s "$TMP/fs.out" "$TMP/f$np.out" \
        && ok "mpirun -np $np faults sweep: sweep.json, sweep.md and the table are the serial run's" \
        || fail "mpirun -np $np faults sweep: outputs differ"
done
n=$(grep -c 'trial . of 3' "$TMP/f4.err")
[ "$n" -eq 12 ] && ok "mpirun -np 4 faults sweep: each trial named once as it starts ($n)" \
    || fail "mpirun -np 4 faults sweep: $n trial lines"

# a hierarchical AllReduce behind the barrier is not split (a ring or tree
# is, and a hierarchical one under workload.sync=rank: mpi_part.sh)
"$RS" run -q $SMALL --set traffic.algo=hierarchical --set workload.sync=collective -o "$TMP/r1" 2>"$TMP/r1.err" \
    || fail "serial run failed"
$MPI -np 2 "$RS" run -q $SMALL --set traffic.algo=hierarchical --set workload.sync=collective -o "$TMP/r2" 2>"$TMP/r2.err" \
    || fail "mpirun -np 2 run failed ($(cat "$TMP/r2.err"))"
[ "$(strip_host "$TMP/r1/summary.json")" = "$(strip_host "$TMP/r2/summary.json")" ] &&
    grep -q '^railsim: run: not split over the MPI ranks: the collective: ' "$TMP/r2.err" \
    && ok "mpirun -np 2 run of a collective: rank 0 runs it (the serial summary) and says why" || fail "mpirun -np 2 run"

$MPI -np 2 "$RS" compare -j 0 >"$TMP/b.out" 2>"$TMP/b.err"
rc=$?
n=$(grep -c "^railsim: compare: -j '0'" "$TMP/b.err")
[ $rc -eq 2 ] && [ "$n" -eq 1 ] && ok "mpirun -np 2 with bad input: exit 2, said once" \
    || fail "mpirun -np 2 bad input: exit $rc, said $n times"
# run: every rank reads the scenario; rank 0 alone says what is wrong
$MPI -np 2 "$RS" run -q --set topology.gpus=32 --fault "1us link-down nosuch.p3" >"$TMP/rb.out" 2>"$TMP/rb.err"
rc=$?
n=$(grep -c "^railsim: faults.schedule: entry 1: 'nosuch.p3'" "$TMP/rb.err")
[ $rc -eq 2 ] && [ "$n" -eq 1 ] && ok "mpirun -np 2 run with bad input: exit 2, said once" \
    || fail "mpirun -np 2 run bad input: exit $rc, said $n times ($(cat "$TMP/rb.err"))"
finish
