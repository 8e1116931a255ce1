"""Every refusal of a plain line, classified (issue 33, item 5).

*required*: bash shows what a value of the expanding part (or the construct
itself) would do; each category names its demonstration, a line that does it
under bash 5.2 (`demonstrations.sh` runs them). *not required*: the line is
harmless and the gate refuses it only because it does not read the construct.
*reference errs*: the gate reads the line as bash does and the reference
(mvdan/sh) does not.

Each class: (name, kind, pattern of the refusal text, pattern of the line).
The first that matches decides; a refusal no class matches is *unclassified*,
which counts as not required.
"""
import re

REQUIRED = [
    ("an option word that expands (printf -v, wait -p, read -a, set -k ...)", "option",
     r"an option that expands|may split into more options|word that expands before the variable", None,
     "x='-v PATH'; printf $x pwned; echo $PATH    # PATH=pwned"),
    ("a trap action or word list that expands", "option", r"trap action or word list", None,
     "t=\"'; touch /tmp/p; '\"; trap \"rm -f -- '$t'\" EXIT    # runs touch"),
    ("a builtin that runs its argument, or changes how lines are read (fc, complete -F/-C, bind -x, mapfile -C, enable -n, shopt expand_aliases)",
     "option", r"runs|changes how bash reads|turns a builtin off|re-runs history", None,
     "shopt -s expand_aliases; alias ls='touch /tmp/p'    # then ls runs touch"),
    (">&WORD / <&WORD whose WORD expands (bash expands it again)", "unparseable", r"expand WORD twice", None,
     "x='$(touch /tmp/p)'; echo >&\"$x\"    # runs touch"),
    ("${...@P} and $\"...\" inside arithmetic or ${...} (evaluated at run time)", "unparseable",
     r"@P|translated and evaluated", None, "p='$(touch /tmp/p)'; echo ${p@P}    # runs touch"),
    ("a here-document whose body bash may read elsewhere", "unparseable", r"here-document's body elsewhere", None,
     "see the gate's docs: bash 5.2 may end a body inside $(...) early"),
    ("a variable name or subscript that expands (declare foo$n=, unset a[$i], export a[$i]=)", "not-literal-name",
     r"variable name must be a plain word", r"\$",
     "i='$(touch${IFS}/tmp/p)'; declare -a a=(1); unset a[$i]    # runs touch"),
    ("a command word that expands", "not-literal", r"command word must be a plain name", r"\$\(|`|\$[A-Za-z_{]",
     "c='touch /tmp/p'; $c    # runs touch"),
]

NOT_REQUIRED = [
    ("an empty command word (\"\")", "not-literal", r'Command not allowed: "" ', None),
    ("a here-document delimiter that is not a plain word", "unparseable", r"delimiter must be a plain word", None),
    ("a regular expression with parentheses or operators inside [[ ... =~ ... ]]", "unparseable", r"incomplete", r"=~"),
    ("a trap action that does not parse (bash would not run it either)", "unparseable", r"incomplete", r"^trap "),
    ("a backslash-newline inside a word, on a line with a substitution or here-document", "unparseable",
     r"backslash-newline", None),
    ("a literal subscript in a declaration (declare foo[a]=, foo[*], foo['x y'])", "not-literal-name",
     r"variable name must be a plain word", r"^declare foo\["),
    ("a name that can never be a variable (read state /sys/...)", "not-literal-name",
     r"variable name must be a plain word", r"^read \w+ /"),
    ("a quoted $(...) operand of [[ ]] with no subscript (arithmetic does not run it)", "not-allowed", r".",
     r"\[\[ '\$\("),
]

REFERENCE_ERRS = [
    # bash runs `\` and `foo\` (command not found); the reference drops the
    # trailing backslash and lists `` and `foo`.
    ("a trailing backslash is part of the word (bash runs `foo\\`)", "not-allowed", r"\\$", None),
]


def classify(kind, text, line):
    """(verdict, category, demonstration or None)."""
    # The narrow classes first: a harmless line that a broad required class
    # would also match counts against the guard.
    for group, verdict in ((REFERENCE_ERRS, "reference errs"), (NOT_REQUIRED, "not required"), (REQUIRED, "required")):
        for entry in group:
            name, k, text_re, line_re = entry[:4]
            if k != kind or not re.search(text_re, text):
                continue
            if line_re is not None and not re.search(line_re, line):
                continue
            return verdict, name, (entry[4] if len(entry) > 4 else None)
    return "not required", "unclassified: " + kind, None
