#!/usr/bin/env bash
# test_readme.sh -- the README's examples, run in order as a newcomer would, from a
# scratch folder that looks like the repository root (models/ and examples/ linked,
# build/hetplan the hetplan under test). Every indented line of README.md that starts with
# "build/hetplan" (with its "\" continuation lines) is one example; each must exit 0.
# Ends with "readme: N passed, N failed".
set -u
cd "$(dirname "$0")/../.." || exit 2
root=$PWD
H=$(cd "$(dirname "${HETPLAN:-build/hetplan}")" && pwd)/$(basename "${HETPLAN:-build/hetplan}")
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
mkdir -p "$tmp/build"
ln -s "$root/models" "$tmp/models"
ln -s "$root/examples" "$tmp/examples"
ln -s "$H" "$tmp/build/hetplan"
passed=0; failed=0

# The examples: indented "build/hetplan ..." lines joined with their continuations.
awk '/^    build\/hetplan / { cmd = $0; while (cmd ~ /\\$/ && (getline line) > 0) { sub(/\\$/, "", cmd); cmd = cmd line }
                            sub(/^ +/, "", cmd); print cmd }' README.md > "$tmp/examples.txt"
n=$(wc -l < "$tmp/examples.txt")
if [ "$n" -lt 5 ]; then
  failed=$((failed + 1)); echo "not ok readme_has_examples: found $n"
fi
i=0
while IFS= read -r cmd; do
  i=$((i + 1))
  out=$(cd "$tmp" && timeout 300 bash -c "$cmd" 2>&1 </dev/null); rc=$?
  short=$(echo "$cmd" | cut -c1-90)
  if [ $rc -eq 0 ]; then passed=$((passed + 1)); echo "ok $i readme example: $short"
  else failed=$((failed + 1)); echo "not ok $i readme example (exit $rc): $cmd"; echo "$out" | tail -4 | sed 's/^/  /'; fi
done < "$tmp/examples.txt"
# what the examples say they write, where they ran
for f in plan.json tiny-plan.json gantt.svg; do
  if [ -s "$tmp/$f" ]; then passed=$((passed + 1)); echo "ok readme_wrote_$f"
  else failed=$((failed + 1)); echo "not ok readme_wrote_$f"; fi
done
echo "readme: $passed passed, $failed failed"
[ "$failed" -eq 0 ]
