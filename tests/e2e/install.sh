#!/bin/sh
# The installed library as a user meets it: `cmake --install` to a
# temporary prefix, then
#   - librailsim.so has SONAME librailsim.so.0 and exports only rs_ symbols;
#   - every public header compiles on its own as C, and the umbrella
#     <railsim/railsim.h> as C++ (when a C++ compiler is there);
#   - examples/ build against the installed files with pkg-config (shared)
#     and as a CMake project with find_package(railsim) (shared and
#     static), and run.
BUILD=$1; SRC=$2; E2E=$SRC/tests/e2e
. "$E2E/lib.sh"
CC=${CC:-cc}
P=$TMP/prefix

if cmake --install "$BUILD" --prefix "$P" >"$TMP/install.log" 2>&1; then ok "cmake --install"; else
    fail "cmake --install: $(tail -3 "$TMP/install.log")"; finish; exit; fi
LIB=$(find "$P" -name 'librailsim.so.*.*' | head -1)
PCDIR=$(dirname "$(find "$P" -name railsim.pc | head -1)")
for f in "$P/bin/railsim" "$P/include/railsim/railsim.h" "$PCDIR/railsim.pc" "$LIB" \
         "$(dirname "$LIB")/librailsim.a"; do
    if [ -f "$f" ]; then ok "installed ${f#"$P"/}"; else fail "not installed: $f"; fi
done

soname=$(objdump -p "$LIB" | awk '$1 == "SONAME" { print $2 }')
if [ "$soname" = librailsim.so.0 ]; then ok "SONAME $soname"; else fail "SONAME '$soname', expected librailsim.so.0"; fi
nm -D --defined-only "$LIB" | awk '{ print $NF }' >"$TMP/syms"
n=$(wc -l <"$TMP/syms")
other=$(grep -v '^rs_' "$TMP/syms" | head -5 | tr '\n' ' ')
if [ "$n" -gt 100 ] && [ -z "$other" ]; then ok "$n exported symbols, all rs_"; else
    fail "exported symbols: $n, not rs_: $other"; fi
for s in rs_net_config_init rs_net_create rs_net_send rs_net_at rs_net_run rs_net_now rs_net_destroy \
         rs_net_stats_fill rs_net_port_info_fill rs_coll_create rs_coll_join rs_replay_create; do
    grep -qx "$s" "$TMP/syms" || fail "$s is not exported"
done

for h in "$P"/include/railsim/*.h; do
    printf '#include <railsim/%s>\n' "$(basename "$h")" >"$TMP/one.c"
    "$CC" -std=c11 -Wall -Wextra -Werror -fsyntax-only -I"$P/include" "$TMP/one.c" 2>"$TMP/hdr.err" ||
        fail "$(basename "$h") does not compile on its own: $(head -3 "$TMP/hdr.err")"
done
ok "every public header compiles on its own as C11"
if command -v c++ >/dev/null 2>&1; then
    printf '#include <railsim/railsim.h>\nint main() { rs_net_config c; rs_net_config_default(&c); return c.gpus > 0 ? 0 : 1; }\n' \
        >"$TMP/umbrella.cpp"
    if c++ -std=c++17 -Wall -Wextra -Werror -I"$P/include" "$TMP/umbrella.cpp" -L"$(dirname "$LIB")" -lrailsim \
           -o "$TMP/umbrella" 2>"$TMP/cxx.err" && LD_LIBRARY_PATH=$(dirname "$LIB") "$TMP/umbrella"; then
        ok "<railsim/railsim.h> compiles, links and runs as C++17"
    else
        fail "C++: $(head -5 "$TMP/cxx.err")"
    fi
fi

export PKG_CONFIG_PATH="$PCDIR"
export LD_LIBRARY_PATH="$(dirname "$LIB")"
# shellcheck disable=SC2046
if "$CC" -Wall -Wextra -Werror "$SRC/examples/net_basic.c" $(pkg-config --cflags --libs railsim) \
       -o "$TMP/net_basic" 2>"$TMP/cc.err"; then ok "net_basic builds with pkg-config"; else
    fail "net_basic with pkg-config: $(head -5 "$TMP/cc.err")"; fi
if "$TMP/net_basic" >"$TMP/nb.out" 2>&1 && grep -q '^2 of 2 messages done' "$TMP/nb.out"; then
    ok "net_basic runs: $(sed -n 3p "$TMP/nb.out")"; else fail "net_basic: $(cat "$TMP/nb.out")"; fi

# run_scenario: the same scenario through rs_run and through the installed
# command give the same collective time.
if "$CC" -Wall -Wextra -Werror "$SRC/examples/run_scenario.c" $(pkg-config --cflags --libs railsim) \
       -o "$TMP/run_scenario" 2>"$TMP/cc.err"; then ok "run_scenario builds with pkg-config"; else
    fail "run_scenario with pkg-config: $(head -5 "$TMP/cc.err")"; fi
"$TMP/run_scenario" traffic.iters=2 >"$TMP/rs.out" 2>&1
rc=$?
"$P/bin/railsim" run -q -o "$TMP/rs_cmd" --set topology.kind=rail-only --set topology.gpus=64 \
    --set topology.hb_size=8 --set traffic.kind=collective --set traffic.op=allreduce \
    --set traffic.bytes=16777216 --set traffic.iters=2 >/dev/null 2>&1
want=$(json_get "$TMP/rs_cmd/summary.json" "'%.3f' % (d['collective']['time_ps'] / 1e6)" 2>/dev/null)
if [ $rc -eq 0 ] && grep -q "^status success$" "$TMP/rs.out" && grep -q "^collective time $want us" "$TMP/rs.out"; then
    ok "run_scenario: $(sed -n 2p "$TMP/rs.out"), as railsim run"
else
    fail "run_scenario: exit $rc, railsim run says $want us: $(cat "$TMP/rs.out")"
fi

if cmake -S "$SRC/examples" -B "$TMP/ex" -DCMAKE_PREFIX_PATH="$P" >"$TMP/ex.log" 2>&1 &&
   cmake --build "$TMP/ex" >>"$TMP/ex.log" 2>&1; then ok "examples build with find_package(railsim)"; else
    fail "examples with find_package: $(tail -5 "$TMP/ex.log")"; fi
if "$TMP/ex/run_scenario" traffic.iters=2 | cmp -s - "$TMP/rs.out"; then ok "run_scenario (CMake) prints the same"; else
    fail "run_scenario (CMake) differs"; fi
for ex in net_basic net_basic_static; do
    if "$TMP/ex/$ex" >"$TMP/ex.out" 2>&1 && cmp -s "$TMP/ex.out" "$TMP/nb.out"; then ok "$ex (CMake) prints the same"; else
        fail "$ex (CMake): $(cat "$TMP/ex.out")"; fi
done
finish
