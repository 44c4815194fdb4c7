#!/usr/bin/env bash
# test_flags.sh -- the command table against what a user reads: every flag each command
# takes (its table, listed by the unlisted `hetplan flags`) appears in that command's
# --help and in its section of docs/cli.md; every listed command is in the table; and the
# parser reads the same table: a misspelt flag is told the flag, a switch refuses a
# value, an integer out of its range is refused with the range the table gives.
# Ends with "flags: N passed, N failed".
set -u
cd "$(dirname "$0")/../.." || exit 2
H=${HETPLAN:-build/hetplan}
passed=0; failed=0
ok()  { passed=$((passed + 1)); echo "ok $((passed + failed)) $1"; }
bad() { failed=$((failed + 1)); echo "not ok $((passed + failed)) $1"; shift; printf '  %s\n' "$@"; }

table=$($H flags) || { bad flags_lists_the_table "hetplan flags failed"; table=""; }
[ -n "$table" ] && ok flags_lists_the_table

# The section of docs/cli.md whose heading names the command ("## export-lp, decode").
section() {
  awk -v cmd="$1" '/^## / { h = substr($0, 4); n = split(h, names, /, /); on = 0
                            for (i = 1; i <= n; i++) if (names[i] == cmd) on = 1; next }
                   on' docs/cli.md
}
# Whether TEXT names --FLAG (for out: -o or --out) as a whole flag.
names_flag() {
  if [ "$2" = out ]; then grep -Eq -- '(^|[^a-z-])-o( |$)|--out([^a-z-]|$)' <<<"$1"
  else grep -Eq -- "--$2([^a-zA-Z0-9-]|$)" <<<"$1"; fi
}

# every command of `hetplan --help` is in the table
for c in $($H --help | sed -n '/^commands:/,/^$/p' | awk '/^  [a-z]/ { print $1 }'); do
  if $H flags "$c" >/dev/null 2>&1; then ok "listed_command_in_table ($c)"
  else bad "listed_command_in_table ($c)" "hetplan flags $c failed"; fi
done

# every flag: in --help, in docs/cli.md, suggested when misspelt
while IFS=$'\t' read -r cmd flag arg rest; do
  case "$flag" in --*) ;; *) continue ;; esac
  name=${flag#--}
  help=$($H "$cmd" --help 2>&1)
  if names_flag "$help" "$name"; then ok "help_of_${cmd}_names_$flag"
  else bad "help_of_${cmd}_names_$flag" "hetplan $cmd --help lacks $flag"; fi
  if names_flag "$(section "$cmd")" "$name"; then ok "docs_cli_${cmd}_names_$flag"
  else bad "docs_cli_${cmd}_names_$flag" "the section of $cmd in docs/cli.md lacks $flag"; fi
  out=$($H "$cmd" "--${name}x" 2>&1); rc=$?
  if [ $rc -eq 2 ] && grep -qF -- "unknown flag '--${name}x' (did you mean '--$name'?)" <<<"$out"; then
    ok "misspelt_${cmd}_${flag}_suggested"
  else bad "misspelt_${cmd}_${flag}_suggested" "exit $rc" "$out"; fi
done <<<"$table"

# switches take no value; integers keep to the range their table gives
while IFS=$'\t' read -r cmd flag arg rest; do
  case "$flag" in --*) ;; *) continue ;; esac
  if [ "$arg" = - ]; then
    out=$($H "$cmd" "$flag=1" 2>&1); rc=$?
    if [ $rc -eq 2 ] && grep -qF -- "$flag takes no value" <<<"$out"; then ok "switch_${cmd}_${flag}_takes_no_value"
    else bad "switch_${cmd}_${flag}_takes_no_value" "exit $rc" "$out"; fi
    continue
  fi
  range=$(sed -n 's/.*takes an integer in \([0-9]*\)\.\.\([0-9]*\).*/\1 \2/p' <<<"$rest")
  [ -n "$range" ] || continue
  read -r lo hi <<<"$range"
  for v in $(( lo - 1 )) "${hi}0"; do
    out=$($H "$cmd" "$flag" "$v" 2>&1); rc=$?
    if [ $rc -eq 2 ] && grep -qF -- "$flag: expected " <<<"$out" && grep -qF -- "got '$v'" <<<"$out"; then
      ok "range_${cmd}_${flag}_refuses_$v"
    else bad "range_${cmd}_${flag}_refuses_$v" "exit $rc" "$out"; fi
  done
done <<<"$table"

echo "flags: $passed passed, $failed failed"
[ "$failed" -eq 0 ]
