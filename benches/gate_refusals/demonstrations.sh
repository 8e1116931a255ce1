#!/usr/bin/env bash
# Runs the demonstration of each *required* class of refusal (classes.py)
# under this machine's bash, in a scratch directory: each must leave its
# evidence (a file made, a variable set). Prints one line per class; exits 1
# if any demonstration shows nothing.
set -u
scratch=$(mktemp -d)
trap 'rm -rf "$scratch"' EXIT
cd "$scratch" || exit 1
failed=0
show() { # NAME EVIDENCE-TEST LINE
    local name=$1 evidence=$2 line=$3
    rm -f p
    bash -c "$line" >/dev/null 2>&1
    if bash -c "$evidence"; then
        echo "shown - $name: $line"
    else
        echo "NOT SHOWN - $name: $line"
        failed=1
    fi
}
show "an option word that expands" '[ -e p ]' \
    'x="-v PATH"; printf $x pwned; [ "$PATH" = pwned ] && echo > p'
show "a trap action that expands" '[ -e p ]' \
    "t=\"'; touch p; '\"; trap \"rm -f -- '\$t'\" EXIT"
show "a builtin that changes how lines are read" '[ -e p ]' \
    $'shopt -s expand_aliases; alias ls=\'touch p\'\nls'
show ">&WORD whose WORD expands" '[ -e p ]' \
    'x="\$(touch p)"; echo >&"$x"'
show '${...@P}' '[ -e p ]' \
    'p0="\$(touch p)"; echo ${p0@P}'
show "a subscript that expands" '[ -e p ]' \
    'i="\$(touch\${IFS}p)"; declare -a a=(1); unset a[$i]'
show "a variable name that expands" '[ -e p ]' \
    'n=" PATH=x"; declare foo$n; [ "$PATH" = x ] && echo > p'
show "a command word that expands" '[ -e p ]' \
    'c="touch p"; $c'
exit $failed
