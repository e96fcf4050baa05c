# stepcast-completion.bash - bash completion for the stepcast CLI: commands,
# their options, and the values of options that take a choice, a file or a
# folder. `make install` puts it in PREFIX/share/bash-completion/completions/
# (bash-completion loads it on first use); or source it from ~/.bashrc.
#
# The commands and options are read from the tool itself, `stepcast help`
# and `stepcast help COMMAND` (the binary being completed, so build/stepcast
# completes its own), never listed here: a command or option added to the
# CLI completes without a change to this file. Only the values of --gpu and
# --op and the --scale classes are listed here.

# Commands, one a line, from `stepcast help`.
_stepcast_commands() {
    "$1" help 2>/dev/null | awk '/^commands:/ { on = 1; next } on && /^  [a-z]/ { print $1 } on && /^$/ { exit }'
}

# "OPTION VALUE" per option of a command's usage line; VALUE is "-" for a
# flag, else the usage's placeholder (FILE, N, ...) or its choices (a|b|c).
_stepcast_options() {
    "$1" help "$2" 2>/dev/null | head -n 1 | awk '{
        gsub(/\|-/, " | -")
        for (i = 1; i <= NF; i++) {
            t = $i
            sub(/^[[(]+/, "", t)
            if (t !~ /^-/) continue
            name = t
            gsub(/[])]+$/, "", name)
            value = "-"
            if (t !~ /[])]$/ && i < NF && $(i + 1) !~ /^[[(|-]/) {
                value = $(i + 1)
                gsub(/[])]+(\.\.\.)?$/, "", value)
            }
            print name, value
        }
    }'
}

_stepcast() {
    local cur=${COMP_WORDS[COMP_CWORD]} prev=${COMP_WORDS[COMP_CWORD - 1]}
    local bin=${COMP_WORDS[0]} cmd="" i
    COMPREPLY=()
    bin=${bin/#\~/$HOME}
    command -v -- "$bin" >/dev/null 2>&1 || return 0
    for ((i = 1; i < COMP_CWORD; i++)); do
        if [[ ${COMP_WORDS[i]} != -* ]]; then
            cmd=${COMP_WORDS[i]}
            break
        fi
    done
    if [[ -z $cmd ]]; then
        COMPREPLY=($(compgen -W "$(_stepcast_commands "$bin") --help --version" -- "$cur"))
        return 0
    fi
    case $cmd in
    help)
        [[ $COMP_CWORD -eq $((i + 1)) ]] && COMPREPLY=($(compgen -W "$(_stepcast_commands "$bin")" -- "$cur"))
        return 0
        ;;
    version) return 0 ;;
    esac

    # Every command but help and version also takes these.
    local table
    table="$(_stepcast_options "$bin" "$cmd")
--max-memory SIZE
--jobs N
-j N
--verbose -
-v -
--quiet -
-q -
--progress -"
    local name value
    # The value of the option before the cursor.
    while read -r name value; do
        [[ $prev == "$name" && $value != - ]] || continue
        case $value in
        *\|*) COMPREPLY=($(compgen -W "${value//|/ }" -- "$cur")) ;;
        FILE | PREFIX) COMPREPLY=($(compgen -f -- "$cur")) ;;
        DIR) COMPREPLY=($(compgen -d -- "$cur")) ;;
        NAME) COMPREPLY=($(compgen -W "a100 a100-80gb h100 h200 gh200 b200 mi300x v100 v100-16gb" -- "$cur")) ;;
        OP) COMPREPLY=($(compgen -W "all_reduce all_gather reduce_scatter all_to_all broadcast reduce send_recv gather scatter" -- "$cur")) ;;
        CLASS=FACTOR)
            COMPREPLY=($(compgen -W "compute= comm= cpu= gemm= attention= gpu=" -- "$cur"))
            compopt -o nospace 2>/dev/null
            ;;
        esac
        return 0
    done <<<"$table"
    if [[ $cur == -* ]]; then
        COMPREPLY=($(compgen -W "$(printf '%s\n' "$table" | awk '{ print $1 }')" -- "$cur"))
        return 0
    fi
    # Traces: files and folders.
    COMPREPLY=($(compgen -f -- "$cur"))
    compopt -o filenames 2>/dev/null
    return 0
}

complete -F _stepcast stepcast
