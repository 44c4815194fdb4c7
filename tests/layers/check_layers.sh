#!/usr/bin/env bash
# check_layers.sh BUILD -- the layering of docs/architecture.md, read off the object
# files: imports run downward only (cli -> solvers -> formulation -> core), and the
# library (core, formulation, solvers) never prints, exits or aborts: no object of it
# refers to stdout, stderr, printf-to-a-stream, exit or abort (but for the _exit that ends
# the child process of a MIP solve, solvers/mip_child.c).
# Ends with "layers: N passed, N failed".
set -u
build=${1:-build/test}
cd "$(dirname "$0")/../.." || exit 2
passed=0; failed=0
ok()  { passed=$((passed + 1)); echo "ok $((passed + failed)) $1"; }
bad() { failed=$((failed + 1)); echo "not ok $((passed + failed)) $1"; shift; printf '  %s\n' "$@"; }

layers=(src formulation solvers cli)
declare -A owner      # symbol -> layer index that defines it
for i in "${!layers[@]}"; do
  objs=("$build/${layers[$i]}"/*.o)
  [ -e "${objs[0]}" ] || { bad "objects_of_${layers[$i]}" "no objects under $build/${layers[$i]}"; continue; }
  while read -r sym; do owner[$sym]=$i; done < <(nm --defined-only -g "${objs[@]}" 2>/dev/null | awk 'NF == 3 { print $3 }')
done

for i in "${!layers[@]}"; do
  up=""
  for o in "$build/${layers[$i]}"/*.o; do
    [ -e "$o" ] || continue
    while read -r sym; do
      j=${owner[$sym]:-}
      if [ -n "$j" ] && [ "$j" -gt "$i" ]; then up+="$(basename "$o") uses $sym (${layers[$j]}); "; fi
    done < <(nm -u "$o" | awk '{ print $2 }')
  done
  if [ -z "$up" ]; then ok "imports_downward_${layers[$i]}"; else bad "imports_downward_${layers[$i]}" "$up"; fi
done

forbidden='^(stdout|stderr|printf|fprintf|vprintf|vfprintf|puts|fputs|fputc|putc|putchar|fwrite|perror|exit|_exit|abort|__printf_chk|__fprintf_chk|__vfprintf_chk)$'
for i in 0 1 2; do
  hits=""
  for o in "$build/${layers[$i]}"/*.o; do
    [ -e "$o" ] || continue
    s=$(nm -u "$o" | awk '{ print $2 }' | grep -E "$forbidden" | tr '\n' ' ')
    # the one exception: the child process of a MIP solve ends itself (solvers/mip_child.c);
    # the caller's process never exits
    [ "$(basename "$o")" = mip_child.o ] && [ "$s" = "_exit " ] && s=
    [ -n "$s" ] && hits+="$(basename "$o"): $s; "
  done
  if [ -z "$hits" ]; then ok "never_prints_${layers[$i]}"; else bad "never_prints_${layers[$i]}" "$hits"; fi
done

echo "layers: $passed passed, $failed failed"
[ "$failed" -eq 0 ]
