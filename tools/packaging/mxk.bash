# bash completion for mxk (installed as share/bash-completion/completions/mxk).
# It reads everything from mxk's own --help, so it never drifts from the program:
# the commands from "Commands:" of `mxk --help`, a command's subcommands from the
# "mxk COMMAND SUB" forms of its usage, and the options (two-space indented
# "  --name [VALUE]" lines) of `mxk --help` and `mxk COMMAND --help`. A value
# named FILE, DIR, PATH or PREFIX completes file names (directories for DIR).

# _mxk_options HELPTEXT: "--name" or "--name=METAVAR" per option line.
_mxk_options() {
    sed -n 's/^  \(-[A-Za-z], \)\{0,1\}\(--[a-z0-9-]*\)\( [^ ]*\)\{0,1\}.*/\2\3/p' <<<"$1" |
        sed 's/ /=/'
}

# _mxk_reply COMMAND...: COMPREPLY = the command's output lines (names with spaces intact).
_mxk_reply() {
    mapfile -t COMPREPLY < <("$@")
}

_mxk() {
    local cur=${COMP_WORDS[COMP_CWORD]} prev=${COMP_WORDS[COMP_CWORD - 1]}
    local mxk=${COMP_WORDS[0]} cmd="" sub="" i w opts o meta
    local global
    global=$("$mxk" --help 2>/dev/null) || return 0
    # The command: the first word that is neither an option nor an option's value.
    local takes_value=" "
    for o in $(_mxk_options "$global"); do
        [[ $o == *=* ]] && takes_value+="${o%%=*} "
    done
    for ((i = 1; i < COMP_CWORD; i++)); do
        w=${COMP_WORDS[i]}
        if [[ $w == -* ]]; then
            [[ $takes_value == *" $w "* ]] && ((i++))
        elif [[ -z $cmd ]]; then
            cmd=$w
        elif [[ -z $sub ]]; then
            sub=$w
        fi
    done
    local help=$global
    [[ -n $cmd ]] && help=$("$mxk" "$cmd" --help 2>/dev/null)$'\n'$global
    opts=$(_mxk_options "$help")
    # The value of an option: file names where the metavar asks for one.
    if [[ $prev == --* ]]; then
        meta=$(sed -n "s/^${prev}=//p" <<<"$opts" | head -n 1)
        if [[ -n $meta ]]; then
            case $meta in
            DIR) _mxk_reply compgen -d -- "$cur" ;;
            *FILE* | PATH | PREFIX) _mxk_reply compgen -f -- "$cur" ;;
            *) COMPREPLY=() ;;
            esac
            return 0
        fi
    fi
    if [[ $cur == -* ]]; then
        _mxk_reply compgen -W "$(sed 's/=.*//' <<<"$opts" | sort -u)" -- "$cur"
    elif [[ -z $cmd ]]; then
        _mxk_reply compgen -W "$(sed -n '/^Commands:/,/^$/s/^  \([a-z][a-z0-9-]*\) .*/\1/p' \
            <<<"$global")" -- "$cur"
    else
        local subs
        subs=$(sed -n "s/^\(usage: \)\{0,1\} *mxk $cmd \[\{0,1\}\([a-z][a-z-]*\)[] ].*/\2/p" <<<"$help" |
            sort -u)
        if [[ -n $subs && -z $sub ]]; then
            _mxk_reply compgen -W "$subs" -- "$cur"
        else
            _mxk_reply compgen -f -- "$cur"
        fi
    fi
    return 0
}
complete -F _mxk mxk
