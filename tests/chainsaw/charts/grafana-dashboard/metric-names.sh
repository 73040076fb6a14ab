#!/usr/bin/env bash
# Prints the metric names a Grafana dashboard's PromQL reads, one a line,
# sorted: every panel's target expressions (rows' collapsed panels included)
# and the label_values(METRIC, LABEL) queries of its variables.
#
#   metric-names.sh < dashboard.json
#
# In each expression it removes what is not a metric name: quoted strings,
# label matchers {...}, ranges [...], the labels of by/without/on/ignoring/
# group_left/group_right (...), dashboard variables ($x, ${x}), numbers and
# durations (a word that starts with a digit: 0.99, 1e-9, 5m),
# function names (a word before "("), and the operators written as words.
set -euo pipefail
jq -r '
  ([.. | objects | select(has("expr")) | .expr]
   + [.templating.list[]? | select(.type == "query") | (.query | if type == "object" then .query else . end)])
  | .[] | gsub("\n"; " ")' |
  sed -E \
    -e 's/"([^"\\]|\\.)*"//g' \
    -e 's/\{[^}]*\}//g' \
    -e 's/\[[^]]*\]//g' \
    -e 's/label_values\(([^,)]*),[^)]*\)/\1/g' \
    -e 's/(^|[^A-Za-z0-9_:])(by|without|on|ignoring|group_left|group_right)[[:space:]]*\([^)]*\)/\1/g' \
    -e 's/\$\{?[A-Za-z_][A-Za-z0-9_]*\}?//g' \
    -e 's/(^|[^A-Za-z0-9_:])[0-9][0-9A-Za-z.]*/\1/g' \
    -e 's/[A-Za-z_][A-Za-z0-9_]*[[:space:]]*\(/(/g' |
  grep -oE '[A-Za-z_:][A-Za-z0-9_:]*' |
  grep -vxE 'and|or|unless|bool|offset|atan2' |
  sort -u
